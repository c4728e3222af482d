/*
 * route.c - where messages go: the kernel's (iopub, shell, control, stdin) to the
 * kernel's start-up or to the execution in flight, the supervisor's
 * (decoded by ipc_decode.c) to their handler; and the execution's own
 * deadlines. An execution ends here, in route_finish_exec(), whatever
 * ended it.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "b64.h"
#include "cgroup.h"
#include "clock.h"
#include "json_member.h"
#include "log.h"
#include "memtrim.h"
#include "upstream_link.h"
#include "worker.h"
#include "xmalloc.h"

#define DEFAULT_STARTUP_TIMEOUT_S 60.0
/* Jupyter's end of input: ipykernel's input() raises EOFError on this value. */
#define INPUT_EOF "\x04"
#define PASSWORD_WHY                                                                  \
	"a password prompt (getpass) is never sent to the client (MCP forbids asking " \
	"for secrets in a form): the kernel was told its input ended"

#define DRAIN_MAX 256

/* 1 if the execution's error is of `type`. */
static int
error_is(const struct exec *ex, const char *type)
{
	struct json_object *t;

	return ex->error && json_object_object_get_ex(ex->error, "type", &t) &&
	       strcmp(json_object_get_string(t), type) == 0;
}

/* Answer request id with a result holding only an error of `type`. */
static void
reply_error(struct wstate *w, uint32_t id, const char *type, const char *message)
{
	struct ipc_result r;

	exec_error_result(type, message, &r);
	supervisor_send(w, IPC_RESULT, id, &r);
	ipc_result_free(&r);
}

/* Send the RESULT of the current execution and forget it. */
void
route_finish_exec(struct wstate *w)
{
	struct exec *ex = w->ex;

	int finished_ok = ex->reply_status && strcmp(ex->reply_status, "ok") == 0;
	/*
	 * A failed run during which the kernel's cgroup recorded an OOM kill
	 * failed for memory, whatever else happened meanwhile (a timeout, its
	 * interrupt, the kill after the grace, a cancel).
	 */
	if (!finished_ok && !error_is(ex, "MemoryLimitExceeded") && w->sb.cg &&
	    cgroup_oom_kills(w->sb.cg) > ex->oom_base) {
		struct json_object *msg = NULL;
		if (ex->error)
			json_object_object_get_ex(ex->error, "message", &msg);
		char *m = xasprintf("the kernel exceeded its memory limit of %llu MB and the memory cgroup's OOM killer acted%s%s",
				    (unsigned long long)w->sb.limits.memory_mb, msg ? ": " : "",
				    msg ? json_object_get_string(msg) : "");
		exec_set_error(ex, "MemoryLimitExceeded", m);
		free(m);
	}
	/*
	 * The interrupt's KeyboardInterrupt is our doing: report the timeout. A
	 * run that still ended "ok" finished before the interrupt took effect; a
	 * kernel that died meanwhile is reported as such.
	 */
	if (ex->timed_out && !finished_ok && !error_is(ex, "TimeoutError") &&
	    !error_is(ex, "KernelDied") && !error_is(ex, "MemoryLimitExceeded")) {
		char *m = xasprintf("Execution exceeded %g seconds", ex->timeout_s);
		exec_set_error(ex, "TimeoutError", m);
		free(m);
	}
	if (ex->password_refused && error_is(ex, "EOFError"))
		exec_set_error(ex, "EOFError", PASSWORD_WHY);
	if (ex->kernel_restarted)
		w->state_lost = 0;
	struct ipc_result r;
	exec_result(ex, clock_mono(), &r);
	outputs_changed(&w->place, &w->snap, &r);
	outputs_snap_free(&w->snap);
	/* Nothing is written when the frame is too big: answer anyway. */
	int rc = supervisor_send(w, IPC_RESULT, ex->id, &r);
	ipc_result_free(&r);
	if (rc == -1) {
		log_warnx("the result of request %u exceeds the IPC frame limit", ex->id);
		reply_error(w, ex->id, "OutputTooLarge",
			    "the result exceeds the size limit of one message");
	}
	size_t held = ex->out.kept.len + ex->err.kept.len + ex->rich.bytes;
	exec_free(&w->ex);
	/* A worker lives as long as its session: give a big result's memory back. */
	memtrim_after(held);
}

