/*
 * pool_exec.c - one execution on a worker: EXECUTE out, then OUTPUT,
 * STREAMING and RESULT back (see pool_exec.h). Owns the calls' ids and
 * their lifecycle on the worker side of the supervisor: starting, waiting
 * with the worker's silence bounded, streaming on demand, interrupting,
 * completing.
 *
 * Output streams only while someone watches: EXECUTE carries stream when
 * the call was watched from the start (progress notifications); a poll
 * that begins later sends STREAM, and the worker answers with STREAMING
 * (what came before) ahead of every later OUTPUT, so each byte arrives
 * once and in order. Otherwise stdout and stderr come once, in the RESULT.
 */
#include "autoconf.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "kernel_env_rules.h"
#include "kernelspec.h"
#include "log.h"
#include "metrics.h"
#include "pool_exec.h"
#include "pool_send.h"
#include "result.h"
#include "xmalloc.h"

static const struct config *cfg;
static uint32_t next_call_id = 1;

void
pool_exec_init(const struct config *c)
{
	cfg = c;
}

/*
 * Member `key` of result is the first `streamed` bytes (member key_streamed,
 * which goes) of what the call was streamed, then what it holds.
 */
static void
unstream(struct json_object *result, const char *key, const struct buf *streamed)
{
	char member[32];
	snprintf(member, sizeof(member), "%s_streamed", key);
	size_t n = (size_t)json_object_get_int64(json_object_object_get(result, member));
	if (n == 0)
		return;
	json_object_object_del(result, member);
	struct json_object *rest = json_object_object_get(result, key);
	struct buf b;
	buf_init(&b);
	buf_add(&b, streamed->data, n);
	buf_add(&b, json_object_get_string(rest), (size_t)json_object_get_string_len(rest));
	json_object_object_add(result, key, json_object_new_string_len(b.data, (int)b.len));
	buf_free(&b);
}

int
pool_exec_result_check(struct worker *w, const struct ipc_result *r, char *why, size_t why_len)
{
	const struct call *c = w->call;

	if (r->out_streamed <= c->out.len && r->err_streamed <= c->err.len)
		return 0;
	snprintf(why, why_len, "sent RESULT for request %u that says %llu bytes of stdout and "
		 "%llu of stderr were streamed, of %zu and %zu", c->id,
		 (unsigned long long)r->out_streamed, (unsigned long long)r->err_streamed,
		 c->out.len, c->err.len);
	return -1;
}

void
pool_exec_complete(struct worker *w, struct json_object *result)
{
	struct call *c = w->call;
	if (c == NULL) {
		json_object_put(result);
		return;
	}
	/* A worker that died during a look at outputs/ (pool_reap.c). */
	if (c->kind != CALL_EXECUTE) {
		pool_exec_file(w, result, -1);
		return;
	}
	unstream(result, "stdout", &c->out);
	unstream(result, "stderr", &c->err);
	/* spill_files is for the daemon's counters, not for the client. */
	metrics_add(METRICS_SPILL_FILES,
		    (uint64_t)json_object_get_int64(json_object_object_get(result, "spill_files")));
	json_object_object_del(result, "spill_files");
	/* stdin_wait_s goes in the timings (job_timings). */
	c->stdin_wait_s = json_object_get_double(json_object_object_get(result, "stdin_wait_s"));
	json_object_object_del(result, "stdin_wait_s");
	metrics_result(result);
	c->result = result;
	c->returned = clock_mono();
	c->done = 1;
	c->changes++;
	w->call = NULL;
	pthread_cond_broadcast(&c->cond);
}

void
pool_exec_file(struct worker *w, struct json_object *answer, int fd)
{
	struct call *c = w->call;

	if (c == NULL) {
		json_object_put(answer);
		if (fd != -1)
			close(fd);
		return;
	}
	c->result = answer;
	c->fd = fd;
	c->returned = clock_mono();
	c->done = 1;
	c->changes++;
	w->call = NULL;
	pthread_cond_broadcast(&c->cond);
}

/* Send the message of a call that looks at outputs/; 0 or -1 with errno. */
static int
send_file_call(struct worker *w, struct call *c, const char *path)
{
	if (c->kind == CALL_FILE_LIST)
		return worker_send(w, IPC_FILE_LIST, c->id, NULL);
	if (c->kind == CALL_FILE_WRITE)
		return worker_send(w, IPC_FILE_WRITE, c->id, c->write);
	struct ipc_file_open o = {.path = (char *)path};
	return worker_send(w, IPC_FILE_OPEN, c->id, &o);
}

