/* pool_io.c - see pool_io.h. */
#include "autoconf.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "ipc_msg.h"
#include "kernel_info.h"
#include "parent_link.h"
#include "log.h"
#include "metrics.h"
#include "pool_exec.h"
#include "pool_io.h"
#include "pool_reap.h"
#include "pool_send.h"
#include "pool_state.h"
#include "result.h"
#include "start_failure.h"
#include "xmalloc.h"

/* A worker that leaves queued bytes unread this long is stopped or hung. */
#define WORKER_UNREAD_S 10

/*
 * What a worker may send in each phase of its life, in the manner of
 * OpenSSH's monitor (MON_PERMIT): a message type not permitted in the
 * worker's phase, or one whose fields do not decode, ends the worker.
 */
enum phase {
	PHASE_STARTING,	 /* START sent, no kernel yet */
	PHASE_READY,	 /* idle, in the pool or held by a session */
	PHASE_EXECUTING, /* an EXECUTE in flight */
	PHASE_LISTING,	 /* a FILE_LIST in flight */
	PHASE_OPENING,	 /* a FILE_OPEN or FILE_WRITE in flight */
	PHASE_STOPPING,	 /* SHUTDOWN sent */
	PHASE_RESUMING,	 /* taken over from the last front, RESUMED not come yet */
	PHASE_N,
};

#define PERMIT(t) (1u << ((t) - IPC_READY))
static pool_upstream_fn upstream_fn;

void
pool_on_upstream_call(pool_upstream_fn fn)
{
	upstream_fn = fn;
}

static const unsigned permit[PHASE_N] = {
	/* its kernel comes up, or it says why not */
	[PHASE_STARTING] = PERMIT(IPC_READY) | PERMIT(IPC_START_FAILED) | PERMIT(IPC_LOG),
	/* an idle kernel may die; the next one is announced again */
	[PHASE_READY] = PERMIT(IPC_READY) | PERMIT(IPC_KERNEL_DIED) | PERMIT(IPC_LOG),
	/* output, prompts and the result of the request in flight; a kernel
	 * started for it, or one that died idle just before it came */
	[PHASE_EXECUTING] = PERMIT(IPC_OUTPUT) | PERMIT(IPC_STREAMING) | PERMIT(IPC_RESULT) |
			    PERMIT(IPC_READY) | PERMIT(IPC_KERNEL_DIED) | PERMIT(IPC_LOG) |
			    PERMIT(IPC_WAITING) | PERMIT(IPC_INPUT_REQUEST) |
			    PERMIT(IPC_UPSTREAM_CALL),
	/* the listing asked for; an idle kernel may die meanwhile */
	[PHASE_LISTING] = PERMIT(IPC_FILES) | PERMIT(IPC_READY) | PERMIT(IPC_KERNEL_DIED) |
			  PERMIT(IPC_LOG),
	/* the file asked for or written, the only message that may carry a descriptor */
	[PHASE_OPENING] = PERMIT(IPC_FILE) | PERMIT(IPC_READY) | PERMIT(IPC_KERNEL_DIED) |
			  PERMIT(IPC_LOG),
	/* whatever it sent before it read SHUTDOWN */
	[PHASE_STOPPING] = PERMIT(IPC_READY) | PERMIT(IPC_START_FAILED) | PERMIT(IPC_OUTPUT) |
			   PERMIT(IPC_STREAMING) | PERMIT(IPC_RESULT) | PERMIT(IPC_KERNEL_DIED) |
			   PERMIT(IPC_LOG) | PERMIT(IPC_FILES) | PERMIT(IPC_FILE) | PERMIT(IPC_WAITING) |
			   PERMIT(IPC_RESUMED) | PERMIT(IPC_INPUT_REQUEST) | PERMIT(IPC_UPSTREAM_CALL),
	/* nothing but that it is idle now (the old front's call has ended) */
	[PHASE_RESUMING] = PERMIT(IPC_RESUMED) | PERMIT(IPC_LOG),
};

static const char *const phase_names[PHASE_N] = {"starting", "ready", "executing",
						 "listing outputs/", "opening a file",
						 "stopping", "resuming"};

