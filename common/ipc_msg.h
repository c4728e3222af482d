/*
 * ipc_msg.h - the typed codec of every IPC payload (ipc.h frames them):
 * one struct and one encode/decode pair per message type. No other file
 * reads or writes the JSON of a payload. It is built of ipc_schema.c (the
 * field tables), ipc_decode.c and ipc_encode.c, which share ipc_schema.h.
 *
 * Adding a field (say RESULT's output_lost):
 *   1. add the member to the message's struct below, with its meaning;
 *   2. add one line for it to that message's field table in ipc_schema.c
 *      (IPC_F_BOOL, IPC_F_INT, IPC_F_U64, IPC_F_DOUBLE, IPC_F_STR,
 *      IPC_F_TEXT, IPC_F_STRV, IPC_F_ENUM, IPC_F_OBJ, IPC_F_LIST...: JSON
 *      name, member, bounds, IPC_REQ or IPC_OPT); a nested object is a
 *      struct of its own with its own table (see struct ipc_limits);
 *   3. bump IPC_VERSION in ipc.h;
 *   4. set the field in the sample message of tests/unit/test_ipc_msg.c,
 *      so the round trip covers it, and add a case for its bounds.
 * Decoding, the type and bounds checks, encoding and freeing all follow
 * from the table; a rule between fields goes in the message's check
 * function in ipc_schema.c.
 *
 * What every decoder enforces: the frame is of the expected type; the
 * payload is a JSON object (or empty, for the messages without fields);
 * every IPC_REQ field is present; every field has its JSON type (an
 * integer is an integer: not 1.5, not "1") and lies within its bounds;
 * strings of kind STR hold no NUL; no member the table does not name is
 * present. Anything else is a protocol error: the supervisor kills that
 * worker, the worker exits.
 *
 * Optional fields (IPC_OPT) decode to zero (NULL, 0, false, the enum's
 * first value) when absent, and are left out of the JSON when zero.
 *
 * Ownership: a decoded struct owns everything it points to; release it
 * with ipc_<name>_free() (also after a failed decode). An encoder only
 * borrows the struct. Structs a caller fills for encoding are never
 * passed to ipc_<name>_free() unless their pointers are owned.
 */
#ifndef COMMON_IPC_MSG_H
#define COMMON_IPC_MSG_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "buf.h"
#include "cgroup.h"
#include "ipc.h"
#include "netmode.h"

/* Room for a decoder's complaint: "<TYPE>: <field>: <what is wrong>". */
#define IPC_ERR_LEN 256

/* Bytes of free text, which may hold NUL (kernel output, code, messages). */
struct ipc_text {
	char *s;    /* NUL-terminated after len; may be NULL when len is 0 */
	size_t len;
};

/* ---- supervisor -> worker ---- */

/* IPC_UPSTREAM_REPLY: the front's answer (JSON) to UPSTREAM_CALL `seq`. */
struct ipc_upstream_reply {
	int seq;
	struct ipc_text reply;
};

enum ipc_interrupt_mode { IPC_INTERRUPT_SIGNAL, IPC_INTERRUPT_MESSAGE };

/* START's "limits": 0 is "no limit" for each. */
struct ipc_limits {
	uint64_t memory_mb; /* needs "cgroup" */
	uint64_t pids;	    /* tasks; needs "cgroup" */
	double cpu;	    /* share of one core; needs "cgroup" */
	uint64_t nofile;    /* hard RLIMIT_NOFILE */
	uint64_t fsize_mb;  /* hard RLIMIT_FSIZE, also caps spill files */
};

/* One controller of START's "cgroup". */
struct ipc_cgroup_ctl {
	int version;  /* 1 or 2 */
	char *parent; /* absolute: the directory holding kernels' groups */
};

/* START's "cgroup": where the kernel's group `name` goes, per controller. */
struct ipc_cgroup {
	char *name; /* one path component of [A-Za-z0-9._-], unique per worker */
	struct ipc_cgroup_ctl *memory, *pids, *cpu, *freezer; /* NULL: unusable */
};