/* Send execute_request for the waiting execution. */
void
route_send_execute(struct wstate *w)
{
	char msg_id[JUPYTER_MSG_ID_MAX];
	struct json_object *c = exec_request_content(w->ex);
	int rc = jupyter_send(w->k->shell, &w->sess, "execute_request", c, msg_id);

	json_object_put(c);
	if (rc == -1) {
		exec_set_error(w->ex, "KernelDied", "cannot send the code to the kernel");
		route_finish_exec(w);
		return;
	}
	exec_started(w->ex, msg_id, clock_mono());
	w->ex->oom_base = w->sb.cg ? cgroup_oom_kills(w->sb.cg) : 0;
}

/* ---- Kernel messages ---- */

/* One message received on iopub. */
static void
on_iopub(struct wstate *w, const struct jupyter_msg *m)
{
	if (w->kstate == K_STARTING) {
		kernel_handshake_msg(w->k, "iopub", m);
		return;
	}
	if (w->ex == NULL)
		return;
	/* Chunks only for a watched call: otherwise the RESULT alone carries them. */
	char *const *allow = w->ex->allow_mime ? w->ex->allow_mime : w->allow_mime;
	if (exec_on_iopub(w->ex, m, allow) == EXEC_STREAM && w->ex->stream) {
		struct ipc_output o;
		exec_output_chunk(w->ex, m, &o);
		supervisor_send(w, IPC_OUTPUT, w->ex->id, &o);
		ipc_output_free(&o);
	}
}

/* One message received on shell. */
static void
on_shell(struct wstate *w, const struct jupyter_msg *m)
{
	if (w->kstate == K_STARTING)
		kernel_handshake_msg(w->k, "shell", m);
	else if (w->kstate == K_LOCKING || w->kstate == K_WARMING)
		lifecycle_prep_replied(w, m);
	else if (w->ex)
		exec_on_shell(w->ex, m);
}

/* Send input_reply `value` to the kernel's stdin; -1 logged. */
static int
input_reply(struct wstate *w, const char *value)
{
	struct json_object *c = json_object_new_object();

	json_object_object_add(c, "value", json_object_new_string(value));
	int rc = jupyter_send(w->k->stdin_sock, &w->sess, "input_reply", c, NULL);
	json_object_put(c);
	return rc;
}

/*
 * One message received on stdin: the running code's input_request goes to
 * the supervisor, but a password prompt, which is answered with end of
 * input here (EOFError in the code), and one the call did not allow.
 */
static void
on_stdin(struct wstate *w, const struct jupyter_msg *m)
{
	struct exec *ex = w->ex;
	struct json_object *pw;

	if (strcmp(m->msg_type, "input_request") != 0 || ex == NULL || ex->msg_id[0] == '\0' ||
	    m->parent_msg_id == NULL || strcmp(m->parent_msg_id, ex->msg_id) != 0) {
		log_debug("stdin: ignored %s, not for the execution in flight", m->msg_type);
		return;
	}
	int password = json_object_object_get_ex(m->content, "password", &pw) &&
		       json_object_get_boolean(pw);
	if (password || !ex->allow_stdin || ex->input_since > 0) {
		ex->password_refused |= password;
		input_reply(w, INPUT_EOF);
		return;
	}
	struct ipc_input_request rq = {ipc_text_of(json_member_str(m->content, "prompt"))};
	ex->input_since = clock_mono();
	supervisor_send(w, IPC_INPUT_REQUEST, ex->id, &rq);
}

/* Log a dropped kernel message. */
static void
dropped(struct wstate *w, const char *channel, enum jupyter_status st, const char *err)
{
	if (st == JUPYTER_EBADSIG)
		w->dropped++;
	log_warnx("dropped a message on %s: %s (%lu badly signed so far)", channel, err,
		  w->dropped);
}

/*
 * Receive the waiting messages on `sock` and hand each to `fn`. Stops when
 * none is left, after DRAIN_MAX (so a flooding kernel cannot starve fd 3 and
 * the timers: zmq_poll reports the rest at once), when the kernel changes
 * (restart) or when the worker quits. Returns 1 if it stopped at DRAIN_MAX.
 */
static int
drain(struct wstate *w, void *sock, const char *channel,
      void (*fn)(struct wstate *, const struct jupyter_msg *))
{
	struct kernel *k = w->k;
	struct jupyter_msg m;
	char err[ERR_LEN] = "";
	int n;

	for (n = 0; n < DRAIN_MAX && w->k == k && !w->quit; n++) {
		enum jupyter_status st = jupyter_recv(sock, k->signer, &m, err, sizeof(err));
		if (st == JUPYTER_EIO) {
			if (errno != EAGAIN)
				log_warnx("receive on %s: %s", channel, err);
			return 0;
		}
		if (st != JUPYTER_OK) {
			dropped(w, channel, st, err);
			continue;
		}
		if (fn)
			fn(w, &m);
		jupyter_msg_clear(&m);
		if (w->kstate == K_STARTING && kernel_ready(k))
			lifecycle_handshake_done(w);
		else if (w->ex && exec_done(w->ex))
			route_finish_exec(w);
	}
	return n == DRAIN_MAX;
}