static enum phase
worker_phase(const struct worker *w)
{
	switch (w->state) {
	case WORKER_STARTING:
		return PHASE_STARTING;
	case WORKER_ASSIGNED:
		if (w->resuming)
			return PHASE_RESUMING;
		if (w->call == NULL)
			return PHASE_READY;
		/* FILE_OPEN and FILE_WRITE are both answered by FILE */
		return w->call->kind == CALL_FILE_LIST ? PHASE_LISTING
		       : w->call->kind == CALL_EXECUTE ? PHASE_EXECUTING
						       : PHASE_OPENING;
	case WORKER_IDLE:
		return PHASE_READY;
	default:
		return PHASE_STOPPING;
	}
}

static int
permitted(enum phase ph, unsigned type)
{
	return type >= IPC_READY && type <= IPC_UPSTREAM_CALL && (permit[ph] & PERMIT(type));
}

/* READY: take the kernel it names; the parent pins it only if it is that
 * worker's (a refusal kills the worker: pool_reap). */
static void
on_ready(struct worker *w, const struct ipc_ready *r)
{
	parent_link_claim_kernel(w->priv_id, r->kernel_pid);
	w->kernel_pid = r->kernel_pid;
	kernel_info_set(r->language, r->language_version);
	metrics_add(METRICS_KERNEL_STARTS, 1);
	if (w->ever_ready)
		metrics_add(METRICS_KERNEL_RESTARTS, 1);
	w->ever_ready = 1;
	pool.early_deaths = 0;
	if (w->state == WORKER_STARTING) {
		pool.kernels_ready++;
		/* A revival's worker is its session's at once (pool_revive.h). */
		worker_set_state(w, w->reserved ? WORKER_ASSIGNED : WORKER_IDLE);
		pthread_cond_broadcast(&pool.ready_cond);
	}
}

/*
 * RESUMED: a worker taken over is idle and its session's. A kernel other
 * than the one the parent holds claimed (or none) is a new one: the old
 * namespace is gone, and the session's next call restores its checkpoint.
 */
static void
on_resumed(struct worker *w, const struct ipc_resumed *r)
{
	if (r->kernel_pid != 0 && r->kernel_pid != w->kernel_pid)
		parent_link_claim_kernel(w->priv_id, r->kernel_pid);
	if (r->state_lost || r->kernel_pid == 0 || r->kernel_pid != w->kernel_pid)
		w->kernel_lost = 1;
	w->kernel_pid = r->kernel_pid;
	w->ever_ready = 1;
	worker_set_state(w, WORKER_ASSIGNED);
	pool_resumed(w);
}

/* OUTPUT and RESULT: for the request in flight, which in PHASE_EXECUTING
 * must be theirs. 1 if they belong to it, 0 if to nobody, -1 if a lie. */
static int
for_call(struct worker *w, enum phase ph, const struct ipc_msg *m)
{
	char why[120];

	if (w->call && w->call->id == m->hdr.id)
		return 1;
	if (ph == PHASE_STOPPING)
		return 0; /* a SHUTDOWN crossed it */
	snprintf(why, sizeof(why), "%s for request %u, but request %u is in flight",
		 ipc_type_name(m->hdr.type), m->hdr.id, w->call->id);
	worker_kill(w, why);
	return -1;
}

/*
 * Act on one message from worker `w`: check it is permitted now, decode,
 * act. The decode is a view (ipc_msg_view): what is acted on is copied
 * where it is kept, and a RESULT's payload is handed on whole, so nothing
 * needs a copy of its own.
 */
