/*
 * main.c - codeexec-worker: entry point, IPC dispatch and the main loop.
 *
 * Owns the worker's state: the START parameters, the one kernel and its
 * life cycle (starting, ready, dead), the one execution in flight, and the
 * conversation with the supervisor on fd 3 (ipc.h). One zmq_poll loop
 * watches fd 3, the signal pipe, the kernel's sockets, its output pipe and
 * its pidfd. Setup order: not dumpable, log to the supervisor, signals,
 * ZeroMQ, loop; leaving the loop always ends the kernel.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zmq.h>

#include "clock.h"
#include "execute.h"
#include "ipc.h"
#include "ipc_msg.h"
#include "jupyter.h"
#include "kernel.h"
#include "log.h"
#include "sandbox.h"
#include "xmalloc.h"

#define DEFAULT_STARTUP_TIMEOUT_S 60.0
#define DRAIN_MAX 256

enum kstate {
	K_NONE,	    /* before START */
	K_STARTING, /* spawned, handshake running */
	K_LOCKING,  /* seccomp: handshake done, the kernel installs its filter */
	K_READY,
	K_DEAD,	    /* died or was killed; the next EXECUTE starts a new one */
};

/* What to tell the supervisor once a starting kernel is ready. */
enum after_start {
	AFTER_INITIAL,	   /* READY {restarted: false}; failure ends the worker */
	AFTER_RESTART_CMD, /* READY {restarted: true}; failure ends the worker */
	AFTER_QUIET,	   /* a restart for an execution or after a timeout kill */
};

struct worker {
	struct ipc_reader rd;
	struct kernel_spec spec;
	char **allow_mime;		/* NULL: keep every MIME type */
	struct spill_place place;	/* where executions spill what they cut */
	struct sandbox sb;		/* identity, limits, network mode */
	char lock_msg_id[JUPYTER_MSG_ID_MAX]; /* K_LOCKING: the lock's execute_request */
	int runtime_made;
	void *zctx;
	struct jupyter_session sess;
	struct kernel *k;
	enum kstate kstate;
	enum after_start after;
	struct exec *ex;     /* running, or waiting for a starting kernel */
	int state_lost;	     /* a kernel died: the next result says kernel_restarted */
	unsigned long dropped; /* kernel messages dropped for a bad signature */
	int quit;
	int graceful;	     /* on quit: shutdown_request before the kill */
	int exit_code;
};

static volatile sig_atomic_t got_term;
static int sig_pipe[2] = {-1, -1};
/* For the atexit handler only. */
static struct worker *exiting_worker;
/* Where log lines go; -1 once the supervisor is gone. */
static int log_fd = IPC_WORKER_FD;

/* The log sink: each line becomes IPC_LOG; stderr if that cannot work. */
static void
log_to_supervisor(int priority, const char *line)
{
	static int busy;

	if (busy || log_fd == -1) {
		fprintf(stderr, "codeexec-worker[%d]: %s\n", (int)getpid(), line);
		return;
	}
	busy = 1; /* a failed send must not log through us again */
	struct ipc_log l = {priority, ipc_text_of(line)};
	if (ipc_log_send(log_fd, 0, &l) == -1)
		fprintf(stderr, "codeexec-worker[%d]: %s\n", (int)getpid(), line);
	busy = 0;
}

static void
on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	got_term = 1;
	ssize_t n = write(sig_pipe[1], &c, 1); /* a full pipe is fine: the flag is set */
	(void)n;
	errno = saved;
}

/* Catch the signals that end us; ignore SIGPIPE (fd 3 errors come as EPIPE). */
static void
setup_signals(void)
{
	struct sigaction sa;

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) == -1)
		fatal("pipe");
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/*
 * Send message `msg` (the struct of `type`, ipc_msg.h; borrowed) to the
 * supervisor. A frame over the limit or that the codec refuses is dropped
 * (nothing was written: -1 with errno EMSGSIZE or EINVAL); any other
 * failure means the supervisor is gone.
 */
