/*
 * lifecycle.c - the kernel's state machine: start, handshake, the seccomp
 * lock, restart and death (K_NONE .. K_DEAD in worker.h). Each transition
 * tells the supervisor what it needs (READY, START_FAILED, KERNEL_DIED) and
 * answers the execution the transition ends.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>

#include "clock.h"
#include "log.h"
#include "worker.h"
#include "xmalloc.h"

/* A kernel failed to start; `why` is borrowed. */
void
lifecycle_start_failed(struct wstate *w, const char *why)
{
	kernel_destroy(&w->k, &w->sess, 0);
	w->kstate = K_DEAD;
	if (w->after != AFTER_QUIET) {
		struct ipc_start_failed f = {ipc_text_of(why)};
		log_warnx("%s", why);
		supervisor_send(w, IPC_START_FAILED, 0, &f);
		w->quit = 1;
		w->exit_code = 1;
	} else {
		log_warnx("kernel restart failed: %s", why);
		if (w->ex) {
			char *m = xasprintf("the kernel could not be restarted: %s", why);
			exec_set_error(w->ex, "KernelDied", m);
			free(m);
			route_finish_exec(w);
		}
	}
}

void
lifecycle_start(struct wstate *w, enum after_start after)
{
	char why[ERR_LEN];

	w->after = after;
	w->k = kernel_start(&w->spec, w->zctx, &w->sess, why, sizeof(why));
	if (w->k == NULL) {
		lifecycle_start_failed(w, why);
		return;
	}
	w->kstate = K_STARTING;
}

/* The kernel is prepared: announce it and run what waited. */
static void
kernel_now_ready(struct wstate *w)
{
	w->kstate = K_READY;
	log_info("kernel %d ready (%s)", (int)w->k->pid, w->k->language);
	/* Every kernel is announced: the supervisor signals only the one it
	 * knows (and checks) as ours. A new front learns of it from RESUMED. */
	struct ipc_ready r = {w->k->pid, w->k->language, w->after != AFTER_INITIAL,
			      w->k->language_version};
	if (!w->resume_due)
		supervisor_send(w, IPC_READY, 0, &r);
	if (w->ex)
		route_send_execute(w);
}

/* Send `c` (consumed) as the execute_request of preparing phase `st`. */
static void
send_prep(struct wstate *w, struct json_object *c, enum kstate st, const char *what)
{
	int rc = jupyter_send(w->k->shell, &w->sess, "execute_request", c, w->prep_msg_id);

	json_object_put(c);
	if (rc == -1) {
		char *why = xasprintf("cannot send the %s request to the kernel", what);
		lifecycle_start_failed(w, why);
		free(why);
		return;
	}
	w->kstate = st;
}

/*
 * Warm the kernel before it is announced: ipykernel's first execution is
 * slower than later ones (it builds what a displayed result needs on first
 * use), and pool.preload's imports belong here too, so a session's first
 * call costs what any call does. Not silent (a silent one leaves part of
 * the first-call cost), without history (the session's history starts
 * empty).
 */
static void
warm_up(struct wstate *w)
{
	if (w->warm_code == NULL) {
		kernel_now_ready(w);
		return;
	}
	struct json_object *c = exec_request_build(w->warm_code, 0, 1);
	json_object_object_add(c, "store_history", json_object_new_boolean(0));
	send_prep(w, c, K_WARMING, "warm-up");
}

/*
 * The handshake finished. Any other seccomp kernel has bound its sockets,
 * filtered since its exec: its gate closes (sandbox_seccomp_gate.c). The
 * daemon's seccomp ipykernel must first lock itself (sandbox_seccomp.c):
 * it is sent the lock code, silently, and goes on only once its reply and
 * /proc say the filter is in place.
 */
void
lifecycle_handshake_done(struct wstate *w)
{
	char why[ERR_LEN];

	if (w->k->gate) {
		sandbox_seccomp_gate_close(&w->k->gate);
		if (sandbox_seccomp_verify(w->k->pid, why, sizeof(why)) == -1 ||
		    sandbox_seccomp_gate_check(&w->sb, w->k->pid, why, sizeof(why)) == -1) {
			lifecycle_start_failed(w, why);
			return;
		}
		log_info("kernel %d: filtered since its exec; its seccomp gate is closed",
			 (int)w->k->pid);
		warm_up(w);
	} else if (w->sb.mode != NET_SECCOMP)
		warm_up(w);
	else
		send_prep(w, exec_request_build(sandbox_seccomp_lock_code(), 1, 1), K_LOCKING,
			  "seccomp lock");
}

