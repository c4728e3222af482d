/* pool_reap.c - see pool_reap.h. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "metrics.h"
#include "pool_exec.h"
#include "pool_reap.h"
#include "pool_send.h"
#include "pool_spawn.h"
#include "parent_link.h"
#include "pool_state.h"
#include "result.h"
#include "secret_file.h"
#include "sidecar_view.h"
#include "wstatus.h"
#include "xmalloc.h"

/* After this many workers in a row die before READY, refills back off. */
#define EARLY_DEATHS_BEFORE_BACKOFF 3
#define BACKOFF_MAX_S 60

/* The worker `w` has exited with `status`: settle everything that hung on it. */
static void
worker_exited(struct worker *w, int status)
{
	char *how = wstatus_text(status);
	free(w->death);
	/* Killed by us: the reason matters to its session more than the signal. */
	w->death = w->cause ? xasprintf("was killed by the supervisor: %s (%s)", w->cause, how)
			    : xstrdup(how);
	free(how);
	log_msg(w->state == WORKER_CLOSING ? LOG_DEBUG : LOG_WARNING, "worker %d %s",
		(int)w->pid, w->death);
	if (w->state != WORKER_CLOSING)
		metrics_worker_death(w->cause != NULL, WIFSIGNALED(status));
	if (w->fd != -1) {
		close(w->fd);
		w->fd = -1;
	}
	worker_drop_queue(w);
	/* Its kernel and control group the parent has ended already. */
	if (w->call) {
		char *msg = xasprintf("the kernel worker %s", w->death);
		pool_exec_complete(w, result_failed("WorkerDied", msg));
		free(msg);
	}
	if (w->state == WORKER_STARTING && !w->ever_ready && w->generation == pool.generation) {
		pool.early_deaths++;
		if (pool.early_deaths >= EARLY_DEATHS_BEFORE_BACKOFF) {
			int delay = 1 << (pool.early_deaths - EARLY_DEATHS_BEFORE_BACKOFF);
			if (delay > BACKOFF_MAX_S)
				delay = BACKOFF_MAX_S;
			pool.backoff_until = time(NULL) + delay;
			log_warnx("%d workers died before their first job; next start in %d s",
				  pool.early_deaths, delay);
		}
	}
	worker_set_state(w, WORKER_DEAD);
	if (w->resuming)
		pool_resumed(w);
	if (!w->owned)
		worker_free(w);
	pthread_cond_broadcast(&pool.ready_cond);
}

static pool_runtime_fn runtime_fn;
static pool_dir_left_fn dir_left_fn;
static pool_worker_left_fn worker_left_fn;
static pool_resumed_fn resumed_fn;

void
pool_on_dir_left(pool_dir_left_fn fn)
{
	dir_left_fn = fn;
}

void
pool_on_worker_left(pool_worker_left_fn fn, pool_resumed_fn resumed)
{
	worker_left_fn = fn;
	resumed_fn = resumed;
}

void
pool_resumed(struct worker *w)
{
	w->resuming = 0;
	if (resumed_fn)
		resumed_fn(w);
	pthread_cond_broadcast(&pool.ready_cond);
}

void
pool_on_runtime(pool_runtime_fn fn)
{
	runtime_fn = fn;
}

static struct worker *
by_priv_id(uint32_t id)
{
	for (struct worker *w = pool.workers; w; w = w->next)
		if (w->priv_id == id)
			return w;
	return NULL;
}

/* The parent refused a request. Only a claim's refusal is the worker's
 * doing (it named a process not its kernel); the rest are logged. */
static void
refused(const struct priv_refused *r)
{
	struct worker *w = r->request == PRIV_CLAIM_KERNEL ? by_priv_id(r->ref) : NULL;

	if (w && w->state != WORKER_DEAD) {
		worker_kill(w, r->reason);
		return;
	}
	log_warnx("the privileged parent refused %s (%u): %s", priv_type_name(r->request), r->ref,
		  r->reason);
}