static void
worker_message(struct worker *w, struct ipc_msg *m)
{
	char err[IPC_ERR_LEN], why[IPC_ERR_LEN + 64];
	enum phase ph = worker_phase(w);
	union {
		struct ipc_ready ready;
		struct ipc_start_failed start_failed;
		struct ipc_output output;
		struct ipc_streaming streaming;
		struct ipc_result result;
		struct ipc_kernel_died kernel_died;
		struct ipc_log log;
		struct ipc_files files;
		struct ipc_file file;
		struct ipc_waiting waiting;
		struct ipc_resumed resumed;
		struct ipc_input_request input_request;
		struct ipc_upstream_call upstream_call;
	} u;

	if (!permitted(ph, m->hdr.type)) {
		snprintf(why, sizeof(why), "sent %s, which a worker may not send while %s",
			 ipc_type_name(m->hdr.type), phase_names[ph]);
		worker_kill(w, why);
		return;
	}
	if (m->has_fd && m->hdr.type != IPC_FILE) {
		snprintf(why, sizeof(why), "sent a descriptor with %s", ipc_type_name(m->hdr.type));
		worker_kill(w, why);
		return;
	}
	if (ipc_msg_view(m, m->hdr.type, &u, err, sizeof(err)) == -1) {
		snprintf(why, sizeof(why), "sent a malformed message: %s", err);
		worker_kill(w, why);
		return;
	}
	/* FILE carries a descriptor exactly when it names a file it opened
	 * (FILE_OPEN's); a FILE_WRITE's FILE never does. */
	int fd_due = m->hdr.type == IPC_FILE && u.file.file != NULL &&
		     !(w->call && w->call->kind == CALL_FILE_WRITE);
	if (m->hdr.type == IPC_FILE && fd_due != (m->has_fd != 0)) {
		worker_kill(w, fd_due ? "sent FILE without its descriptor"
				      : "sent a descriptor with FILE's error or a write's answer");
		ipc_msg_view_free(m->hdr.type, &u);
		return;
	}
	switch (m->hdr.type) {
	case IPC_READY:
		on_ready(w, &u.ready);
		start_failure_set(NULL);
		break;
	case IPC_START_FAILED:
		log_warnx("worker %d could not start its kernel: %s", (int)w->pid,
			  u.start_failed.message.s);
		if (w->generation == pool.generation)
			start_failure_set(u.start_failed.message.s);
		pthread_cond_broadcast(&pool.ready_cond); /* waiters fail now, with the reason */
		break;
	case IPC_OUTPUT:
		if (for_call(w, ph, m) == 1 &&
		    pool_exec_output(w, &u.output, why, sizeof(why)) == -1)
			worker_kill(w, why);
		break;
	case IPC_STREAMING:
		if (for_call(w, ph, m) == 1 &&
		    pool_exec_streaming(w, &u.streaming, why, sizeof(why)) == -1)
			worker_kill(w, why);
		break;
	case IPC_RESULT:
		/* The decoded payload itself, neither copied nor encoded again. */
		if (for_call(w, ph, m) != 1)
			break;
		if (pool_exec_result_check(w, &u.result, why, sizeof(why)) == -1)
			worker_kill(w, why);
		else
			pool_exec_complete(w, ipc_result_take(m));
		break;
	case IPC_FILES:
		if (for_call(w, ph, m) == 1)
			pool_exec_file(w, ipc_result_take(m), -1);
		break;
	case IPC_FILE:
		if (for_call(w, ph, m) == 1) {
			int fd = m->has_fd ? m->fd : -1;
			m->has_fd = 0;
			m->fd = -1;
			pool_exec_file(w, ipc_result_take(m), fd);
		}
		break;
	case IPC_WAITING:
		if (for_call(w, ph, m) == 1)
			pool_exec_waiting(w, &u.waiting);
		break;
	case IPC_INPUT_REQUEST:
		if (for_call(w, ph, m) == 1 &&
		    pool_exec_input(w, &u.input_request, why, sizeof(why)) == -1)
			worker_kill(w, why);
		break;
	case IPC_UPSTREAM_CALL:
		if (for_call(w, ph, m) == 1 && upstream_fn)
			upstream_fn(w, m->hdr.id, &u.upstream_call);
		break;
	case IPC_KERNEL_DIED:
		log_warnx("kernel of worker %d died while idle: %s", (int)w->pid,
			  u.kernel_died.message.s);
		metrics_kernel_death(u.kernel_died.memory_limit_exceeded ? METRICS_DEATH_OOM
									 : METRICS_DEATH_CRASH);
		w->kernel_lost = 1;
		break;
	case IPC_LOG:
		log_msg(u.log.priority, "worker %d: %s", (int)w->pid, u.log.message.s);
		break;
	case IPC_RESUMED:
		if (ph == PHASE_RESUMING)
			on_resumed(w, &u.resumed);
		break;
	}
	ipc_msg_view_free(m->hdr.type, &u);
}

