/*
 * ipc.h - the whole supervisor <-> worker protocol.
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

#define IPC_VERSION 2 /* 2: START sandbox fields, EXECUTE output limits */
#define IPC_HDR_LEN 16
/* Large enough for a result holding several big images. */
#define IPC_MAX_PAYLOAD (64u * 1024 * 1024)
#define IPC_WORKER_FD 3

enum ipc_type {
	/* supervisor -> worker: 1..31 */
	IPC_START = 1,		/* launch the kernel: see "START payload" below */
	IPC_EXECUTE = 2,	/* {code, timeout_s, silent?}; id names the request */
	IPC_INTERRUPT = 3,	/* {}; interrupt request `id` */
	IPC_RESTART_KERNEL = 4, /* {}; kill the kernel and start a fresh one */
	IPC_SHUTDOWN = 5,	/* {}; end the kernel and exit */

	/* worker -> supervisor: 32..63 */
	IPC_READY = 32,	       /* {kernel_pid, language, restarted} */
	IPC_OUTPUT = 33,       /* {name: "stdout"|"stderr", text}; a chunk of request id */
	IPC_RESULT = 34,       /* the result of request id (seed 003 shape, below) */
	IPC_KERNEL_DIED = 35,  /* {pid, exit_code|signal, message, memory_limit_exceeded?};
				  kernel died while idle */
	IPC_LOG = 36,	       /* {priority, message}; a log line of the worker */
	IPC_START_FAILED = 37, /* {message}; the kernel could not be started */
};

/*
 * START payload:
 *   argv         [string]  kernel command; "{connection_file}" is replaced
 *   env          {name: value}  the kernel's complete environment
 *   cwd          string    working directory of the kernel (exists)
 *   runtime_dir  string    private 0700 directory for the connection file
 *                          and the ipc sockets (created by the worker)
 *   allow_mime   [string]  MIME types kept in rich_outputs
 *   interrupt_mode "signal" | "message"
 *   startup_timeout_s number
 *   network_mode "inherit" | "isolated" | "seccomp" (optional, default
 *                inherit): kernel_network_mode, see worker/sandbox.h and
 *                doc/README.privsep. seccomp needs argv[0] absolute.
 *   uid, gid     integers (optional, together, never 0): run the kernel
 *                under this host identity with no supplementary group. The
 *                worker must run as root; the supervisor has made cwd owned
 *                by uid/gid, mode 0700, under a directory the uid can
 *                traverse (0711). The worker gives runtime_dir and the
 *                connection file to uid/gid. It needs root, or CAP_SETUID,
 *                CAP_SETGID, CAP_CHOWN, CAP_DAC_OVERRIDE (spill files in the
 *                kernel's cwd) and CAP_KILL, with an empty bounding set.
 *   limits       {memory_mb, pids, cpu, nofile, fsize_mb} (optional; each
 *                0 or absent: no limit). memory_mb, pids and cpu (share of
 *                one core) need "cgroup"; nofile and fsize_mb become hard
 *                RLIMIT_NOFILE and RLIMIT_FSIZE (fsize_mb also caps spill
 *                files). A limit that cannot be enforced fails the START.
 *   cgroup       {name, memory|pids|cpu: {version: 1|2, parent: dir}}
 *                (optional): cgroup_layout_json() of common/cgroup.h, with
 *                name unique per worker, e.g. "k-<runtime id>".
 *   A kernel killed by its memory limit is reported as error.type
 *   MemoryLimitExceeded (RESULT) or memory_limit_exceeded: true
 *   (KERNEL_DIED).
 *
 * EXECUTE payload:
 *   code string, timeout_s number (0: none), silent bool (optional: run
 *   without history or execute_result, for the daemon's own queries; streams
 *   still come back)
 *   output_limit number (optional, characters; 0 or absent: 50000): stdout
 *                and stderr each keep this many characters in the RESULT;
 *                past it the stream ends with a marker saying how many
 *                characters were cut and naming the file under
 *                "codeexecd-output/" in cwd that holds the whole stream
 *                (written as the output arrives). OUTPUT chunks are cut to
 *                the same length, with a note.
 *   rich_limit   number (optional, bytes; 0 or absent: 5 MiB): a rich output
 *                larger than this is saved under "codeexecd-output/" (images
 *                base64-decoded, e.g. .png, .jpg) and replaced in
 *                rich_outputs by a text/plain note naming the file.
 *   Spill files belong to the kernel's uid/gid when START gave one.
 *
 * RESULT payload:
 *   success bool, stdout string, stderr string,
 *   rich_outputs [{mime_type, data}] (image data is base64 without
 *   whitespace), error {type, message, traceback}|null,
 *   execution_time number (seconds), kernel_restarted bool (this call ran in a
 *   fresh kernel because the previous one died or was killed: variables were
 *   lost).
 *   output_lost {messages?, bytes?, reason} (only when output was lost:
 *   kernel messages that never arrived, at least; bytes no file could take).
 *   value any (only when the code displayed IPC_VALUE_MIME): that JSON.
 *   error.type is the Python exception's name, or one of the worker's own:
 *   Busy, TimeoutError, KernelDied, MemoryLimitExceeded, OutputTooLarge.
 */
#define IPC_VALUE_MIME "application/vnd.codeexecd.value+json"

struct ipc_hdr {
	uint16_t version;
	uint16_t type;
	uint32_t flags; /* reserved, 0 */
	uint32_t id;
	uint32_t len;
};

/* One decoded frame. The caller owns `payload` (json_object_put). */
struct ipc_msg {
	struct ipc_hdr hdr;
	struct json_object *payload;
};

/* Incremental reader of one stream socket. */
struct ipc_reader {
	int fd;
	struct buf in;
};

/* Printable name of a message type, "unknown" if not one. */
const char *ipc_type_name(unsigned type);
/* Nonzero if `type` is a known message type. */
int ipc_type_valid(unsigned type);

/* Encode a header into out[IPC_HDR_LEN]. */
void ipc_hdr_encode(const struct ipc_hdr *h, unsigned char *out);
/* Decode and check a header; 0 if valid, else -1 with *err set. */
int ipc_hdr_decode(const unsigned char *in, struct ipc_hdr *h, const char **err);

/*
 * Build a complete frame into `out` (appended). `payload` is borrowed and may
 * be NULL. Returns 0, or -1 with *err set if the payload is too large.
 */
int ipc_frame(struct buf *out, unsigned type, uint32_t id, struct json_object *payload,
	      const char **err);
/* Send one frame, blocking until written. 0, or -1 with errno set. */
int ipc_send(int fd, unsigned type, uint32_t id, struct json_object *payload);

void ipc_reader_init(struct ipc_reader *r, int fd);
void ipc_reader_free(struct ipc_reader *r);
/*
 * Read what the socket has now (one read). Returns bytes read, 0 at EOF,
 * -1 with errno on error (EAGAIN included when non-blocking).
 */
ssize_t ipc_reader_fill(struct ipc_reader *r);
/*
 * Take the next complete frame from what was read. Returns 1 and fills *msg,
 * 0 if more bytes are needed, -1 on a protocol error with *err set.
 */
int ipc_reader_next(struct ipc_reader *r, struct ipc_msg *msg, const char **err);
/*
 * Decode one frame from a byte string: the same checks as the reader, for
 * callers and tests that hold whole frames. Returns bytes used, 0 if
 * incomplete, -1 with *err on a protocol error.
 */
ssize_t ipc_decode(const unsigned char *data, size_t len, struct ipc_msg *msg, const char **err);
/* Release a message's payload. */
void ipc_msg_clear(struct ipc_msg *msg);

#endif