void
pool_execute_start(struct worker *w, struct call *c, const char *code, double timeout_s,
		   int silent)
{
	c->id = next_call_id++;
	/* A worker that answers as ipc_msg.h promises has answered by then
	 * (one second more than rescue_s: the kernel's own kill, and its
	 * reaping). */
	c->timeout_s = timeout_s;
	if (silent || !kernelspec_is_ipykernel(cfg))
		c->rescue_s = 0;
	c->kill_deadline = clock_deadline(timeout_s + IPC_EXEC_GRACE_S + IPC_EXEC_ANSWER_S +
					  (c->rescue_s > 0 ? c->rescue_s + 1 : 0));
	if (w->state == WORKER_DEAD) {
		char *msg = xasprintf("the session's kernel worker is gone (%s); "
				      "start a new session", w->death ? w->death : "exited");
		c->result = result_failed("WorkerDied", msg);
		c->done = 1;
		free(msg);
		return;
	}
	w->call = c;
	c->sent = clock_mono();
	/* Asked before it started: EXECUTE says so, nothing came before. */
	if (c->stream == CALL_STREAM_ASKED)
		c->stream = CALL_STREAM_ON;
	if (c->kind != CALL_EXECUTE) {
		if (send_file_call(w, c, code) == -1) {
			log_warn("send %s to worker %d",
				 c->kind == CALL_FILE_LIST   ? "FILE_LIST"
				 : c->kind == CALL_FILE_OPEN ? "FILE_OPEN"
							     : "FILE_WRITE",
				 (int)w->pid);
			pool_exec_file(w, result_failed("WorkerDied", "cannot reach the session's "
								      "kernel worker"), -1);
		}
		return;
	}
	struct ipc_execute e = {
		.code = ipc_text_of(code),
		.timeout_s = timeout_s,
		.silent = silent,
		.output_limit = (uint64_t)cfg->output_truncation_threshold,
		.rich_limit = (uint64_t)cfg->rich_output_max_bytes,
		.inline_limit = (uint64_t)cfg->inline_output_max_bytes,
		.binary_files = cfg->structured_binary == STRUCTURED_REFERENCE,
		.rescue_s = c->rescue_s,
		.stream = c->stream == CALL_STREAM_ON,
		.allow_stdin = c->allow_stdin,
		/* Every time, so a reloaded allow_mime applies to running kernels. */
		.allow_mime = kernel_env_mime(cfg, c->allow_mime),
	};
	if (worker_send(w, IPC_EXECUTE, c->id, &e) == -1) {
		log_warn("send EXECUTE to worker %d", (int)w->pid);
		pool_exec_complete(w, result_failed("WorkerDied",
						    "cannot reach the session's kernel worker"));
	}
	strv_free(e.allow_mime);
}

/* The worker gave no answer by its deadline: stopped, or broken. */
static void
kill_silent(struct worker *w, struct call *c)
{
	char *msg = xasprintf("the session's kernel worker gave no answer within %g s (the "
			      "call's timeout and %d s of grace) and was killed with its "
			      "kernel; start a new session",
			      c->timeout_s, IPC_EXEC_GRACE_S + IPC_EXEC_ANSWER_S);

	worker_kill(w, "it gave no result by the call's timeout and grace");
	if (c->kind != CALL_EXECUTE)
		pool_exec_file(w, result_failed("WorkerDied", msg), -1);
	else
		pool_exec_complete(w, result_failed("WorkerDied", msg));
	free(msg);
}

void
pool_exec_waiting(struct worker *w, const struct ipc_waiting *wt)
{
	struct call *c = w->call;

	c->kill_deadline = clock_deadline(wt->seconds + c->timeout_s + IPC_EXEC_GRACE_S +
					  IPC_EXEC_ANSWER_S + (c->rescue_s > 0 ? c->rescue_s + 1 : 0));
	pthread_cond_broadcast(&c->cond);
}

int
pool_execute_wait(struct worker *w, struct call *c, double seconds, int on_change)
{
	struct timespec until = seconds < 0 ? c->kill_deadline : clock_deadline(seconds);
	unsigned long seen = c->changes;

	while (!c->done) {
		if (on_change && c->changes != seen)
			return 0;
		/* Read each time: WAITING moves kill_deadline. */
		const struct timespec *d = seconds < 0 ? &c->kill_deadline
						       : clock_earlier(&c->kill_deadline, &until);
		if (pthread_cond_timedwait(&c->cond, pool_mutex(), d) != ETIMEDOUT)
			continue;
		if (d != &c->kill_deadline)
			return 0;
		struct timespec now = clock_deadline(0);
		if (clock_earlier(&now, &c->kill_deadline) == &now)
			continue; /* moved while we woke */
		kill_silent(w, c);
	}
	return 1;
}