static int
send_msg(struct worker *w, unsigned type, uint32_t id, const void *msg)
{
	if (log_fd == -1)
		return 0;
	if (ipc_msg_send(IPC_WORKER_FD, type, id, msg) == 0)
		return 0;
	if (errno == EMSGSIZE || errno == EINVAL) {
		int saved = errno;
		log_warnx("dropped %s %s frame", saved == EMSGSIZE ? "an oversized" : "an invalid",
			  ipc_type_name(type));
		errno = saved;
		return -1;
	}
	log_fd = -1; /* stop talking to it, logging included */
	log_warn("send %s to the supervisor", ipc_type_name(type));
	w->quit = 1;
	return 0;
}

/* End the worker because the supervisor broke the protocol. */
static void
protocol_error(struct worker *w, const char *what)
{
	log_warnx("protocol error from the supervisor: %s", what);
	w->quit = 1;
	w->graceful = 0;
	w->exit_code = 1;
}

/* ---- Executions ---- */

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
reply_error(struct worker *w, uint32_t id, const char *type, const char *message)
{
	struct ipc_result r;

	exec_error_result(type, message, &r);
	send_msg(w, IPC_RESULT, id, &r);
	ipc_result_free(&r);
}

/* Send the RESULT of the current execution and forget it. */
static void
finish_exec(struct worker *w)
{
	struct exec *ex = w->ex;

	int finished_ok = ex->reply_status && strcmp(ex->reply_status, "ok") == 0;
	/*
	 * The interrupt's KeyboardInterrupt is our doing: report the timeout. A
	 * run that still ended "ok" finished before the interrupt took effect; a
	 * kernel that died meanwhile is reported as such.
	 */
	if (ex->timed_out && !finished_ok && !error_is(ex, "TimeoutError") &&
	    !error_is(ex, "KernelDied")) {
		char *m = xasprintf("Execution exceeded %g seconds", ex->timeout_s);
		exec_set_error(ex, "TimeoutError", m);
		free(m);
	}
	if (ex->kernel_restarted)
		w->state_lost = 0;
	struct ipc_result r;
	exec_result(ex, clock_mono(), &r);
	/* Nothing is written when the frame is too big: answer anyway. */
	int rc = send_msg(w, IPC_RESULT, ex->id, &r);
	ipc_result_free(&r);
	if (rc == -1) {
		log_warnx("the result of request %u exceeds the IPC frame limit", ex->id);
		reply_error(w, ex->id, "OutputTooLarge",
			    "the result exceeds the size limit of one message");
	}
	exec_free(&w->ex);
}

/* Send execute_request for the waiting execution. */
static void
send_execute(struct worker *w)
{
	char msg_id[JUPYTER_MSG_ID_MAX];
	struct json_object *c = exec_request_content(w->ex);
	int rc = jupyter_send(w->k->shell, &w->sess, "execute_request", c, msg_id);

	json_object_put(c);
	if (rc == -1) {
		exec_set_error(w->ex, "KernelDied", "cannot send the code to the kernel");
		finish_exec(w);
		return;
	}
	exec_started(w->ex, msg_id, clock_mono());
}

/* ---- Kernel life cycle ---- */

static void start_kernel(struct worker *w, enum after_start after);

/* A kernel failed to start; `why` is consumed. */
static void
start_failed(struct worker *w, char *why)
{
	kernel_destroy(&w->k, &w->sess, 0);
	w->kstate = K_DEAD;
	if (w->after != AFTER_QUIET) {
		struct ipc_start_failed f = {ipc_text_of(why)};
		log_warnx("%s", why);
		send_msg(w, IPC_START_FAILED, 0, &f);
		w->quit = 1;
		w->exit_code = 1;
	} else {
		log_warnx("kernel restart failed: %s", why);
		if (w->ex) {
			char *m = xasprintf("the kernel could not be restarted: %s", why);
			exec_set_error(w->ex, "KernelDied", m);
			free(m);
			finish_exec(w);
		}
	}
	free(why);
}

static void
start_kernel(struct worker *w, enum after_start after)
{
	char *why = NULL;

	w->after = after;
	w->k = kernel_start(&w->spec, w->zctx, &w->sess, &why);
	if (w->k == NULL) {
		start_failed(w, why);
		return;
	}
	w->kstate = K_STARTING;
}