void
route_drain_iopub(struct wstate *w)
{
	/* Everything already sent counts, but a kernel still flooding must not hold us. */
	for (int rounds = 0; rounds < 16 && w->k && drain(w, w->k->iopub, "iopub", on_iopub);
	     rounds++)
		;
}

int
route_kernel(struct wstate *w, const char *channel)
{
	if (strcmp(channel, "iopub") == 0)
		return drain(w, w->k->iopub, channel, on_iopub);
	if (strcmp(channel, "shell") == 0)
		return drain(w, w->k->shell, channel, on_shell);
	if (strcmp(channel, "stdin") == 0)
		return drain(w, w->k->stdin_sock, channel, on_stdin);
	return drain(w, w->k->control, channel, NULL);
}

/* ---- Supervisor messages ---- */

/*
 * Take w->spec and the rest of the worker's set-up from a decoded START
 * (emptied). 0, or -1 with why[why_len].
 */
static int
take_start(struct wstate *w, struct ipc_start *st, char *why, size_t why_len)
{
	struct kernel_spec *s = &w->spec;

	s->argv = st->argv;
	s->envp = st->env;
	s->cwd = st->cwd;
	s->runtime_dir = st->runtime_dir;
	w->allow_mime = st->allow_mime;
	w->warm_code = st->warm_code;
	st->warm_code = NULL;
	s->unix_fds = st->unix_fds;
	st->unix_fds = NULL;
	s->upstreams = st->upstreams;
	st->argv = st->env = st->allow_mime = NULL;
	st->cwd = st->runtime_dir = NULL;
	w->place.cwd = s->cwd;
	s->sb = &w->sb;
	if (sandbox_from_start(&w->sb, st, why, why_len) == -1)
		return -1;
	w->sb.hide_paths = st->hide_paths;
	st->hide_paths = NULL;
	w->place.chown = w->sb.has_id;
	w->place.uid = w->sb.uid;
	w->place.gid = w->sb.gid;
	w->place.max_bytes = (off_t)w->sb.fsize;
	s->interrupt_by_message = st->interrupt_mode == IPC_INTERRUPT_MESSAGE;
	/* 0: unset by the caller, and no kernel starts in 0 s */
	s->startup_timeout_s = st->startup_timeout_s > 0 ? st->startup_timeout_s
							 : DEFAULT_STARTUP_TIMEOUT_S;
	return 0;
}

static void
on_start(struct wstate *w, struct ipc_msg *m)
{
	struct ipc_start st;
	char err[ERR_LEN], why[ERR_LEN + 32];
	int rc;

	if (w->kstate != K_NONE) {
		worker_protocol_error(w, "second START");
		return;
	}
	w->after = AFTER_INITIAL;
	if (ipc_start_decode(m, &st, err, sizeof(err)) == -1) {
		snprintf(why, sizeof(why), "bad START payload: %s", err);
		lifecycle_start_failed(w, why);
		return;
	}
	rc = take_start(w, &st, err, sizeof(err));
	ipc_start_free(&st);
	if (rc == -1) {
		snprintf(why, sizeof(why), "bad START payload: %s", err);
		lifecycle_start_failed(w, why);
		return;
	}
	if (kernel_runtime_create(w->spec.runtime_dir) == -1) {
		w->after = AFTER_INITIAL;
		snprintf(why, sizeof(why), "cannot create runtime_dir %s: %s",
			 w->spec.runtime_dir, strerror(errno));
		lifecycle_start_failed(w, why);
		return;
	}
	w->runtime_made = 1;
	/* Every session has outputs/, its path in CODEEXECD_OUTPUT_DIR. */
	if (outputs_make(&w->place, why, sizeof(why)) == -1) {
		lifecycle_start_failed(w, why);
		return;
	}
	lifecycle_start(w, AFTER_INITIAL);
}