int
lifecycle_starting(const struct wstate *w)
{
	return w->kstate == K_STARTING || w->kstate == K_LOCKING || w->kstate == K_WARMING;
}

/* The error a failed preparing request's reply carries. Caller frees. */
static char *
prep_error(const char *what, const struct jupyter_msg *m)
{
	struct json_object *en = NULL, *ev = NULL;

	json_object_object_get_ex(m->content, "ename", &en);
	json_object_object_get_ex(m->content, "evalue", &ev);
	return xasprintf("%s failed: %s: %s", what, en ? json_object_get_string(en) : "error",
			 ev ? json_object_get_string(ev) : "no reason given");
}

void
lifecycle_prep_replied(struct wstate *w, const struct jupyter_msg *m)
{
	struct json_object *st;
	char why[ERR_LEN];

	if (strcmp(m->msg_type, "execute_reply") != 0 || m->parent_msg_id == NULL ||
	    strcmp(m->parent_msg_id, w->prep_msg_id) != 0)
		return;
	const char *what = w->kstate == K_LOCKING ? "seccomp: the kernel's lock"
						  : "the warm-up (pool.preload's imports, code_prefix)";
	if (!json_object_object_get_ex(m->content, "status", &st) ||
	    strcmp(json_object_get_string(st), "ok") != 0) {
		char *text = prep_error(what, m);
		lifecycle_start_failed(w, text);
		free(text);
		return;
	}
	if (w->kstate == K_WARMING) {
		kernel_now_ready(w);
		return;
	}
	if (sandbox_seccomp_verify(w->k->pid, why, sizeof(why)) == -1) {
		lifecycle_start_failed(w, why);
		return;
	}
	log_info("kernel %d: seccomp filter installed on every thread", (int)w->k->pid);
	warm_up(w);
}

/*
 * The kernel ignored the interrupt: ask it to checkpoint first (SIGUSR2;
 * the daemon's checkpoint cell armed a handler that saves the namespace
 * and then exits, ipc_msg.h's rescue_s), once. 1 while that
 * may still come, 0 when the kill is due now.
 */
static int
ask_checkpoint(struct wstate *w)
{
	struct exec *ex = w->ex;
	double now = clock_mono();

	if (ex->rescue_s <= 0 || (ex->rescue_deadline > 0 && now >= ex->rescue_deadline))
		return 0;
	if (ex->rescue_deadline > 0)
		return 1;
	if (kill(w->k->pid, SIGUSR2) == -1) {
		log_warn("kill -USR2 kernel %d", (int)w->k->pid);
		return 0;
	}
	ex->rescue_deadline = now + ex->rescue_s + 1;
	ex->grace_deadline = ex->rescue_deadline; /* route_timers calls us again then */
	log_warnx("kernel %d ignored the interrupt; asking it to checkpoint its namespace "
		  "before it is killed (%g s at most)", (int)w->k->pid, ex->rescue_s + 1);
	return 1;
}

/* What became of the checkpoint before a kill. */
enum rescue { RESCUE_NONE, RESCUE_SAVED, RESCUE_LOST };

/* Kill the kernel that ignored the interrupt, answer, restart. */
static void
kill_and_answer(struct wstate *w, enum rescue how)
{
	static const char *const after[] = {
		[RESCUE_NONE] = "it was killed and restarted: its state (variables, imports) is "
				"lost",
		[RESCUE_SAVED] = "it checkpointed its namespace and was restarted: the next call "
				 "restores that checkpoint",
		[RESCUE_LOST] = "it was killed and restarted without a new checkpoint: the next "
				"call restores the latest one, and what changed after it is lost",
	};
	char *m = w->ex->timed_out
			  ? xasprintf("Execution exceeded %g seconds and the kernel did not stop "
				      "when interrupted, so %s",
				      w->ex->timeout_s, after[how])
			  : xasprintf("Cancelled, and the kernel did not stop when interrupted, so "
				      "%s",
				      after[how]);
	if (!w->k->reaped)
		log_warnx("kernel %d ignored the interrupt; killing it", (int)w->k->pid);
	kernel_destroy(&w->k, &w->sess, 0);
	w->kstate = K_DEAD;
	exec_set_error(w->ex, w->ex->timed_out ? "TimeoutError" : "Cancelled", m);
	free(m);
	route_finish_exec(w);
	/* Like a crash: the next result says kernel_restarted (after route_finish_exec). */
	w->state_lost = 1;
	lifecycle_start(w, AFTER_QUIET);
}