/* The handshake finished: announce the kernel and run what waited. */
static void
kernel_now_ready(struct worker *w)
{
	w->kstate = K_READY;
	log_info("kernel %d ready (%s)", (int)w->k->pid, w->k->language);
	/* Every kernel is announced: the supervisor signals only the one it
	 * knows (and checks) as ours. */
	struct ipc_ready r = {w->k->pid, w->k->language, w->after != AFTER_INITIAL};
	send_msg(w, IPC_READY, 0, &r);
	if (w->ex)
		send_execute(w);
}

/*
 * The handshake finished. A seccomp kernel must first lock itself (see
 * sandbox_seccomp.c): it is sent the lock code, silently, and is ready
 * only once its reply and /proc say the filter is in place.
 */
static void
handshake_done(struct worker *w)
{
	struct json_object *c;

	if (w->sb.mode != SANDBOX_SECCOMP) {
		kernel_now_ready(w);
		return;
	}
	c = json_object_new_object();
	json_object_object_add(c, "code", json_object_new_string(sandbox_seccomp_lock_code()));
	json_object_object_add(c, "silent", json_object_new_boolean(1));
	json_object_object_add(c, "store_history", json_object_new_boolean(0));
	json_object_object_add(c, "user_expressions", json_object_new_object());
	json_object_object_add(c, "allow_stdin", json_object_new_boolean(0));
	json_object_object_add(c, "stop_on_error", json_object_new_boolean(1));
	int rc = jupyter_send(w->k->shell, &w->sess, "execute_request", c, w->lock_msg_id);
	json_object_put(c);
	if (rc == -1) {
		start_failed(w, xstrdup("seccomp: cannot send the lock request to the kernel"));
		return;
	}
	w->kstate = K_LOCKING;
}

/* The kernel answered the lock request: verify, then it is ready. */
static void
lock_replied(struct worker *w, const struct jupyter_msg *m)
{
	struct json_object *st, *ev;
	char *why = NULL;

	if (strcmp(m->msg_type, "execute_reply") != 0 || m->parent_msg_id == NULL ||
	    strcmp(m->parent_msg_id, w->lock_msg_id) != 0)
		return;
	if (!json_object_object_get_ex(m->content, "status", &st) ||
	    strcmp(json_object_get_string(st), "ok") != 0) {
		json_object_object_get_ex(m->content, "evalue", &ev);
		start_failed(w, xasprintf("seccomp: the kernel could not lock itself: %s",
					  ev ? json_object_get_string(ev) : "no reason given"));
		return;
	}
	if (sandbox_seccomp_verify(w->k->pid, &why) == -1) {
		start_failed(w, why);
		return;
	}
	log_info("kernel %d: seccomp filter installed on every thread", (int)w->k->pid);
	kernel_now_ready(w);
}

/* How the kernel's death reads, memory limit first. Caller frees. */
static char *
death_text(struct worker *w, int *oom)
{
	char *text = kernel_exit_text(w->k);

	*oom = sandbox_oom_killed(&w->sb);
	if (!*oom)
		return text;
	char *t = xasprintf("the kernel exceeded its memory limit of %llu MB and was killed (%s)",
			    (unsigned long long)w->sb.limits.memory_mb, text);
	free(text);
	return t;
}

static void drain_iopub(struct worker *w);

/* The kernel process has exited (and was reaped). */
static void
kernel_died(struct worker *w)
{
	struct kernel *k = w->k;
	int oom;
	char *text = death_text(w, &oom);

	kernel_read_output(k);
	if (w->kstate == K_STARTING || w->kstate == K_LOCKING) {
		char *why = xasprintf("%s during start-up; its last output:\n%s", text,
				      kernel_output_tail(k));
		free(text);
		start_failed(w, why);
		return;
	}
	log_warnx("kernel %d: %s", (int)k->pid, text);
	drain_iopub(w); /* output it sent before dying belongs to the result */
	if (w->ex) {
		exec_set_error(w->ex, oom ? "MemoryLimitExceeded" : "KernelDied", text);
		finish_exec(w);
	} else {
		struct ipc_kernel_died d = {.pid = k->pid, .message = ipc_text_of(text),
					    .memory_limit_exceeded = oom};
		if (WIFSIGNALED(k->wstatus))
			d.signal = WTERMSIG(k->wstatus);
		else
			d.exit_code = WEXITSTATUS(k->wstatus);
		send_msg(w, IPC_KERNEL_DIED, 0, &d);
	}
	free(text);
	w->state_lost = 1;
	kernel_destroy(&w->k, &w->sess, 0);
	w->kstate = K_DEAD;
}

