/* pool_spawn.c - see pool_spawn.h. */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "ipc_msg.h"
#include "log.h"
#include "parent_link.h"
#include "pool_send.h"
#include "pool_spawn.h"
#include "pool_state.h"
#include "start_failure.h"
#include "xmalloc.h"

/* How long after a worker is taken its replacement starts (pool_worker_taken). */
#define REFILL_DEFER_S 0.25
/* The demand that raises the warm target: takes in the last TAKE_WINDOW_S. */
#define TAKE_WINDOW_S 10.0
#define TAKE_HISTORY 256
/* Idle workers beyond the target are retired after this long without a take. */
#define TRIM_AFTER_S 30.0

/* When the last TAKE_HISTORY workers were taken (monotonic), a ring. Lock held. */
static double take_times[TAKE_HISTORY];
static unsigned take_next;

/* A worker on socket `fd` (owned), as the parent names it. */
static struct worker *
worker_new(pid_t pid, uint32_t priv_id, uint32_t dir, uid_t uid, const char *name, int fd)
{
	struct worker *w = xcalloc(1, sizeof(*w));
	w->pid = pid;
	w->priv_id = priv_id;
	w->dir_id = dir;
	w->uid = uid;
	w->fd = fd;
	w->state = WORKER_STARTING;
	w->workdir = xasprintf("%s/sessions/%s", pool.cfg->state_dir, name);
	ipc_reader_init(&w->reader, w->fd);
	buf_init(&w->out);
	return w;
}

struct worker *
pool_spawn_in(uint32_t dir, char *why, size_t why_len)
{
	struct priv_worker_started st;
	int fd;

	if (parent_link_spawn(pool.cfg->kernel_network_mode, dir, &st, &fd, why, why_len) == -1) {
		log_warnx("no new worker: %s", why);
		return NULL;
	}
	return worker_new(st.pid, st.worker, st.dir, (uid_t)st.uid, st.name, fd);
}

struct worker *
pool_take_over(const struct priv_worker_left *l, int fd)
{
	struct worker *w = worker_new(l->pid, l->worker, l->dir, (uid_t)l->uid, l->name, fd);

	w->kernel_pid = (pid_t)l->kernel;
	w->ever_ready = w->kernel_pid != 0; /* its death is no start-up failure */
	/* Its session's, not a start: it holds no place of the refill's. */
	w->state = WORKER_ASSIGNED;
	w->resuming = 1;
	/* Its old call runs to its end within its timeout and the checkpoint
	 * before a kill; past that the worker is stuck (pool_io_kill_unread). */
	w->resume_by = clock_mono() + pool.cfg->max_timeout + IPC_EXEC_GRACE_S +
		       IPC_EXEC_ANSWER_S + pool.cfg->checkpoint_max_seconds + 1;
	w->owned = w->reserved = 1;
	w->generation = pool.generation;
	pool_adopt(w);
	return w;
}

void
pool_adopt(struct worker *w)
{
	w->next = pool.workers;
	pool.workers = w;
	worker_counted(w);
	log_debug("worker %d started for %s", (int)w->pid, w->workdir);
}

/*
 * pool.max_starting, or three per online CPU when it is 0: a start is not
 * all CPU (process start, imports from disk, the handshake), and with one
 * per CPU a burst of 64 sessions waited longer for its last kernel than
 * with three (bench/README.md, the scale runs).
 */
static int
max_starting(void)
{
	long cpus;

	if (pool.cfg->pool_max_starting > 0)
		return pool.cfg->pool_max_starting;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus > 0 ? 3 * (int)cpus : 3;
}

/*
 * How many idle kernels to keep: pool.warm, raised by recent demand up to
 * pool.warm_max. A kernel takes about a second to start, so twice the
 * sessions per second that took one over the last TAKE_WINDOW_S covers
 * the next second's arrivals with room to spare.
 */
static int
warm_target(void)
{
	int floor = pool.cfg->pool_warm, ceiling = pool.cfg->pool_warm_max;
	double now = clock_mono();
	int recent = 0;

	if (ceiling <= floor)
		return floor;
	for (unsigned i = 0; i < TAKE_HISTORY; i++)
		recent += take_times[i] > 0 && now - take_times[i] < TAKE_WINDOW_S;
	int extra = (int)((2.0 * recent + TAKE_WINDOW_S - 1) / TAKE_WINDOW_S);
	return floor + extra < ceiling ? floor + extra : ceiling;
}

/*
 * The most worker processes alive at once, shutting down ones included:
 * a kernel for each place in pool.max_sessions and the warm pool at its
 * largest. Those waiting for a kernel are not added: each already holds a
 * place in max_sessions (a session, or a batch item let in under it).
 */
static int
live_bound(void)
{
	int warm = pool.cfg->pool_warm, warm_max = pool.cfg->pool_warm_max;

	return pool.cfg->pool_max_sessions + (warm_max > warm ? warm_max : warm);
}

/* Whether another worker should start now. Lock held. */
static int
wants_worker(void)
{
	int want = warm_target() + pool.takers;

	if (pool.stopping || time(NULL) < pool.backoff_until || pool_spare_count() >= want ||
	    pool_live_count() >= live_bound())
		return 0;
	if (pool.takers == 0 && clock_mono() < pool.refill_at)
		return 0;
	/* A burst of sessions must not start every kernel at once: each start
	 * is most of a second of CPU, and all would be late. */
	if (pool_starting_count() >= max_starting())
		return 0;
	return 1;
}

void
pool_refill(void)
{
	for (;;) {
		pool_lock();
		int go = wants_worker();
		unsigned generation = pool.generation;
		pool_unlock();
		if (!go)
			return;
		char why[PRIV_REASON_MAX + 64];
		struct worker *w = pool_spawn_in(0, why, sizeof(why));
		pool_lock();
		if (w) {
			w->generation = generation;
			pool_adopt(w);
		}
		pool_unlock();
		if (w == NULL)
			return;
	}
}

void
pool_worker_taken(void)
{
	double now = clock_mono();

	pool.refill_at = now + REFILL_DEFER_S;
	take_times[take_next++ % TAKE_HISTORY] = now;
}

void
pool_trim(void)
{
	static double last_trim;
	double last = take_times[(take_next + TAKE_HISTORY - 1) % TAKE_HISTORY];
	double now = clock_mono();

	/* One a second: a pool shrinks gently, and a new burst stops it. */
	if (pool.stopping || pool_idle_count() <= warm_target() || now - last < TRIM_AFTER_S ||
	    now - last_trim < 1.0)
		return;
	last_trim = now;
	for (struct worker *w = pool.workers; w; w = w->next) {
		if (w->state != WORKER_IDLE || w->owned)
			continue;
		log_info("worker %d: idle beyond the warm target of %d; retiring it", (int)w->pid,
			 warm_target());
		if (worker_send(w, IPC_SHUTDOWN, 0, NULL) == -1)
			log_warn("send SHUTDOWN to worker %d", (int)w->pid);
		worker_set_state(w, WORKER_CLOSING);
		return;
	}
}

int
pool_refill_due_ms(void)
{
	double left = pool.refill_at - clock_mono();

	return left > 0 ? (int)(left * 1000) + 1 : -1;
}

void
pool_runtime_renewed(void)
{
	pool.generation++;
	pool.early_deaths = 0;
	pool.backoff_until = 0;
	start_failure_set(NULL);
	pool_wake();
}
