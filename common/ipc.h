/*
 * ipc.h - the supervisor <-> worker protocol: message types, framing,
 * version. The payload of each type is a struct of ipc_msg.h.
 *
 * One AF_UNIX stream socketpair per worker; the worker's end is fd 3
 * (IPC_WORKER_FD). Every frame is a 16-byte header in network byte order
 * followed by `len` bytes of JSON payload (a JSON object, or empty).
 * A frame that is truncated, oversized, of unknown type, of the wrong
 * version or with an unparsable payload is a protocol error: the supervisor
 * then kills that worker, the worker exits.
 *
 * Bump IPC_VERSION whenever a message type or a payload changes. Retired
 * type numbers stay in the enum, marked unused, and are never reused.
 */
#ifndef COMMON_IPC_H
#define COMMON_IPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "buf.h"
#include "err.h"

/* 2: START sandbox fields, EXECUTE output limits. 3: the typed codec of
 * ipc_msg.h (unknown members refused), READY after every kernel start.
 * 4: START's cgroup.freezer (the group every kernel lives in).
 * 5: OUTPUT only while streamed: EXECUTE's stream, STREAM and STREAMING.
 * 6: EXECUTE's allow_mime, RESULT's dropped_mime. 7: START's warm_code.
 * 8: RESULT's spill_files, for /metrics. 9: outputs/: RESULT's artifacts,
 * FILE_LIST/FILES and FILE_OPEN/FILE (a descriptor passed with SCM_RIGHTS).
 * 10: START's unix_fds (sidecars' brokers for seccomp kernels).
 * 11: START's landlock_abi and hide_paths (kernel_landlock).
 * 12: WAITING (a call's kernel is starting: the supervisor waits longer).
 * 13: RESULT's stdout_streamed and stderr_streamed (a streamed prefix left out).
 * 14: READY's language_version (kernel_info_reply's).
 * 15: EXECUTE's inline_limit and binary_files; a rich output's file,
 * size_bytes and sha256 (data optional); FILE_WRITE (upload_file).
 * 16: RESUMED (a worker handed to a new front) and the parent's fd 4.
 * 17: EXECUTE's rescue_s (a checkpoint asked of a kernel before its kill).
 * 18: EXECUTE's stdin, INPUT_REQUEST and INPUT_REPLY (a kernel's input()
 * asked of the client), RESULT's stdin_wait_s.
 * 19: UPSTREAM_CALL and UPSTREAM_REPLY (code mode: a kernel's call of an
 * upstream MCP server's tool, made by the front), START's upstreams.
 * 20: START's egress_socket (an isolated kernel's forwarder to the egress proxy). */
#define IPC_VERSION 20
#define IPC_HDR_LEN 16
/* Large enough for a result holding several big images. */
#define IPC_MAX_PAYLOAD (64u * 1024 * 1024)
#define IPC_WORKER_FD 3
/*
 * The worker's line to the privileged parent (a SOCK_SEQPACKET socket):
 * the parent never writes on it but to hand the worker its socket to a
 * new front, after the front died (one byte, the socket attached). The
 * worker never writes on it; it ends when the parent does.
 */
#define IPC_RESCUE_FD 4

enum ipc_type {
	/* supervisor -> worker: 1..31 */
	IPC_START = 1,		/* launch the kernel (struct ipc_start) */
	IPC_EXECUTE = 2,	/* run code; id names the request (struct ipc_execute) */
	IPC_INTERRUPT = 3,	/* no fields; interrupt request `id` */
	IPC_RESTART_KERNEL = 4, /* no fields; kill the kernel and start a fresh one */
	IPC_SHUTDOWN = 5,	/* no fields; end the kernel and exit */
	IPC_STREAM = 6,		/* no fields; send request `id`'s output as it comes */
	IPC_FILE_LIST = 7,	/* no fields; list outputs/ (answer: FILES) */
	IPC_FILE_OPEN = 8,	/* open a file of outputs/ (struct ipc_file_open; answer: FILE) */
	IPC_FILE_WRITE = 9,	/* write a file below cwd (struct ipc_file_write; answer: FILE) */
	IPC_INPUT_REPLY = 10,	/* INPUT_REQUEST's answer (struct ipc_input_reply) */
	IPC_UPSTREAM_REPLY = 11, /* UPSTREAM_CALL's answer (struct ipc_upstream_reply) */