/* A timed-out or cancelled execution ignored the interrupt: kill, answer, restart. */
static void
kill_after_grace(struct worker *w)
{
	drain_iopub(w);
	if (w->ex == NULL)
		return; /* it went idle at the last moment: answered, nothing to kill */
	char *m = w->ex->timed_out
			  ? xasprintf("Execution exceeded %g seconds and the kernel did not stop when interrupted, so it was killed and restarted: its state (variables, imports) is lost",
				      w->ex->timeout_s)
			  : xstrdup("Cancelled, and the kernel did not stop when interrupted, so it was killed and restarted: its state (variables, imports) is lost");
	/* A cancelled call's answer reaches nobody: tell the next one instead. */
	if (!w->ex->timed_out)
		w->state_lost = 1;

	log_warnx("kernel %d ignored the interrupt; killing it", (int)w->k->pid);
	kernel_destroy(&w->k, &w->sess, 0);
	w->kstate = K_DEAD;
	exec_set_error(w->ex, w->ex->timed_out ? "TimeoutError" : "Cancelled", m);
	free(m);
	finish_exec(w);
	start_kernel(w, AFTER_QUIET);
}

/* The kernel cannot be talked to any more: kill it, restart on the next call. */
static void
kill_broken_kernel(struct worker *w)
{
	log_warnx("kernel %d: lost its sockets; killing it", (int)w->k->pid);
	kernel_destroy(&w->k, &w->sess, 0);
	w->kstate = K_DEAD;
	w->state_lost = 1;
}

/* ---- Kernel messages ---- */

/* One message received on iopub. */
static void
on_iopub(struct worker *w, const struct jupyter_msg *m)
{
	if (w->kstate == K_STARTING) {
		kernel_handshake_msg(w->k, "iopub", m);
		return;
	}
	if (w->ex == NULL)
		return;
	if (exec_on_iopub(w->ex, m, w->allow_mime) == EXEC_STREAM) {
		struct ipc_output o;
		exec_output_chunk(w->ex, m, &o);
		send_msg(w, IPC_OUTPUT, w->ex->id, &o);
		ipc_output_free(&o);
	}
}

/* One message received on shell. */
static void
on_shell(struct worker *w, const struct jupyter_msg *m)
{
	if (w->kstate == K_STARTING)
		kernel_handshake_msg(w->k, "shell", m);
	else if (w->kstate == K_LOCKING)
		lock_replied(w, m);
	else if (w->ex)
		exec_on_shell(w->ex, m);
}

/* Log a dropped kernel message. */
static void
dropped(struct worker *w, const char *channel, enum jupyter_status st, const char *err)
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
drain(struct worker *w, void *sock, const char *channel,
      void (*fn)(struct worker *, const struct jupyter_msg *))
{
	struct kernel *k = w->k;
	struct jupyter_msg m;
	const char *err;
	int n;

	for (n = 0; n < DRAIN_MAX && w->k == k && !w->quit; n++) {
		enum jupyter_status st = jupyter_recv(sock, k->signer, &m, &err);
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
			handshake_done(w);
		else if (w->ex && exec_done(w->ex))
			finish_exec(w);
	}
	return n == DRAIN_MAX;
}

static void
drain_iopub(struct worker *w)
{
	/* Everything already sent counts, but a kernel still flooding must not hold us. */
	for (int rounds = 0; rounds < 16 && w->k && drain(w, w->k->iopub, "iopub", on_iopub);
	     rounds++)
		;
}

/* ---- Supervisor messages ---- */