/* Read and dispatch everything worker `w` has sent. */
static void
worker_readable(struct worker *w)
{
	struct ipc_msg m;
	char err[ERR_LEN] = "";
	int rc;

	ssize_t n = ipc_reader_fill(&w->reader);
	/* Descriptors no frame may take: act on the frames before them, then end it. */
	int bad_fds = n < 0 && errno == EPROTO;
	if (!bad_fds && (n == 0 || (n < 0 && errno != EAGAIN))) {
		/* Its exit status, via SIGCHLD, says what happened. */
		close(w->fd);
		w->fd = -1;
		return;
	}
	while (w->fd != -1 && (rc = ipc_reader_next(&w->reader, &m, err, sizeof(err))) == 1) {
		worker_message(w, &m);
		ipc_msg_clear(&m);
	}
	if (w->fd != -1 && rc == -1)
		worker_kill(w, err);
	if (w->fd != -1 && bad_fds)
		worker_kill(w, "sent descriptors that no frame may carry (two at once, or more "
			       "than one in a message)");
}

int
pool_pollfds(struct pollfd *pfd, int max)
{
	int n = 0;
	for (struct worker *w = pool.workers; w && n < max; w = w->next) {
		if (w->fd == -1)
			continue;
		pfd[n].fd = w->fd;
		pfd[n].events = POLLIN | (w->out_off < w->out.len ? POLLOUT : 0);
		pfd[n].revents = 0;
		n++;
	}
	return n;
}

/* The thread that reads the workers' sockets (the main loop's). */
static pthread_t io_thread;
static int io_thread_known;

void
pool_handle(const struct pollfd *pfd, int n)
{
	if (!io_thread_known) {
		io_thread = pthread_self();
		io_thread_known = 1;
	}
	for (int i = 0; i < n; i++) {
		if (!pfd[i].revents)
			continue;
		for (struct worker *w = pool.workers; w; w = w->next) {
			if (w->fd != pfd[i].fd)
				continue;
			if (pfd[i].revents & POLLOUT)
				worker_flush(w);
			if (w->fd != -1 && (pfd[i].revents & ~POLLOUT))
				worker_readable(w);
			break;
		}
	}
}

void
pool_io_kill_unread(void)
{
	double now = clock_mono();

	for (struct worker *w = pool.workers; w; w = w->next) {
		if (w->resuming && w->state == WORKER_ASSIGNED && now > w->resume_by) {
			worker_kill(w, "taken over from the last front, it never said it was idle");
			continue;
		}
		if (w->fd == -1 || w->out_off == w->out.len || now - w->out_since < WORKER_UNREAD_S)
			continue;
		char *why = xasprintf("it left %zu bytes unread on its socket for %d s (stopped "
				      "or hung)", w->out.len - w->out_off, WORKER_UNREAD_S);
		worker_kill(w, why);
		free(why);
	}
}


/* On the thread that reads the workers: read them here until c is done. */
static void
drive_until_done(struct worker *w, struct call *c, double timeout_s)
{
	struct pollfd pfd[512];
	double end = clock_mono() + timeout_s;

	while (!c->done) {
		/* Its socket closed: it is gone, and reaping it waits for this loop. */
		if (w->fd == -1) {
			pool_exec_file(w, result_failed("WorkerDied", "the kernel worker is gone"),
				       -1);
			break;
		}
		if (clock_mono() >= end) {
			worker_kill(w, "it gave no answer in time");
			pool_exec_file(w, result_failed("WorkerDied", "the kernel worker did not "
								      "answer in time"), -1);
			break;
		}
		int n = pool_pollfds(pfd, 512);
		/* Lock held: nothing else changes the workers meanwhile. */
		if (poll(pfd, (nfds_t)n, 100) > 0)
			pool_handle(pfd, n);
	}
}

void
pool_file_call(struct worker *w, struct call *c, const char *path, double timeout_s)
{
	pool_execute_start(w, c, path ? path : "", timeout_s, 1);
	if (io_thread_known && pthread_equal(io_thread, pthread_self()))
		drive_until_done(w, c, timeout_s);
	else
		pool_execute_wait(w, c, -1, 0);
}