	/* worker -> supervisor: 32..63 */
	IPC_READY = 32,	       /* a kernel is up (struct ipc_ready) */
	IPC_OUTPUT = 33,       /* a chunk of request id's output (struct ipc_output) */
	IPC_RESULT = 34,       /* the result of request id (struct ipc_result) */
	IPC_KERNEL_DIED = 35,  /* the kernel died while idle (struct ipc_kernel_died) */
	IPC_LOG = 36,	       /* a log line of the worker (struct ipc_log) */
	IPC_START_FAILED = 37, /* the kernel could not be started (struct ipc_start_failed) */
	IPC_STREAMING = 38,    /* STREAM's answer: the output so far (struct ipc_streaming) */
	IPC_FILES = 39,	       /* FILE_LIST's answer (struct ipc_files) */
	IPC_FILE = 40,	       /* FILE_OPEN's answer, with the descriptor (struct ipc_file) */
	IPC_WAITING = 41,      /* request id waits for its kernel to start (struct ipc_waiting) */
	IPC_RESUMED = 42,      /* first on a new front's socket, once idle (struct ipc_resumed) */
	IPC_INPUT_REQUEST = 43, /* request id's code reads a line (struct ipc_input_request) */
	IPC_UPSTREAM_CALL = 44, /* request id's code calls an upstream (struct ipc_upstream_call) */
};

/*
 * Payloads: the struct of each message, its fields, their bounds and the
 * codec that alone reads and writes them are in ipc_msg.h.
 */
#define IPC_VALUE_MIME "application/vnd.codeexecd.value+json"

struct ipc_hdr {
	uint16_t version;
	uint16_t type;
	uint32_t flags; /* reserved, 0 */
	uint32_t id;
	uint32_t len;
};

/*
 * One decoded frame. The caller owns `payload` (json_object_put) and the
 * descriptor that came with it, if has_fd (ipc_msg_clear closes both).
 *
 * Descriptors: only FILE carries one. The sender attaches it (SCM_RIGHTS)
 * to the sendmsg() that writes the whole frame; Linux ends a recvmsg() on
 * a stream socket right after the bytes that carried descriptors, so the
 * descriptor belongs to the frame holding the last byte of the read that
 * brought it. A read bringing more than one, or a descriptor while one is
 * still waiting for its frame, is a protocol error.
 */
struct ipc_msg {
	struct ipc_hdr hdr;
	struct json_object *payload;
	int has_fd;
	int fd;
};

/* Storage a reader keeps between frames; a larger buffer is freed once empty. */
#define IPC_READER_KEEP (256u * 1024)

/* Incremental reader of one stream socket. */
struct ipc_reader {
	int fd;
	struct buf in;
	uint64_t taken;	   /* bytes consumed from `in` since the start */
	int passed_fd;	   /* a descriptor waiting for its frame, or -1 */
	uint64_t fd_end;   /* it came with the read ending at this byte (counted like taken) */
	int fd_error;	   /* a read brought descriptors it may not */
};

/* Printable name of a message type, "unknown" if not one. */
const char *ipc_type_name(unsigned type);
/* Nonzero if `type` is a known message type. */
int ipc_type_valid(unsigned type);

/* Encode a header into out[IPC_HDR_LEN]. */
void ipc_hdr_encode(const struct ipc_hdr *h, unsigned char *out);
/* Decode and check a header; 0 if valid, else -1 with why[why_len] set. */
int ipc_hdr_decode(const unsigned char *in, struct ipc_hdr *h, char *why, size_t why_len);

/*
 * Build a complete frame into `out` (appended). `payload` is borrowed and may
 * be NULL. Returns 0, or -1 with why[why_len] set if the payload is too large.
 */
int ipc_frame(struct buf *out, unsigned type, uint32_t id, struct json_object *payload,
	      char *why, size_t why_len);
/* Send one frame, blocking until written. 0, or -1 with errno set. */
int ipc_send(int fd, unsigned type, uint32_t id, struct json_object *payload);
/* Write len bytes (a built frame), blocking until written. 0, or -1 with errno. */
int ipc_write(int fd, const void *data, size_t len);
/*
 * Write a built frame with descriptor `pass` attached to its first byte
 * (SCM_RIGHTS), blocking until written. 0, or -1 with errno.
 */
int ipc_write_fd(int fd, const void *data, size_t len, int pass);

void ipc_reader_init(struct ipc_reader *r, int fd);
void ipc_reader_free(struct ipc_reader *r);
/*
 * Read what the socket has now (one recvmsg, which may bring a descriptor).
 * Returns bytes read, 0 at EOF, -1 with errno on error (EAGAIN included
 * when non-blocking; EPROTO when descriptors came that no frame may take).
 */
ssize_t ipc_reader_fill(struct ipc_reader *r);
/*
 * Take the next complete frame from what was read. Returns 1 and fills *msg,
 * 0 if more bytes are needed, -1 on a protocol error with why[why_len] set.
 */
int ipc_reader_next(struct ipc_reader *r, struct ipc_msg *msg, char *why, size_t why_len);
/*
 * Decode one frame from a byte string: the same checks as the reader, for
 * callers and tests that hold whole frames. Returns bytes used, 0 if
 * incomplete, -1 with why[why_len] on a protocol error.
 */
ssize_t ipc_decode(const unsigned char *data, size_t len, struct ipc_msg *msg, char *why,
		   size_t why_len);
/* Release a message's payload and close its descriptor, if any. */
void ipc_msg_clear(struct ipc_msg *msg);

#endif