/* Take w->spec and the rest of the worker's set-up from a decoded START (emptied). */
static const char *
take_start(struct worker *w, struct ipc_start *st)
{
	struct kernel_spec *s = &w->spec;
	const char *bad;

	s->argv = st->argv;
	s->envp = st->env;
	s->cwd = st->cwd;
	s->runtime_dir = st->runtime_dir;
	w->allow_mime = st->allow_mime;
	st->argv = st->env = st->allow_mime = NULL;
	st->cwd = st->runtime_dir = NULL;
	w->place.cwd = s->cwd;
	s->sb = &w->sb;
	if ((bad = sandbox_from_start(&w->sb, st)) != NULL)
		return bad;
	w->place.chown = w->sb.has_id;
	w->place.uid = w->sb.uid;
	w->place.gid = w->sb.gid;
	w->place.max_bytes = (off_t)w->sb.fsize;
	s->interrupt_by_message = st->interrupt_mode == IPC_INTERRUPT_MESSAGE;
	/* 0: unset by the caller, and no kernel starts in 0 s */
	s->startup_timeout_s = st->startup_timeout_s > 0 ? st->startup_timeout_s
							 : DEFAULT_STARTUP_TIMEOUT_S;
	return NULL;
}

static void
on_start(struct worker *w, struct ipc_msg *m)
{
	struct ipc_start st;
	char err[IPC_ERR_LEN];
	const char *bad;

	if (w->kstate != K_NONE) {
		protocol_error(w, "second START");
		return;
	}
	w->after = AFTER_INITIAL;
	if (ipc_start_decode(m, &st, err) == -1) {
		start_failed(w, xasprintf("bad START payload: %s", err));
		return;
	}
	bad = take_start(w, &st);
	ipc_start_free(&st);
	if (bad != NULL) {
		start_failed(w, xasprintf("bad START payload: %s", bad));
		return;
	}
	if (kernel_runtime_create(w->spec.runtime_dir) == -1) {
		w->after = AFTER_INITIAL;
		start_failed(w, xasprintf("cannot create runtime_dir %s: %s",
					  w->spec.runtime_dir, strerror(errno)));
		return;
	}
	w->runtime_made = 1;
	start_kernel(w, AFTER_INITIAL);
}

static void
on_execute(struct worker *w, struct ipc_msg *m)
{
	struct ipc_execute e;
	char err[IPC_ERR_LEN];
	struct exec_limits lim = {.place = w->place};

	if (ipc_execute_decode(m, &e, err) == -1) {
		protocol_error(w, err);
		return;
	}
	lim.output_chars = (size_t)e.output_limit;
	lim.rich_bytes = (size_t)e.rich_limit;
	if (w->ex) {
		ipc_execute_free(&e);
		reply_error(w, m->hdr.id, "Busy",
			    "another execution is running in this session; wait for it or interrupt it");
		return;
	}
	w->ex = exec_new(m->hdr.id, e.code.s, e.timeout_s, &lim);
	w->ex->silent = e.silent;
	ipc_execute_free(&e);
	/* Lost state is told to the next call, even when its kernel is up already. */
	w->ex->kernel_restarted = w->state_lost;
	if (w->kstate == K_READY)
		send_execute(w);
	else if (w->kstate == K_DEAD)
		start_kernel(w, AFTER_QUIET);
	/* K_STARTING: runs once the kernel is ready */
}

/*
 * INTERRUPT: cancellation means stop. An execution still waiting for its
 * kernel (a restart) never runs; a running one is interrupted and, like a
 * timeout, killed with its kernel if it is still busy after the grace.
 */
static void
on_interrupt(struct worker *w, struct ipc_msg *m)
{
	struct exec *ex = w->ex;

	if (ex == NULL || ex->id != m->hdr.id) {
		log_debug("INTERRUPT for request %u: not running", m->hdr.id);
		return;
	}
	if (ex->msg_id[0] == '\0' || w->kstate != K_READY) {
		exec_set_error(ex, "Cancelled", "cancelled before it started");
		finish_exec(w);
		return;
	}
	kernel_interrupt(w->k, &w->sess, w->spec.interrupt_by_message);
	ex->cancelled = 1;
	if (ex->grace_deadline <= 0)
		ex->grace_deadline = clock_mono() + EXEC_GRACE_S;
}