/* How the kernel's death reads, memory limit first. Caller frees. */
static char *
death_text(struct wstate *w, int *oom)
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

/* The kernel process has exited (and was reaped). */
void
lifecycle_died(struct wstate *w)
{
	struct kernel *k = w->k;
	int oom;
	char *text = death_text(w, &oom);

	kernel_read_output(k);
	/* Asked to checkpoint before its kill, it ended: how says whether it did. */
	if (w->ex && w->ex->rescue_deadline > 0 && !oom) {
		int saved = WIFEXITED(k->wstatus) && WEXITSTATUS(k->wstatus) == IPC_RESCUE_SAVED;
		free(text);
		route_drain_iopub(w);
		kill_and_answer(w, saved ? RESCUE_SAVED : RESCUE_LOST);
		return;
	}
	if (lifecycle_starting(w)) {
		char *why = xasprintf("%s during start-up; its last output:\n%s", text,
				      kernel_output_tail(k));
		free(text);
		lifecycle_start_failed(w, why);
		free(why);
		return;
	}
	log_warnx("kernel %d: %s", (int)k->pid, text);
	route_drain_iopub(w); /* output it sent before dying belongs to the result */
	if (w->ex) {
		exec_set_error(w->ex, oom ? "MemoryLimitExceeded" : "KernelDied", text);
		route_finish_exec(w);
	} else {
		struct ipc_kernel_died d = {.pid = k->pid, .message = ipc_text_of(text),
					    .memory_limit_exceeded = oom};
		if (WIFSIGNALED(k->wstatus))
			d.signal = WTERMSIG(k->wstatus);
		else
			d.exit_code = WEXITSTATUS(k->wstatus);
		supervisor_send(w, IPC_KERNEL_DIED, 0, &d);
	}
	free(text);
	w->state_lost = 1;
	kernel_destroy(&w->k, &w->sess, 0);
	w->kstate = K_DEAD;
}

/* A timed-out or cancelled execution ignored the interrupt: kill, answer, restart. */
void
lifecycle_kill_after_grace(struct wstate *w)
{
	route_drain_iopub(w);
	if (w->ex == NULL)
		return; /* it went idle at the last moment: answered, nothing to kill */
	if (kernel_reap(w->k)) { /* it died meanwhile (an OOM kill): say how */
		lifecycle_died(w);
		return;
	}
	if (!ask_checkpoint(w))
		kill_and_answer(w, w->ex->rescue_deadline > 0 ? RESCUE_LOST : RESCUE_NONE);
}

/* The kernel cannot be talked to any more: kill it, restart on the next call. */
void
lifecycle_kill_broken(struct wstate *w)
{
	log_warnx("kernel %d: lost its sockets; killing it", (int)w->k->pid);
	kernel_destroy(&w->k, &w->sess, 0);
	w->kstate = K_DEAD;
	w->state_lost = 1;
}

double
lifecycle_timers(struct wstate *w, double now)
{
	double next = -1;

	if (w->kstate == K_LOCKING || w->kstate == K_WARMING) {
		if (now >= w->k->start_deadline) {
			char *why = xasprintf("%s within %g seconds",
					      w->kstate == K_LOCKING
						      ? "seccomp: the kernel did not lock itself"
						      : "the kernel did not finish its warm-up",
					      w->spec.startup_timeout_s);
			lifecycle_start_failed(w, why);
			free(why);
			return 0;
		}
		next = w->k->start_deadline - now;
	}
	if (w->kstate == K_STARTING) {
		next = kernel_handshake_tick(w->k, &w->sess, now);
		if (next < 0) {
			char *why = xasprintf(
				"the kernel did not answer within %g seconds; its last output:\n%s",
				w->spec.startup_timeout_s, kernel_output_tail(w->k));
			lifecycle_start_failed(w, why);
			free(why);
			return 0;
		}
	}
	return next;
}
