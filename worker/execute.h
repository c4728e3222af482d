/*
 * execute.h - one execution: from EXECUTE to its RESULT.
 *
 * Owns the state of one request and its reply: the execute_request, what
 * arrives on iopub and shell dispatched (streams to exec_stream.h, rich
 * outputs to exec_rich.h), clear_output, the error with an ANSI-free
 * traceback, output lost in a gap of the kernel's message numbers, the
 * deadlines route.c acts on, and the RESULT (ipc_msg.h). It sends nothing
 * itself: route.c moves messages in and out, and runs the timeout, the
 * interrupts and the kill after the grace.
 */
#ifndef WORKER_EXECUTE_H
#define WORKER_EXECUTE_H

#include <stdint.h>

#include <json-c/json.h>

#include "exec_rich.h"
#include "exec_stream.h"
#include "ipc_msg.h"
#include "jupyter.h"
#include "spill.h"

/* Defaults of EXECUTE's output_limit (characters) and rich_limit (bytes). */
#define EXEC_OUTPUT_LIMIT 50000
#define EXEC_RICH_LIMIT (5u * 1024 * 1024)

/*
 * How long iopub may stay silent after execute_reply before the worker
 * probes it (kernel_info_request, whose status follows our idle on iopub),
 * and how long after the probe before the execution ends without its
 * status idle. Long, because a kernel starved of CPU on a busy host may
 * take seconds to flush its output; a broken channel is rare (a single
 * message over KERNEL_IOPUB_MAX_MSG).
 */
#define EXEC_PROBE_AFTER_S 2.0
#define EXEC_IDLE_WAIT_S 30.0


/*
 * ipykernel ignores SIGINT until it has begun a request, so an interrupt
 * sent between our execute_request and its start is lost: until the reply,
 * the interrupt is sent again this often.
 */
#define EXEC_REINTERRUPT_S 0.5

/* The limits of one execution (EXECUTE) and where overflow goes. */
struct exec_limits {
	size_t output_chars;	/* per stream, in characters */
	size_t rich_bytes;	/* per rich output */
	size_t inline_bytes;	/* per rich output kept in the result; 0: no limit */
	int binary_files;	/* binary rich outputs saved under outputs/rich/ too */
	struct spill_place place; /* borrowed from the worker's START */
};

struct exec {
	uint32_t id;		/* the supervisor's request id */
	char *code;
	double timeout_s;	/* 0: none */
	int silent;		/* Jupyter's silent: no history, no execute_result */
	int stream;		/* send stream chunks as OUTPUT (someone watches) */
	int kernel_restarted;	/* runs in a fresh kernel after a death */
	char **allow_mime;	/* EXECUTE's (owned), or NULL: START's */
	char msg_id[JUPYTER_MSG_ID_MAX]; /* of execute_request; "" until sent */
	char probe_id[JUPYTER_MSG_ID_MAX]; /* kernel_info_request probing iopub, or "" */
	double t_start;		/* when execute_request was sent (monotonic) */
	double deadline;	/* timeout; 0 if none or already passed */
	double answer_by;	/* the RESULT goes out by then: deadline + grace; 0: none */
	double grace_deadline;	/* kill if still busy then; 0 if not timing out */
	double reinterrupt_at;	/* interrupt again then if no reply yet; 0: not stopping */
	int timed_out;
	int cancelled;		/* interrupted on INTERRUPT: killed after the grace too */
	double rescue_s;	/* EXECUTE's: how long a checkpoint before the kill may take */
	double rescue_deadline;	/* SIGUSR2 sent: killed then if still alive; 0: not yet */
	unsigned long oom_base;	/* the kernel cgroup's OOM kills when it started */
	int got_reply, got_idle;
	double quiet_since;	/* last execute_reply or iopub message of ours */
	unsigned long lost_messages; /* kernel messages that never arrived (at least) */
	/*
	 * The numbers of the kernel's messages seen since the request, for
	 * Jupyter sessions that number them ("<session>_<pid>_<n>", as
	 * jupyter_client does): a gap between status busy and status idle is
	 * output the kernel's iopub socket dropped (its high-water mark).
	 */
	char *seq_prefix;	/* "<session>_<pid>_" of our first message */
	unsigned long long *seq, seq_min, seq_max;
	size_t nseq, seq_cap;
	char *lost_reason;	/* why output was lost; NULL if none was */
	char *reply_status;	/* "ok", "error", "aborted" */
	struct json_object *reply_content;