void
pool_execute(struct worker *w, struct call *c, const char *code, double timeout_s, int silent)
{
	pool_execute_start(w, c, code, timeout_s, silent);
	pool_execute_wait(w, c, -1, 0);
}

void
pool_interrupt(struct worker *w)
{
	if (w->call && w->state != WORKER_DEAD &&
	    worker_send(w, IPC_INTERRUPT, w->call->id, NULL) == -1)
		log_warn("send INTERRUPT to worker %d", (int)w->pid);
}

void
pool_stream(struct worker *w, struct call *c)
{
	if (w->call != c || c->stream != CALL_STREAM_OFF || w->state == WORKER_DEAD)
		return;
	if (worker_send(w, IPC_STREAM, c->id, NULL) == -1) {
		log_warn("send STREAM to worker %d", (int)w->pid);
		return;
	}
	c->stream = CALL_STREAM_ASKED;
}

/* Add text `t` to `b`, one of c's streams, and wake whoever watches `c`. */
static void
call_add(struct call *c, struct buf *b, const struct ipc_text *t)
{
	buf_add(b, t->s ? t->s : "", t->len);
	c->changes++;
	pthread_cond_broadcast(&c->cond);
}

int
pool_exec_output(struct worker *w, const struct ipc_output *o, char *why, size_t why_len)
{
	struct call *c = w->call;

	if (c->stream != CALL_STREAM_ON) {
		snprintf(why, why_len, "sent OUTPUT for request %u, which does not stream", c->id);
		return -1;
	}
	call_add(c, o->name == IPC_STDERR ? &c->err : &c->out, &o->text);
	return 0;
}

int
pool_exec_streaming(struct worker *w, const struct ipc_streaming *s, char *why, size_t why_len)
{
	struct call *c = w->call;

	if (c->stream != CALL_STREAM_ASKED) {
		snprintf(why, why_len, "sent STREAMING for request %u, not asked to stream",
			 c->id);
		return -1;
	}
	c->stream = CALL_STREAM_ON;
	buf_add(&c->err, s->err.s ? s->err.s : "", s->err.len);
	call_add(c, &c->out, &s->out);
	return 0;
}

int
pool_exec_input(struct worker *w, const struct ipc_input_request *rq, char *why, size_t why_len)
{
	struct call *c = w->call;

	if (!c->allow_stdin || c->input_prompt) {
		snprintf(why, why_len, "sent INPUT_REQUEST for request %u, which %s", c->id,
			 c->allow_stdin ? "waits for an answer already" : "did not allow stdin");
		return -1;
	}
	c->input_prompt = xstrdup(rq->prompt.s ? rq->prompt.s : "");
	c->input_id[0] = '\0';
	if (!c->asker) {
		pool_input_reply(c, INPUT_EOF, NULL); /* a job: no client to ask */
		return 0;
	}
	c->changes++;
	pthread_cond_broadcast(&c->cond);
	return 0;
}

/* The worker running call c, or NULL. */
static struct worker *
worker_of(const struct call *c)
{
	for (struct worker *w = pool.workers; w; w = w->next)
		if (w->call == c && w->state != WORKER_DEAD)
			return w;
	return NULL;
}

void
pool_input_reply(struct call *c, enum input_answer how, const char *value)
{
	struct ipc_input_reply r = {.eof = how == INPUT_EOF, .cancel = how == INPUT_CANCEL};
	struct worker *w;

	if (c->input_prompt == NULL)
		return;
	free(c->input_prompt);
	c->input_prompt = NULL;
	c->input_id[0] = '\0';
	if (c->input_to) {
		void (*to)(void *, int, const char *) = c->input_to;
		c->input_to = NULL;
		to(c->input_to_arg, (int)how, how == INPUT_VALUE ? value : NULL);
		return;
	}
	if (how == INPUT_VALUE)
		r.value = ipc_text_of(value);
	if ((w = worker_of(c)) && worker_send(w, IPC_INPUT_REPLY, c->id, &r) == -1)
		log_warn("send INPUT_REPLY to worker %d", (int)w->pid);
}

int
pool_input_answer(const char *rpc_id, enum input_answer how, const char *value)
{
	for (struct worker *w = pool.workers; w; w = w->next) {
		struct call *c = w->call;
		if (c && c->input_prompt && c->input_id[0] && strcmp(c->input_id, rpc_id) == 0) {
			pool_input_reply(c, how, value);
			c->changes++;
			pthread_cond_broadcast(&c->cond);
			return 0;
		}
	}
	return -1;
}