static void
on_execute(struct wstate *w, struct ipc_msg *m)
{
	struct ipc_execute e;
	char err[IPC_ERR_LEN];
	struct exec_limits lim = {.place = w->place};

	if (ipc_execute_decode(m, &e, err, sizeof(err)) == -1) {
		worker_protocol_error(w, err);
		return;
	}
	lim.output_chars = (size_t)e.output_limit;
	lim.rich_bytes = (size_t)e.rich_limit;
	lim.inline_bytes = (size_t)e.inline_limit;
	lim.binary_files = e.binary_files;
	if (w->ex) {
		ipc_execute_free(&e);
		reply_error(w, m->hdr.id, "Busy",
			    "another execution is running in this session; wait for it or interrupt it");
		return;
	}
	w->ex = exec_new(m->hdr.id, e.code.s, e.timeout_s, &lim);
	w->ex->silent = e.silent;
	w->ex->rescue_s = e.rescue_s;
	w->ex->allow_stdin = e.allow_stdin;
	if (e.stream)
		exec_watch(w->ex);
	w->ex->allow_mime = e.allow_mime;
	e.allow_mime = NULL;
	ipc_execute_free(&e);
	/* What outputs/ holds now: the result lists what the code changed. */
	if (!w->ex->silent)
		outputs_snap_take(&w->place, &w->snap);
	/* Lost state is told to the next call, even when its kernel is up already. */
	w->ex->kernel_restarted = w->state_lost;
	if (w->kstate == K_READY) {
		route_send_execute(w);
		return;
	}
	/* It runs once the kernel is ready: the supervisor waits for the start too. */
	struct ipc_waiting wt = {w->spec.startup_timeout_s};
	supervisor_send(w, IPC_WAITING, m->hdr.id, &wt);
	if (w->kstate == K_DEAD)
		lifecycle_start(w, AFTER_QUIET);
}

/*
 * INPUT_REPLY: the client's answer to the prompt in flight becomes the
 * kernel's input_reply; a cancel interrupts the code once (its input()
 * raises KeyboardInterrupt, which the code may catch and go on).
 */
static void
on_input_reply(struct wstate *w, struct ipc_msg *m)
{
	struct ipc_input_reply r;
	struct exec *ex = w->ex;
	char err[IPC_ERR_LEN];

	if (ipc_input_reply_decode(m, &r, err, sizeof(err)) == -1) {
		worker_protocol_error(w, err);
		return;
	}
	if (ex == NULL || ex->id != m->hdr.id || ex->input_since <= 0 || w->kstate != K_READY) {
		log_debug("INPUT_REPLY for request %u: no prompt waits", m->hdr.id);
		ipc_input_reply_free(&r);
		return;
	}
	ex->stdin_wait_s += clock_mono() - ex->input_since;
	ex->input_since = 0;
	if (r.cancel)
		kernel_interrupt(w->k, &w->sess, w->spec.interrupt_by_message);
	else
		input_reply(w, r.eof ? INPUT_EOF : (r.value.s ? r.value.s : ""));
	ipc_input_reply_free(&r);
}

/* Interrupt the execution in flight, and again until it answers. */
static void
interrupt_exec(struct wstate *w, double now)
{
	kernel_interrupt(w->k, &w->sess, w->spec.interrupt_by_message);
	w->ex->reinterrupt_at = now + EXEC_REINTERRUPT_S;
}

/*
 * INTERRUPT: cancellation means stop. An execution still waiting for its
 * kernel (a restart) never runs; a running one is interrupted and, like a
 * timeout, killed with its kernel if it is still busy after the grace.
 */
static void
on_interrupt(struct wstate *w, struct ipc_msg *m)
{
	struct exec *ex = w->ex;

	if (ex == NULL || ex->id != m->hdr.id) {
		log_debug("INTERRUPT for request %u: not running", m->hdr.id);
		return;
	}
	if (ex->msg_id[0] == '\0' || w->kstate != K_READY) {
		exec_set_error(ex, "Cancelled", "cancelled before it started");
		route_finish_exec(w);
		return;
	}
	double now = clock_mono();

	interrupt_exec(w, now);
	ex->cancelled = 1;
	if (ex->grace_deadline <= 0)
		ex->grace_deadline = now + IPC_EXEC_GRACE_S;
}

/*
 * STREAM: from now on the request's chunks go out as OUTPUT, after one
 * STREAMING with what came before, so each byte is sent once and in order.
 */