/* IPC_START: launch the kernel. */
struct ipc_start {
	char **argv;	   /* kernel command, non-empty; "{connection_file}" is replaced */
	char **env;	   /* the kernel's whole environment, "NAME=value" (an object on the wire) */
	char *cwd;	   /* absolute working directory of the kernel (exists) */
	char *runtime_dir; /* absolute, private 0700, made by the worker: connection file, sockets */
	char **allow_mime; /* MIME types kept in rich_outputs; NULL: every type */
	enum ipc_interrupt_mode interrupt_mode;
	double startup_timeout_s; /* 0: the worker's default */
	enum net_mode network_mode; /* seccomp needs argv[0] absolute */
	/*
	 * Run the kernel as uid/gid (together, never 0; 0: keep the worker's)
	 * with no supplementary group. The worker must then be root or hold
	 * CAP_SETUID, CAP_SETGID, CAP_CHOWN, CAP_DAC_OVERRIDE and CAP_KILL; the
	 * supervisor made cwd theirs (0700) under a traversable directory.
	 */
	uint32_t uid, gid;
	struct ipc_limits *limits; /* NULL: none. A limit that cannot be enforced fails START */
	struct ipc_cgroup *cgroup; /* NULL: no cgroup (then memory_mb, pids, cpu must be 0) */
	char *warm_code; /* run once, not silent and without history, before READY; NULL: none */
	/*
	 * "NAME=PATH" items (NULL: none): before each kernel start the worker
	 * connects to the Unix socket PATH and the kernel inherits that
	 * connection, its number in NAME. For seccomp kernels, which may
	 * connect() nowhere: a sidecar's descriptor broker (relay.h).
	 */
	char **unix_fds;
	/* Code mode: the kernel gets a line to the front (CODEEXEC_UPSTREAM_FD). */
	int upstreams;
	/*
	 * The session's egress proxy socket (NULL: none): an isolated kernel
	 * gets a forwarder listening on 127.0.0.1:NET_EGRESS_PORT inside its
	 * network namespace that relays each connection to it.
	 */
	char *egress_socket;
	/*
	 * Confine the kernel with Landlock at this ABI before the exec (0: not):
	 * it fails to start when this host offers less. hide_paths: the
	 * daemon's absolute paths (its configuration, state_dir, runtime_dir)
	 * the kernel may not reach even where it reads the directories above
	 * them; its own cwd and runtime_dir below them stay its own.
	 */
	int landlock_abi;
	char **hide_paths;
};

/*
 * IPC_EXECUTE: run code; the header's id names the request, and its OUTPUT
 * and RESULT carry that id.
 *
 * timeout_s runs from the execute_request's sending to the kernel (a
 * kernel still starting sends WAITING first). At its end the kernel is
 * interrupted, and killed after IPC_EXEC_GRACE_S if still busy; the
 * RESULT is sent by then whatever the kernel does. The supervisor allows
 * IPC_EXEC_ANSWER_S more for it to arrive (and WAITING's seconds), then
 * judges the worker stuck and kills it.
 */
#define IPC_EXEC_GRACE_S 5
#define IPC_EXEC_ANSWER_S 3
struct ipc_execute {
	struct ipc_text code;
	double timeout_s;      /* 0: none */
	int silent;	       /* no history, no execute_result (the daemon's own queries) */
	/*
	 * Characters of stdout and stderr each kept in the RESULT (0: 50000);
	 * past it the stream ends with a marker naming the file under
	 * "codeexecd-output/" in cwd that holds the whole stream. OUTPUT
	 * chunks are cut to the same length, with a note.
	 */
	uint64_t output_limit;
	/* Bytes of one rich output (0: 5 MiB); a larger one is saved under
	 * "codeexecd-output/" and replaced by a text/plain note naming it. */
	uint64_t rich_limit;
	/*
	 * Send stdout and stderr as OUTPUT chunks as they come (someone
	 * watches the call). Without it they come once, in the RESULT, unless
	 * a STREAM for the request asks for them later.
	 */
	int stream;
	/* MIME types kept in rich_outputs for this execution, replacing
	 * START's allow_mime; NULL: START's. */
	char **allow_mime;
	/*
	 * Bytes of one rich output kept in the RESULT (0: no limit): a larger
	 * one is saved under outputs/rich/ and the RESULT names its file
	 * instead (ipc_rich's file), up to rich_limit.
	 */
	uint64_t inline_limit;
	/* Save every binary rich output (images, PDF) under outputs/rich/
	 * too, its data kept while under inline_limit (structured_binary). */
	int binary_files;
	/*
	 * A kernel that ignores the interrupt is sent SIGUSR2 first and given
	 * this many seconds more to end on its own (0: killed at once): the
	 * daemon's checkpoint cell armed a handler that saves the namespace
	 * and exits with IPC_RESCUE_SAVED, or IPC_RESCUE_NOT_SAVED when the
	 * checkpoint failed. The supervisor waits that much longer.
	 */
	double rescue_s;
	/*
	 * The client can answer a prompt: the kernel gets allow_stdin, and an
	 * input() of the code comes as INPUT_REQUEST, the kernel waiting for
	 * INPUT_REPLY (within timeout_s). Without it input() raises
	 * StdinNotImplementedError in the kernel, as Jupyter's does.
	 */
	int allow_stdin;
};
#define IPC_RESCUE_SAVED 86
#define IPC_RESCUE_NOT_SAVED 87