void
pool_reap(void)
{
	struct priv_msg m;
	int fd, rc;

	while ((rc = parent_link_next(&m, &fd)) == 1) {
		struct worker *w;
		if (parent_link_deliver(&m, fd))
			continue; /* a PREPROCESS's answer, for an HTTP thread */
		switch (m.type) {
		case PRIV_WORKER_EXITED:
			w = by_priv_id(m.u.exited.worker);
			if (w && w->state != WORKER_DEAD)
				worker_exited(w, m.u.exited.status);
			break;
		case PRIV_REFUSED:
			refused(&m.u.refused);
			break;
		case PRIV_RUNTIME_RENEWED:
			pool_runtime_renewed();
			if (runtime_fn)
				runtime_fn(NULL, fd);
			else if (fd != -1)
				close(fd);
			break;
		case PRIV_RUNTIME_DEGRADED:
			if (runtime_fn)
				runtime_fn(m.u.degraded.reason, -1);
			break;
		case PRIV_SIDECAR_STATE:
			sidecar_view_set(&m.u.sidecar);
			break;
		case PRIV_SECRET: /* read again on SIGHUP, before the signal */
			secret_file_put(m.u.secret.path, fd);
			break;
		case PRIV_SECRETS_SENT:
			break;
		case PRIV_DIR_LEFT:
			if (dir_left_fn)
				dir_left_fn(&m.u.left);
			else
				parent_link_remove_dir(m.u.left.dir);
			break;
		case PRIV_WORKER_LEFT:
			w = pool_take_over(&m.u.wleft, fd);
			if (worker_left_fn)
				worker_left_fn(&m.u.wleft, w);
			else
				worker_kill(w, "no session takes it over");
			break;
		default:
			log_warnx("an unexpected %s from the privileged parent",
				  priv_type_name(m.type));
			if (fd != -1)
				close(fd);
		}
	}
	/* Its workers go with it: the front has nothing left to serve with. */
	if (rc == -1)
		fatalx("the privileged parent is gone: stopping");
}

/* Reap for up to `seconds`, writing what is queued, without holding the
 * lock while waiting. Returns how many workers are still not reaped. */
static int
pool_reap_for(double seconds)
{
	double end = clock_mono() + seconds;
	int live;

	for (;;) {
		pool_lock();
		for (struct worker *w = pool.workers; w; w = w->next)
			worker_flush(w);
		pool_reap();
		live = pool_live_count();
		pool_unlock();
		if (live == 0 || clock_mono() >= end)
			return live;
		usleep(50000);
	}
}

void
pool_stop(void)
{
	pool_lock();
	pool.stopping = 1;
	pthread_cond_broadcast(&pool.ready_cond);
	for (struct worker *w = pool.workers; w; w = w->next) {
		if (w->state == WORKER_DEAD || w->fd == -1)
			continue;
		if (w->state != WORKER_CLOSING && worker_send(w, IPC_SHUTDOWN, 0, NULL) == -1)
			log_warn("send SHUTDOWN to worker %d", (int)w->pid);
		worker_set_state(w, WORKER_CLOSING);
	}
	pool_unlock();

	/* Workers end their kernels within about a second; then force it. */
	if (pool_reap_for(5) > 0) {
		pool_lock();
		for (struct worker *w = pool.workers; w; w = w->next)
			if (w->state != WORKER_DEAD)
				worker_kill(w, "it did not stop");
		pool_unlock();
		/* SIGKILL ends even a stopped worker; reaping frees the struct (and
		 * the loop above never touches a worker after that). */
		if (pool_reap_for(5) > 0)
			log_warnx("some workers were still not reaped after SIGKILL");
	}
}

void
worker_free(struct worker *w)
{
	struct worker **pp = &pool.workers;

	while (*pp && *pp != w)
		pp = &(*pp)->next;
	if (*pp)
		*pp = w->next;
	ipc_reader_free(&w->reader);
	buf_free(&w->out);
	/* What a session leaves behind ends with it: the parent removes it,
	 * unless the session keeps it for its next worker (pool_revive.h). */
	if (!w->keep_dir)
		parent_link_remove_dir(w->dir_id);
	free(w->workdir);
	free(w->death);
	free(w->cause);
	free(w);
}