static void
on_restart(struct worker *w)
{
	if (w->ex && w->kstate == K_READY)
		drain_iopub(w); /* output so far belongs to the interrupted result */
	kernel_destroy(&w->k, &w->sess, 0);
	w->kstate = K_DEAD;
	if (w->ex) {
		exec_set_error(w->ex, "KernelDied", "kernel died: restarted on request");
		finish_exec(w);
	}
	w->state_lost = 0; /* the supervisor asked for it: nothing to report */
	start_kernel(w, AFTER_RESTART_CMD);
}

/* Act on one frame from the supervisor. */
static void
dispatch(struct worker *w, struct ipc_msg *m)
{
	unsigned type = m->hdr.type;
	char err[IPC_ERR_LEN];

	log_debug("received %s id %u", ipc_type_name(type), m->hdr.id);
	if ((type == IPC_SHUTDOWN || type == IPC_INTERRUPT || type == IPC_RESTART_KERNEL) &&
	    ipc_empty_decode(m, type, err) == -1) {
		protocol_error(w, err);
	} else if (type == IPC_SHUTDOWN) {
		w->quit = 1;
	} else if (type == IPC_START) {
		on_start(w, m);
	} else if (w->kstate == K_NONE) {
		protocol_error(w, "a request before START");
	} else if (type == IPC_EXECUTE) {
		on_execute(w, m);
	} else if (type == IPC_INTERRUPT) {
		on_interrupt(w, m);
	} else if (type == IPC_RESTART_KERNEL) {
		on_restart(w);
	} else {
		protocol_error(w, "a worker-to-supervisor message type");
	}
}

/* fd 3 is readable: read and act on every complete frame. */
static void
read_supervisor(struct worker *w)
{
	struct ipc_msg m;
	const char *err;
	ssize_t n = ipc_reader_fill(&w->rd);

	if (n == 0 || (n < 0 && errno != EAGAIN)) {
		if (n < 0)
			log_warn("read from the supervisor");
		log_fd = -1;
		log_debug("the supervisor closed the connection");
		w->quit = 1;
		return;
	}
	while (!w->quit) {
		int r = ipc_reader_next(&w->rd, &m, &err);
		if (r == 0)
			return;
		if (r == -1) {
			protocol_error(w, err);
			return;
		}
		dispatch(w, &m);
		ipc_msg_clear(&m);
	}
}

/* ---- The loop ---- */

/* Act on deadlines; the milliseconds until the next one, -1 if none. */
static long
run_timers(struct worker *w)
{
	double now = clock_mono(), next = -1;

	if (w->kstate == K_LOCKING) {
		if (now >= w->k->start_deadline) {
			start_failed(w, xasprintf("seccomp: the kernel did not lock itself within %g seconds",
						  w->spec.startup_timeout_s));
			return 0;
		}
		next = w->k->start_deadline - now;
	}
	if (w->kstate == K_STARTING) {
		next = kernel_handshake_tick(w->k, &w->sess, now);
		if (next < 0) {
			start_failed(w, xasprintf(
				"the kernel did not answer within %g seconds; its last output:\n%s",
				w->spec.startup_timeout_s, kernel_output_tail(w->k)));
			return 0;
		}
	}
	struct exec *ex = w->ex;
	if (ex && w->kstate == K_READY && ex->msg_id[0]) {
		if (ex->deadline > 0 && now >= ex->deadline) {
			log_info("request %u exceeded %g s; interrupting", ex->id, ex->timeout_s);
			ex->deadline = 0;
			ex->timed_out = 1;
			ex->grace_deadline = now + EXEC_GRACE_S;
			kernel_interrupt(w->k, &w->sess, w->spec.interrupt_by_message);
		}
		if (ex->grace_deadline > 0 && now >= ex->grace_deadline) {
			kill_after_grace(w);
			return 0;
		}
		double idle = exec_idle_deadline(ex);
		if (idle > 0 && now >= idle) {
			log_warnx("request %u: no status idle %g s after the reply; output lost",
				  ex->id, EXEC_IDLE_WAIT_S);
			ex->output_lost = 1;
			finish_exec(w);
			if (kernel_reopen_iopub(w->k, w->zctx) == -1)
				kill_broken_kernel(w);
			return 0;
		}
		/* Wake at the earliest of the timeout, the grace and the idle wait. */
		double d = ex->deadline;
		if (ex->grace_deadline > 0 && (d <= 0 || ex->grace_deadline < d))
			d = ex->grace_deadline;
		if (idle > 0 && (d <= 0 || idle < d))
			d = idle;
		if (d > 0 && (next < 0 || d - now < next))
			next = d - now;
	}
	return next < 0 ? -1 : (long)ceil(next * 1000);
}