/*
 * IPC_INTERRUPT (stop request `id`), IPC_RESTART_KERNEL (kill the kernel,
 * start a fresh one), IPC_SHUTDOWN (end the kernel and exit) and
 * IPC_STREAM (send request `id`'s output as it comes from now on) carry no
 * fields: their payload is empty. A STREAM for a request that is not
 * running, or that streams already, is ignored; otherwise the worker
 * answers with STREAMING before any OUTPUT of that request.
 */

/*
 * IPC_FILE_OPEN: open file `path` of the session's outputs/ directory and
 * answer with FILE, passing the open descriptor. The worker opens it one
 * component at a time below outputs/, never following a link; "..",
 * absolute paths, links, FIFOs, devices and sockets are refused (FILE with
 * error). IPC_FILE_LIST (no fields) asks for FILES.
 */
struct ipc_file_open {
	char *path; /* relative to outputs/ */
};

/*
 * IPC_FILE_WRITE: write `data` to file `path` below the kernel's working
 * directory, as the kernel's identity, atomically (a new file in the same
 * directory, renamed over the name), and answer with FILE (no descriptor).
 * The directories on the way are walked as FILE_OPEN walks them; a name
 * that is not a regular file of the kernel's identity is refused.
 */
struct ipc_file_write {
	char *path;	     /* relative to cwd, "/"-separated */
	struct ipc_text data; /* the bytes, base64 (standard alphabet) */
	uint32_t mode;	     /* permission bits, within 0755 */
};

/*
 * IPC_INPUT_REPLY: the answer to request id's INPUT_REQUEST: the line
 * `value` (without its newline), or `eof` (input() raises EOFError: the
 * client declined), or `cancel` (the kernel is interrupted: input()
 * raises KeyboardInterrupt). At most one of them; none is an empty line.
 * One reply per request, and only while one is pending: the worker
 * ignores any other.
 */
struct ipc_input_reply {
	struct ipc_text value;
	int eof;
	int cancel;
};

/* ---- worker -> supervisor ---- */

/*
 * IPC_READY: a kernel is up. Sent once after START, and again whenever the
 * worker replaces its kernel (RESTART_KERNEL, a kernel that died or was
 * killed after a timeout): the supervisor checks kernel_pid is a child of
 * that worker leading its own process group, and signals nothing else.
 */
struct ipc_ready {
	int kernel_pid;
	char *language;
	int restarted; /* not the first kernel of this worker */
	char *language_version; /* kernel_info_reply's language_info.version; NULL: none */
};

enum ipc_stream { IPC_STDOUT, IPC_STDERR };

/* IPC_OUTPUT: a chunk of a stream of request id, for progress; sent only
 * while the request streams (EXECUTE's stream, or after STREAMING). */
struct ipc_output {
	enum ipc_stream name;
	struct ipc_text text;
};

/*
 * IPC_STREAMING: request id streams from now on; here is what it printed
 * before (what its result keeps so far: after a clear_output, only what
 * came since; past output_limit, the kept part and a note). Every later
 * chunk comes as OUTPUT, so each byte reaches the supervisor once.
 */
struct ipc_streaming {
	struct ipc_text out; /* "stdout" */
	struct ipc_text err; /* "stderr" */
};