	struct exec_limits lim;
	struct exec_stream out, err;
	struct exec_rich rich;	   /* rich outputs and the value (exec_rich.h) */
	struct json_object *error; /* {type, message, traceback} or NULL */
	int clear_pending;	   /* clear_output(wait=True) seen */

	int allow_stdin;	   /* EXECUTE's stdin: input() asks the supervisor */
	double input_since;	   /* monotonic s: an input_request waits for its reply; 0: none */
	double stdin_wait_s;	   /* seconds input_requests waited so far */
	int password_refused;	   /* a password prompt was answered with end of input */
};

/* What exec_on_iopub() made of a message. */
enum exec_event {
	EXEC_IGNORED,	/* not ours, or nothing to collect */
	EXEC_COLLECTED,
	EXEC_STREAM,	/* a stream chunk: forward content name/text as OUTPUT */
};

/*
 * A new execution of `code` (copied) with limits `lim` (copied; its place
 * is borrowed and must outlive the execution). Caller owns it: exec_free().
 */
struct exec *exec_new(uint32_t id, const char *code, double timeout_s,
		      const struct exec_limits *lim);
void exec_free(struct exec **exp);
/*
 * The content of an execute_request running `code` (copied): a silent one
 * keeps no history. Caller owns it (json_object_put).
 */
struct json_object *exec_request_build(const char *code, int silent, int stop_on_error);
/* The content of the execution's execute_request (allow_stdin as EXECUTE
 * asked); caller owns it. */
struct json_object *exec_request_content(const struct exec *ex);
/* Record that execute_request `msg_id` was sent now. */
void exec_started(struct exec *ex, const char *msg_id, double now);

/* Collect an iopub message; `allow_mime` (NULL-terminated; NULL: every
 * type) is borrowed. */
enum exec_event exec_on_iopub(struct exec *ex, const struct jupyter_msg *m,
			      char *const *allow_mime);
/*
 * Fill *o, the OUTPUT (ipc_msg.h) for stream message m, its text capped at
 * the output limit with a note saying how much of the chunk was not
 * streamed. Caller frees it with ipc_output_free().
 */
void exec_output_chunk(const struct exec *ex, const struct jupyter_msg *m, struct ipc_output *o);
/*
 * The request streams from now on: its stream chunks go out as OUTPUT, and
 * its result leaves out what the supervisor was streamed (out_streamed).
 */
void exec_watch(struct exec *ex);
/*
 * Fill *s, the STREAMING (ipc_msg.h) that starts streaming mid-call: what
 * the result keeps of stdout and stderr so far, with a note for a stream
 * already cut. Caller frees it with ipc_streaming_free().
 */
void exec_streaming(const struct exec *ex, struct ipc_streaming *s);
/* Collect a shell message; 1 if it was our execute_reply. */
int exec_on_shell(struct exec *ex, const struct jupyter_msg *m);
/* 1 once both execute_reply and status idle have arrived. */
int exec_done(const struct exec *ex);
/*
 * Whether an interrupted execution ended without its reply: a
 * KeyboardInterrupt that lands in ipykernel's own handler (after it began
 * the request, before the code or after it) is caught there, and the
 * kernel goes idle without answering. The reply, sent before the idle on
 * another socket, is given EXEC_REINTERRUPT_S to arrive.
 */
int exec_ended_unanswered(const struct exec *ex, double now);
/*
 * When to stop waiting for status idle (monotonic), or 0 while the reply
 * has not come. Past it, the caller calls exec_lose_output and finishes.
 */
double exec_idle_deadline(const struct exec *ex);
/*
 * Record that at least `messages` kernel messages of this execution were
 * lost, and why (copied). The result then carries output_lost and says so.
 */
void exec_lose_output(struct exec *ex, unsigned long messages, const char *reason);

/* Replace the error (type and message copied; the traceback is kept). */
void exec_set_error(struct exec *ex, const char *type, const char *message);
/*
 * Fill *r, the RESULT (ipc_msg.h) as of `now`; caller frees it with
 * ipc_result_free(). The collected outputs move into it: call once.
 * Whenever output was lost (a message never arrived, a spill file could
 * not take it all), it has output_lost and a line in stderr saying so.
 */
void exec_result(struct exec *ex, double now, struct ipc_result *r);
/*
 * Fill *r, a RESULT with no output, only an error of `type` and `message`.
 * Caller frees it with ipc_result_free().
 */
void exec_error_result(const char *type, const char *message, struct ipc_result *r);

#endif
