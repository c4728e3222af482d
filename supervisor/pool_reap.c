/* pool_reap.c - see pool_reap.h. */
#include "autoconf.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "clock.h"
#include "kernelpid.h"
#include "log.h"
#include "pool_exec.h"
#include "pool_reap.h"
#include "pool_send.h"
#include "pool_state.h"
#include "remover.h"
#include "result.h"
#include "uid.h"
#include "xmalloc.h"

/* After this many workers in a row die before READY, refills back off. */
#define EARLY_DEATHS_BEFORE_BACKOFF 3
#define BACKOFF_MAX_S 60

/* Describe a wait status for people: "exited with status 1", "killed by
 * signal 9 (SIGKILL)". Caller owns. */
static char *
describe_status(int status)
{
	if (WIFEXITED(status))
		return xasprintf("exited with status %d", WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		return xasprintf("killed by signal %d (SIG%s)", WTERMSIG(status),
				 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status))
								: "?");
	return xasprintf("stopped with wait status %d", status);
}

/* The worker `w` has exited with `status`: settle everything that hung on it. */
static void
worker_exited(struct worker *w, int status)
{
	char *how = describe_status(status);
	free(w->death);
	/* Killed by us: the reason matters to its session more than the signal. */
	w->death = w->cause ? xasprintf("was killed by the supervisor: %s (%s)", w->cause, how)
			    : xstrdup(how);
	free(how);
	log_msg(w->state == WORKER_CLOSING ? LOG_DEBUG : LOG_WARNING, "worker %d %s",
		(int)w->pid, w->death);
	if (w->fd != -1) {
		close(w->fd);
		w->fd = -1;
	}
	worker_drop_queue(w);
	/* The kernel is in its own process group; never leave it behind. */
	kernelpid_kill(w->kernel_pidfd, w->kernel_pid);
	/* Nor what it detached: a worker killed outright left its group. */
	if (pool.cgroups)
		cgroup_remove_named(pool.cgroups, strrchr(w->rundir, '/') + 1);
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
	if (!w->owned)
		worker_free(w);
	pthread_cond_broadcast(&pool.ready_cond);
}

void
pool_reap(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (uid_child_exited(pid, status))
			continue;
		for (struct worker *w = pool.workers; w; w = w->next) {
			if (w->pid == pid && w->state != WORKER_DEAD) {
				worker_exited(w, status);
				break;
			}
		}
	}
}

void
worker_kill(struct worker *w, const char *why)
{
	log_warnx("worker %d: %s; killing it", (int)w->pid, why);
	if (w->cause == NULL)
		w->cause = xstrdup(why);
	kill(w->pid, SIGKILL);
	if (w->fd != -1) {
		close(w->fd);
		w->fd = -1;
	}
	worker_drop_queue(w);
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
		for (struct worker *w = pool.workers; w; w = w->next) {
			if (w->state == WORKER_DEAD)
				continue;
			log_warnx("worker %d did not stop; killing it", (int)w->pid);
			kill(w->pid, SIGKILL);
			kernelpid_kill(w->kernel_pidfd, w->kernel_pid);
		}
		pool_unlock();
		/* SIGKILL ends even a stopped worker; reaping frees the struct (and
		 * the loop above never touches a worker after that). */
		if (pool_reap_for(5) > 0)
			log_warnx("some workers were still not reaped after SIGKILL");
	}
	remover_drain();
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
	if (w->kernel_pidfd != -1)
		close(w->kernel_pidfd);
	buf_free(&w->out);
	/* Its uid is clean once its files are gone, the working directory too. */
	uid_release(w->uid, w->workdir);
	/* What a session leaves behind ends with it; publishing keeps results.
	 * A tree of many files takes long to remove: never under the lock. */
	if (w->workdir)
		remover_add(w->workdir);
	/* A worker killed outright leaves its sockets and connection file. */
	remover_add(w->rundir);
	free(w->death);
	free(w->cause);
	free(w);
}