/* One of RESULT's rich_outputs: its data, its file, or both. */
struct ipc_rich {
	char *mime_type;
	/* The data: base64 text without whitespace for images, text, or any
	 * JSON value for JSON types. Owned reference; NULL: only in `file`. */
	struct json_object *data;
	/* The output's bytes saved under outputs/: the path relative to it,
	 * their count and sha256 (lower-case hex); NULL: not saved. */
	char *file;
	uint64_t size_bytes;
	char *sha256;
};

/* RESULT's error. */
struct ipc_exec_error {
	/* The exception's name, or the worker's own: Busy, TimeoutError,
	 * KernelDied, MemoryLimitExceeded, OutputTooLarge, Cancelled, Aborted. */
	struct ipc_text type;
	struct ipc_text message;
	struct ipc_text traceback; /* ANSI-free */
};

/* RESULT's output_lost: what the result could not keep, and why. */
struct ipc_output_lost {
	uint64_t messages; /* kernel messages that never arrived, at least */
	uint64_t bytes;	   /* bytes no spill file took */
	struct ipc_text reason;
};

/* RESULT's dropped_mime holds at most this many types. */
#define IPC_DROPPED_MAX 64

/* IPC_RESULT: the result of request id, in the shape of seed 003. */
struct ipc_result {
	int success;
	struct ipc_text out; /* "stdout" */
	struct ipc_text err; /* "stderr" */
	struct ipc_rich *rich; /* "rich_outputs", n_rich of them */
	size_t n_rich;
	struct ipc_exec_error *error; /* NULL: null */
	double execution_time;	      /* seconds */
	/* This call ran in a fresh kernel because the previous one died:
	 * variables were lost. */
	int kernel_restarted;
	struct ipc_output_lost *output_lost; /* "output_lost"; NULL: nothing lost */
	/* "value": the last display of IPC_VALUE_MIME; NULL: none (or null). */
	struct json_object *value;
	/* MIME types outputs carried but allow_mime did not keep, each once,
	 * at most IPC_DROPPED_MAX; NULL: none. */
	char **dropped_mime;
	/* Outputs this call saved to spill files (streams past their limit,
	 * rich outputs too large), for the daemon's counters; the supervisor
	 * takes it out of the result before anyone sees it. */
	uint64_t spill_files;
	/* Regular files of outputs/ the call created or changed; NULL: none. */
	struct ipc_artifact *artifacts;
	size_t n_artifacts;
	int artifacts_truncated; /* outputs/ holds more than the worker looked at */
	/*
	 * Bytes the supervisor already holds: the result's stdout is the first
	 * out_streamed bytes the request streamed on stdout (STREAMING, then
	 * OUTPUT) followed by `out`; the same for stderr. 0: `out` is whole. A
	 * streamed call's output crosses the socket once (issue 27).
	 */
	uint64_t out_streamed;
	uint64_t err_streamed;
	/* Seconds the kernel waited for INPUT_REPLYs (0: none); the supervisor
	 * moves it into the result's timings. */
	double stdin_wait_s;
};

/* One regular file of outputs/: RESULT's artifacts, FILES' items. */
struct ipc_artifact {
	char *name;	  /* relative to outputs/, "/"-separated */
	uint64_t size_bytes;
	char *mime_type;
	char *modified_at; /* ISO 8601, UTC, "2026-12-01T13:45:00Z" */
};

/* Files of outputs/ that FILES and RESULT name at most (a larger tree is cut). */
#define IPC_FILES_MAX 1000

/* IPC_FILES: the regular files under outputs/ (deepest levels and past
 * IPC_FILES_MAX left out: then truncated). */
struct ipc_files {
	struct ipc_artifact *files;
	size_t n_files;
	int truncated;
};

/*
 * IPC_FILE: FILE_OPEN's answer. Either `error` (no descriptor), or the
 * file's metadata with its descriptor (read only) attached to the frame.
 */
struct ipc_file {
	struct ipc_text error;	    /* why it cannot be opened; empty: it is open */
	struct ipc_artifact *file; /* NULL with error */
};

/*
 * IPC_WAITING: request id came while its kernel was not ready; it runs
 * once the kernel has started, within `seconds` (the start's limit) or
 * with START_FAILED's reason, and its timeout counts from then.
 */