enum { SLOT_IPC, SLOT_SIG, SLOT_SHELL, SLOT_CONTROL, SLOT_IOPUB, SLOT_OUT, SLOT_PID, SLOT_MAX };

/* Fill the poll set; kernel items only while there is a kernel. */
static int
poll_items(struct worker *w, zmq_pollitem_t *it, int *slot)
{
	int n = 0;

	for (int i = 0; i < SLOT_MAX; i++)
		slot[i] = -1;
	slot[SLOT_IPC] = n;
	it[n++] = (zmq_pollitem_t){NULL, IPC_WORKER_FD, ZMQ_POLLIN, 0};
	slot[SLOT_SIG] = n;
	it[n++] = (zmq_pollitem_t){NULL, sig_pipe[0], ZMQ_POLLIN, 0};
	if (w->k == NULL)
		return n;
	slot[SLOT_SHELL] = n;
	it[n++] = (zmq_pollitem_t){w->k->shell, 0, ZMQ_POLLIN, 0};
	slot[SLOT_CONTROL] = n;
	it[n++] = (zmq_pollitem_t){w->k->control, 0, ZMQ_POLLIN, 0};
	slot[SLOT_IOPUB] = n;
	it[n++] = (zmq_pollitem_t){w->k->iopub, 0, ZMQ_POLLIN, 0};
	if (w->k->out_fd != -1) {
		slot[SLOT_OUT] = n;
		it[n++] = (zmq_pollitem_t){NULL, w->k->out_fd, ZMQ_POLLIN, 0};
	}
	slot[SLOT_PID] = n;
	it[n++] = (zmq_pollitem_t){NULL, w->k->pidfd, ZMQ_POLLIN, 0};
	return n;
}

/* Did item `which` of this round fire (and is its kernel still ours)? */
static int
fired(zmq_pollitem_t *it, int *slot, int which)
{
	return slot[which] != -1 && (it[slot[which]].revents & (ZMQ_POLLIN | ZMQ_POLLERR));
}

/* Handle the kernel's events of one round, output before death. */
static void
kernel_events(struct worker *w, zmq_pollitem_t *it, int *slot)
{
	struct kernel *k = w->k;

	if (fired(it, slot, SLOT_OUT))
		kernel_read_output(k);
	if (fired(it, slot, SLOT_IOPUB))
		drain(w, k->iopub, "iopub", on_iopub);
	if (w->k == k && fired(it, slot, SLOT_SHELL))
		drain(w, k->shell, "shell", on_shell);
	if (w->k == k && fired(it, slot, SLOT_CONTROL))
		drain(w, k->control, "control", NULL);
	if (w->k == k && !w->quit && fired(it, slot, SLOT_PID) && kernel_reap(k))
		kernel_died(w);
}

static void
loop(struct worker *w)
{
	zmq_pollitem_t it[SLOT_MAX];
	int slot[SLOT_MAX];

	while (!w->quit) {
		long timeout = run_timers(w);
		if (w->quit)
			break;
		int n = poll_items(w, it, slot);
		if (zmq_poll(it, n, timeout) == -1) {
			if (zmq_errno() == EINTR)
				continue;
			fatalx("zmq_poll: %s", zmq_strerror(zmq_errno()));
		}
		if (got_term) {
			log_info("terminating on a signal");
			w->quit = 1;
			break;
		}
		if (w->k)
			kernel_events(w, it, slot);
		if (!w->quit && fired(it, slot, SLOT_IPC))
			read_supervisor(w);
	}
}

