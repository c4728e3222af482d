/*
 * pool_exec.h - one execution on a worker (pool_exec.c): EXECUTE out
 * through pool_send.h, and OUTPUT, STREAMING and RESULT back, handed over
 * by pool_io.c's dispatch. Callers outside the pool reach it through
 * pool.h. Lock held for all of it, unless said.
 */
#ifndef SUPERVISOR_POOL_EXEC_H
#define SUPERVISOR_POOL_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "ipc_msg.h"
#include "pool_state.h"

struct config;

/* Remember the configuration (borrowed), for EXECUTE's limits. */
void pool_exec_init(const struct config *cfg);

/*
 * Run `code` on `w` and wait for its result, which lands in c->result
 * (the RESULT payload, or a result describing why there is none). Lock held
 * on entry and exit (released while waiting). `silent` runs it without
 * history or execution count, for the daemon's own queries.
 */
void pool_execute(struct worker *w, struct call *c, const char *code, double timeout_s,
		  int silent);
/*
 * pool_execute in two steps, for a caller that does other things while it
 * waits: pool_execute_start queues EXECUTE (streaming when c->stream is
 * not off) and returns at once; pool_execute_wait waits at most `seconds`
 * (<0: until the result), or when `on_change` until c->changes moves (an
 * output, the end, a wake of its driver), and returns 1 once c->done.
 * Lock held.
 */
void pool_execute_start(struct worker *w, struct call *c, const char *code, double timeout_s,
			int silent);
int pool_execute_wait(struct worker *w, struct call *c, double seconds, int on_change);
/*
 * Someone now watches call `c`, running on `w`: ask the worker to stream
 * its output (STREAM; c->stream turns on when STREAMING brings what came
 * before). Nothing if it streams already or is no longer w's. Lock held.
 */
void pool_stream(struct worker *w, struct call *c);
/* Ask the kernel of `w` to interrupt the execution in flight. Lock held. */
void pool_interrupt(struct worker *w);

/*
 * Complete the file call in flight on `w` (FILES or FILE) with `answer`,
 * its payload (consumed), and `fd` (consumed; -1: none).
 */
void pool_exec_file(struct worker *w, struct json_object *answer, int fd);
/*
 * Complete the call in flight on `w` with `result` (consumed); the text it
 * says was streamed (stdout_streamed, stderr_streamed) is put back in from
 * what the call holds.
 */
void pool_exec_complete(struct worker *w, struct json_object *result);
/*
 * RESULT for the call in flight on `w` (borrowed): -1 with `why` when it
 * says more was streamed than the call was sent: the worker lied.
 */
int pool_exec_result_check(struct worker *w, const struct ipc_result *r, char *why,
			   size_t why_len);
/*
 * OUTPUT and STREAMING for the call in flight on `w` (the message is
 * borrowed): add it to what the call streamed. -1 with `why` when the call
 * does not stream (OUTPUT) or did not ask to (STREAMING): the worker lied.
 */
int pool_exec_output(struct worker *w, const struct ipc_output *o, char *why, size_t why_len);
int pool_exec_streaming(struct worker *w, const struct ipc_streaming *s, char *why,
			size_t why_len);
/*
 * WAITING for the call in flight on `w`: its kernel is starting, so the
 * worker is given the start's limit on top of the call's timeout and grace.
 */
void pool_exec_waiting(struct worker *w, const struct ipc_waiting *wt);

/*
 * INPUT_REQUEST of w's call: keep the prompt for the call's asker and
 * wake it, or, with no asker, answer end of input now. 0, or -1 with why
 * when the call did not allow stdin or a prompt is pending already.
 */
int pool_exec_input(struct worker *w, const struct ipc_input_request *rq, char *why,
		    size_t why_len);

/* How a prompt was answered: a line, end of input, an interrupt. */
enum input_answer { INPUT_VALUE, INPUT_EOF, INPUT_CANCEL };

/*
 * Answer call c's pending prompt (value borrowed, for INPUT_VALUE) and
 * forget it; nothing if none is pending. The kernel's prompt is answered
 * to its worker; the front's own (c->input_to) to its input_to. Lock held.
 */
void pool_input_reply(struct call *c, enum input_answer how, const char *value);
/*
 * Answer the prompt asked under JSON-RPC id `rpc_id`, whichever call it
 * is; 0, or -1 if no call waits for that id. Lock held.
 */
int pool_input_answer(const char *rpc_id, enum input_answer how, const char *value);

#endif