static void
on_stream(struct wstate *w, struct ipc_msg *m)
{
	struct ipc_streaming s;

	/* What the kernel sent before the poll belongs in the snapshot, not after it. */
	if (w->ex && w->kstate == K_READY)
		route_drain_iopub(w);
	if (w->ex == NULL || w->ex->id != m->hdr.id || w->ex->stream) {
		log_debug("STREAM for request %u: not running, or streaming already", m->hdr.id);
		return;
	}
	exec_watch(w->ex);
	exec_streaming(w->ex, &s);
	supervisor_send(w, IPC_STREAMING, w->ex->id, &s);
	ipc_streaming_free(&s);
}

static void
on_restart(struct wstate *w)
{
	if (w->ex && w->kstate == K_READY)
		route_drain_iopub(w); /* output so far belongs to the interrupted result */
	kernel_destroy(&w->k, &w->sess, 0);
	w->kstate = K_DEAD;
	if (w->ex) {
		exec_set_error(w->ex, "KernelDied", "kernel died: restarted on request");
		route_finish_exec(w);
	}
	w->state_lost = 0; /* the supervisor asked for it: nothing to report */
	lifecycle_start(w, AFTER_RESTART_CMD);
}

/* FILE_LIST: the files of outputs/. */
static void
on_file_list(struct wstate *w, struct ipc_msg *m)
{
	struct ipc_files f;

	outputs_list(&w->place, &f);
	supervisor_send(w, IPC_FILES, m->hdr.id, &f);
	ipc_files_free(&f);
}

/* FILE_OPEN: open one file of outputs/ safely and pass its descriptor. */
static void
on_file_open(struct wstate *w, struct ipc_msg *m)
{
	struct ipc_file_open o;
	struct ipc_file f = {0};
	struct ipc_artifact a = {0};
	char err[IPC_ERR_LEN], why[ERR_LEN];

	if (ipc_file_open_decode(m, &o, err, sizeof(err)) == -1) {
		worker_protocol_error(w, err);
		return;
	}
	int fd = outputs_open(&w->place, o.path, &a, why, sizeof(why));
	if (fd == -1) {
		f.error = ipc_text_of(why);
		supervisor_send(w, IPC_FILE, m->hdr.id, &f);
	} else {
		f.file = &a;
		supervisor_send_fd(w, IPC_FILE, m->hdr.id, &f, fd);
		close(fd);
	}
	free(a.name);
	free(a.mime_type);
	free(a.modified_at);
	ipc_file_open_free(&o);
}

/* FILE_WRITE: write an uploaded file below cwd as the kernel's identity. */
static void
on_file_write(struct wstate *w, struct ipc_msg *m)
{
	struct ipc_file_write o;
	struct ipc_file f = {0};
	struct ipc_artifact a = {0};
	char err[IPC_ERR_LEN], why[ERR_LEN];
	unsigned char *bytes = NULL;
	size_t len = 0;

	if (ipc_file_write_decode(m, &o, err, sizeof(err)) == -1) {
		worker_protocol_error(w, err);
		return;
	}
	/* The supervisor checked it; a frame that is not base64 is broken. */
	if (b64_decode(o.data.s, o.data.len, B64_STD, &bytes, &len) == -1) {
		ipc_file_write_free(&o);
		worker_protocol_error(w, "FILE_WRITE: data is not base64");
		return;
	}
	if (outputs_write(&w->place, o.path, bytes, len, o.mode, &a, why, sizeof(why)) == -1)
		f.error = ipc_text_of(why);
	else
		f.file = &a;
	supervisor_send(w, IPC_FILE, m->hdr.id, &f);
	free(a.name);
	free(a.mime_type);
	free(a.modified_at);
	free(bytes);
	ipc_file_write_free(&o);
}

/* Act on one frame from the supervisor. */
void
route_supervisor(struct wstate *w, struct ipc_msg *m)
{
	unsigned type = m->hdr.type;
	char err[IPC_ERR_LEN];

	log_debug("received %s id %u", ipc_type_name(type), m->hdr.id);
	if (m->has_fd) {
		worker_protocol_error(w, "a descriptor came with a frame");
	} else if ((type == IPC_SHUTDOWN || type == IPC_INTERRUPT ||
		    type == IPC_RESTART_KERNEL || type == IPC_STREAM || type == IPC_FILE_LIST) &&
	    ipc_empty_decode(m, type, err, sizeof(err)) == -1) {
		worker_protocol_error(w, err);
	} else if (type == IPC_SHUTDOWN) {
		w->quit = 1;
	} else if (type == IPC_START) {
		on_start(w, m);
	} else if (w->kstate == K_NONE) {
		worker_protocol_error(w, "a request before START");
	} else if (type == IPC_EXECUTE) {
		on_execute(w, m);
	} else if (type == IPC_INTERRUPT) {
		on_interrupt(w, m);
	} else if (type == IPC_RESTART_KERNEL) {
		on_restart(w);
	} else if (type == IPC_STREAM) {
		on_stream(w, m);
	} else if (type == IPC_FILE_LIST) {
		on_file_list(w, m);
	} else if (type == IPC_FILE_OPEN) {
		on_file_open(w, m);
	} else if (type == IPC_FILE_WRITE) {
		on_file_write(w, m);
	} else if (type == IPC_INPUT_REPLY) {
		on_input_reply(w, m);
	} else if (type == IPC_UPSTREAM_REPLY) {
		upstream_link_reply(w, m);
	} else {
		worker_protocol_error(w, "a worker-to-supervisor message type");
	}
}