/* End the kernel, remove the runtime directory, release everything. */
static void
cleanup(struct worker *w)
{
	/* A kernel still starting may not listen yet: asking it would only wait. */
	kernel_destroy(&w->k, &w->sess, w->graceful && w->kstate == K_READY);
	if (w->runtime_made) {
		sandbox_empty_dir(w->spec.runtime_dir); /* what the kernel left there */
		kernel_runtime_remove(w->spec.runtime_dir);
	}
	exec_free(&w->ex);
	for (char **p = w->spec.argv; p && *p; p++)
		free(*p);
	for (char **p = w->spec.envp; p && *p; p++)
		free(*p);
	free(w->spec.argv);
	free(w->spec.envp);
	free(w->spec.cwd);
	free(w->spec.runtime_dir);
	for (char **p = w->allow_mime; p && *p; p++)
		free(*p);
	free(w->allow_mime);
	sandbox_free(&w->sb);
	ipc_reader_free(&w->rd);
	if (w->zctx)
		zmq_ctx_term(w->zctx);
}

/* fatal() exits without cleanup(): the kernel's whole group must go too. */
static void
kill_kernel_at_exit(void)
{
	struct kernel *k = exiting_worker ? exiting_worker->k : NULL;

	if (k && k->pid > 0 && !k->reaped)
		killpg(k->pid, SIGKILL);
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: codeexec-worker [-v] | -p\n"
			"Started by codeexecd with its IPC socket as fd 3.\n"
			"-p prints the cgroup layout this host offers kernels (START's \"cgroup\"), and why\n"
			"   a controller is unusable, then exits; it prepares the layout as codeexecd would.\n");
	exit(2);
}

/* -p: what cgroup_probe() finds here, as JSON on stdout. */
static int
print_cgroup_probe(void)
{
	struct cgroup_layout l;
	int n = cgroup_probe(&l);
	struct json_object *o = cgroup_layout_json(&l, "probe");
	struct json_object *why = json_object_new_object();

	for (int c = 0; c < CGROUP_NCTL; c++)
		if (l.version[c] == 0)
			json_object_object_add(why, cgroup_ctl_name(c),
					       json_object_new_string(l.reason[c]));
	json_object_object_add(o, "unusable", why);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	cgroup_layout_free(&l);
	return n == CGROUP_NCTL ? 0 : 1;
}

int
main(int argc, char **argv)
{
	struct worker w;
	int ch;

	log_init("codeexec-worker", 1, LOG_DAEMON);
	while ((ch = getopt(argc, argv, "pv")) != -1) {
		if (ch == 'p')
			return print_cgroup_probe();
		if (ch != 'v')
			usage();
		log_set_level(LOG_DEBUG);
	}
	if (optind != argc)
		usage();
	/* Keys and code live in our memory: no core dumps, no ptrace by peers. */
	if (prctl(PR_SET_DUMPABLE, 0) == -1)
		fatal("prctl PR_SET_DUMPABLE");
	if (fcntl(IPC_WORKER_FD, F_SETFD, FD_CLOEXEC) == -1)
		fatal("fd %d is not the supervisor's socket", IPC_WORKER_FD);
	/* Reads wait for zmq_poll; writes must block rather than fail half-way. */
	int fl = fcntl(IPC_WORKER_FD, F_GETFL);
	if (fl == -1 || fcntl(IPC_WORKER_FD, F_SETFL, fl & ~O_NONBLOCK) == -1)
		fatal("fcntl fd %d", IPC_WORKER_FD);
	log_set_sink(log_to_supervisor);
	setup_signals();

	memset(&w, 0, sizeof(w));
	exiting_worker = &w;
	atexit(kill_kernel_at_exit);
	w.graceful = 1;
	ipc_reader_init(&w.rd, IPC_WORKER_FD);
	jupyter_session_init(&w.sess, NULL); /* each kernel brings its signer */
	if ((w.zctx = zmq_ctx_new()) == NULL)
		fatalx("zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
	loop(&w);
	cleanup(&w);
	exiting_worker = NULL; /* w lives on this stack frame only */
	log_debug("exiting with status %d", w.exit_code);
	return w.exit_code;
}