struct ipc_waiting {
	double seconds;
};

/*
 * IPC_RESUMED: the first message on the socket of a front that took the
 * worker over (IPC_RESCUE_FD), sent once the worker is idle: an execution
 * the old front had asked for has ended, its result dropped. `kernel_pid`
 * is the kernel that now runs, 0 if none does (it died meanwhile: the
 * next EXECUTE starts one); `state_lost` that a kernel died since the
 * last RESULT, so the next one's namespace is new.
 */
struct ipc_resumed {
	int kernel_pid;
	int state_lost;
};

/*
 * IPC_INPUT_REQUEST: request id's code reads a line (input()); the kernel
 * waits for INPUT_REPLY. Sent only for an EXECUTE with allow_stdin, one at
 * a time. A password prompt (getpass) is never sent: the worker answers
 * it with end of input itself.
 */
struct ipc_input_request {
	struct ipc_text prompt;
};

/*
 * IPC_UPSTREAM_CALL: request id's code asks the front for something of
 * code mode (upstream.h): `request` is the kernel's own JSON, unread by
 * the worker, `seq` the kernel's number for it, which UPSTREAM_REPLY
 * echoes. The kernel waits for the reply; several may be in flight.
 */
struct ipc_upstream_call {
	int seq;
	struct ipc_text request;
};

/* IPC_KERNEL_DIED: the kernel died while idle. */
struct ipc_kernel_died {
	int pid;
	int exit_code; /* when signal is 0 */
	int signal;    /* 0: it exited */
	struct ipc_text message;
	int memory_limit_exceeded;
};

/* IPC_LOG: a log line of the worker. */
struct ipc_log {
	int priority; /* syslog's, 0..7 */
	struct ipc_text message;
};

/* IPC_START_FAILED: the kernel could not be started; the worker exits. */
struct ipc_start_failed {
	struct ipc_text message;
};

/*
 * Generic forms, for code that dispatches on the type (the fuzz harness):
 * `msg` points to the struct of `type`. ipc_msg_size() is that struct's
 * size, 0 for the messages without fields.
 */
size_t ipc_msg_size(unsigned type);
/* Append the frame of msg to *out. 0, or -1 with why (invalid or oversized). */
int ipc_msg_encode(struct buf *out, unsigned type, uint32_t id, const void *msg,
		   char *why, size_t why_len);
/* Encode and write the frame (blocking). 0, or -1 with errno: EMSGSIZE
 * (over IPC_MAX_PAYLOAD, nothing written), EINVAL (invalid), or write's. */
int ipc_msg_send(int fd, unsigned type, uint32_t id, const void *msg);
/* Decode frame f of `type` into *msg (zeroed first). 0, or -1 with why[why_len]. */
int ipc_msg_decode(const struct ipc_msg *f, unsigned type, void *msg, char *why,
		   size_t why_len);
/* Release what a decode put in *msg and zero it. */
void ipc_msg_free(unsigned type, void *msg);
/*
 * ipc_msg_decode's checks without its copies, for a reader that only
 * looks, or hands on the payload itself (ipc_result_take): *msg's
 * strings, texts and JSON values point into f's payload (no reference
 * taken), so it is good while that payload lives and must not be changed.
 * 0, or -1 with why. Release it with ipc_msg_view_free(), which frees
 * only its own objects, lists and vectors.
 */
int ipc_msg_view(const struct ipc_msg *f, unsigned type, void *msg, char *why,
		 size_t why_len);
void ipc_msg_view_free(unsigned type, void *msg);

/*
 * The typed pairs, for each message NAME of type TYPE:
 *   int  ipc_NAME_encode(struct buf *out, uint32_t id, const struct ipc_NAME *m,
 *                        char *why, size_t why_len);
 *   int  ipc_NAME_send(int fd, uint32_t id, const struct ipc_NAME *m);
 *   int  ipc_NAME_decode(const struct ipc_msg *f, struct ipc_NAME *m, char *why,
 *                        size_t why_len);
 *   void ipc_NAME_free(struct ipc_NAME *m);
 * with the contracts of the generic forms above.
 */