/* ---- Timers ---- */

#define ANSWER_BY_WHY                                                                   \
	"the call's timeout and grace ran out after the kernel's reply, before its output " \
	"ended: what came later is not in this result"

double
route_timers(struct wstate *w, double now)
{
	struct exec *ex = w->ex;
	double next = -1;

	if (ex && w->kstate == K_READY && ex->msg_id[0]) {
		if (ex->deadline > 0 && now >= ex->deadline) {
			log_info("request %u exceeded %g s; interrupting", ex->id, ex->timeout_s);
			ex->deadline = 0;
			ex->timed_out = 1;
			ex->grace_deadline = now + IPC_EXEC_GRACE_S;
			interrupt_exec(w, now);
		}
		if (exec_ended_unanswered(ex, now)) {
			log_info("request %u: the kernel caught the interrupt in its own handler "
				 "and went idle without a reply", ex->id);
			exec_set_error(ex, "KeyboardInterrupt",
				       "interrupted before the code began or after it ended; "
				       "the kernel sent no reply");
			route_finish_exec(w);
			return 0;
		}
		if (ex->reinterrupt_at > 0 && now >= ex->reinterrupt_at && !ex->got_reply)
			interrupt_exec(w, now);
		if (ex->grace_deadline > 0 && now >= ex->grace_deadline) {
			lifecycle_kill_after_grace(w);
			return 0;
		}
		/* Replied, but its output has not ended: the caller's time is up. */
		if (ex->got_reply && ex->answer_by > 0 && now >= ex->answer_by) {
			log_warnx("request %u: no status idle by its timeout and grace; "
				  "answering without the rest of its output", ex->id);
			exec_lose_output(ex, 1, ANSWER_BY_WHY);
			route_finish_exec(w);
			return 0;
		}
		double idle = exec_idle_deadline(ex);
		/* Output still queued is late, not lost: a busy loop reads it next. */
		if (idle > 0 && now >= idle && kernel_iopub_pending(w->k)) {
			ex->quiet_since = now;
			idle = exec_idle_deadline(ex);
		}
		/*
		 * Silent since the reply: ask for kernel_info. Its status on iopub
		 * comes after our idle from the same queue, so once it arrives
		 * without ours, ours was dropped (execute.c); if nothing comes,
		 * the channel is broken.
		 */
		if (idle > 0 && now >= idle && ex->probe_id[0] == '\0') {
			if (jupyter_send(w->k->shell, &w->sess, "kernel_info_request", NULL,
					 ex->probe_id) == -1)
				snprintf(ex->probe_id, sizeof(ex->probe_id), "-"); /* wait it out */
			ex->quiet_since = now;
			idle = exec_idle_deadline(ex);
		}
		if (idle > 0 && now >= idle) {
			log_warnx("request %u: no status idle %g s after the reply; output lost",
				  ex->id, EXEC_IDLE_WAIT_S);
			exec_lose_output(ex, 1, KERNEL_LOST_OUTPUT_WHY);
			route_finish_exec(w);
			if (kernel_reopen_iopub(w->k, w->zctx) == -1)
				lifecycle_kill_broken(w);
			return 0;
		}
		/* Wake at the earliest of the timeout, the grace and the idle wait. */
		double d = ex->deadline;
		if (ex->grace_deadline > 0 && (d <= 0 || ex->grace_deadline < d))
			d = ex->grace_deadline;
		if (ex->reinterrupt_at > 0 && !ex->got_reply && (d <= 0 || ex->reinterrupt_at < d))
			d = ex->reinterrupt_at;
		if (idle > 0 && (d <= 0 || idle < d))
			d = idle;
		if (d > 0 && (next < 0 || d - now < next))
			next = d - now;
	}
	return next;
}