#define IPC_MSG_CODEC(name, type)                                                              \
	static inline int ipc_##name##_encode(struct buf *out, uint32_t id,                  \
					      const struct ipc_##name *m, char *why,         \
					      size_t why_len)                                \
	{                                                                                      \
		return ipc_msg_encode(out, type, id, m, why, why_len);                         \
	}                                                                                      \
	static inline int ipc_##name##_send(int fd, uint32_t id, const struct ipc_##name *m)   \
	{                                                                                      \
		return ipc_msg_send(fd, type, id, m);                                          \
	}                                                                                      \
	static inline int ipc_##name##_decode(const struct ipc_msg *f, struct ipc_##name *m,   \
					      char *why, size_t why_len)                       \
	{                                                                                      \
		return ipc_msg_decode(f, type, m, why, why_len);                               \
	}                                                                                      \
	static inline void ipc_##name##_free(struct ipc_##name *m)                             \
	{                                                                                      \
		ipc_msg_free(type, m);                                                         \
	}

IPC_MSG_CODEC(start, IPC_START)
IPC_MSG_CODEC(execute, IPC_EXECUTE)
IPC_MSG_CODEC(ready, IPC_READY)
IPC_MSG_CODEC(output, IPC_OUTPUT)
IPC_MSG_CODEC(result, IPC_RESULT)
IPC_MSG_CODEC(kernel_died, IPC_KERNEL_DIED)
IPC_MSG_CODEC(waiting, IPC_WAITING)
IPC_MSG_CODEC(resumed, IPC_RESUMED)
IPC_MSG_CODEC(log, IPC_LOG)
IPC_MSG_CODEC(start_failed, IPC_START_FAILED)
IPC_MSG_CODEC(streaming, IPC_STREAMING)
IPC_MSG_CODEC(file_open, IPC_FILE_OPEN)
IPC_MSG_CODEC(file_write, IPC_FILE_WRITE)
IPC_MSG_CODEC(files, IPC_FILES)
IPC_MSG_CODEC(file, IPC_FILE)
IPC_MSG_CODEC(input_request, IPC_INPUT_REQUEST)
IPC_MSG_CODEC(input_reply, IPC_INPUT_REPLY)
IPC_MSG_CODEC(upstream_call, IPC_UPSTREAM_CALL)
IPC_MSG_CODEC(upstream_reply, IPC_UPSTREAM_REPLY)

/* The messages without fields: INTERRUPT, RESTART_KERNEL, SHUTDOWN, STREAM, FILE_LIST. */
int ipc_empty_encode(struct buf *out, unsigned type, uint32_t id, char *why, size_t why_len);
int ipc_empty_send(int fd, unsigned type, uint32_t id);
/* 0 if f is of `type` with an empty payload (or {}), else -1 with why. */
int ipc_empty_decode(const struct ipc_msg *f, unsigned type, char *why, size_t why_len);

/*
 * The seed 003 result document (what RESULT's payload holds) for the
 * supervisor's callers, who keep results as JSON. Caller owns it.
 */
struct json_object *ipc_result_json(const struct ipc_result *r);
/*
 * The same document for RESULT frame `f` once ipc_result_decode() or
 * ipc_msg_view() accepted it: the frame's own payload, moved out of `f` (caller owns it), so a
 * result is neither copied nor encoded again on its way to the client.
 * The decode refused every member and value the codec does not define.
 */
struct json_object *ipc_result_take(struct ipc_msg *f);

/*
 * START's cgroup for a layout, to encode: *out points into l, name and
 * ctl[] (the caller's), so it needs no freeing. Unusable controllers
 * (version 0) are left out.
 */
void ipc_cgroup_from_layout(struct ipc_cgroup *out, struct ipc_cgroup_ctl ctl[CGROUP_NCTL],
			    const struct cgroup_layout *l, const char *name);
/* A decoded START cgroup as a layout (copied; caller frees with cgroup_layout_free). */
void ipc_cgroup_to_layout(const struct ipc_cgroup *c, struct cgroup_layout *l);

/* Whether `name` may name a file below outputs/: relative, no empty, "." or ".." component. */
int ipc_artifact_name_ok(const char *name);

/* Text from a C string (borrowed), for filling structs to encode. */
struct ipc_text ipc_text_of(const char *s);

#endif
