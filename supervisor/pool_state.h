/*
 * pool_state.h - what the parts of the pool share (see pool.h for the
 * public side). pool.c owns this state and the lock that guards it; the
 * other parts read and change it under pool_lock:
 *
 *   pool.c        the lock, the wake pipe, taking and releasing workers,
 *                 the counts /health reads
 *   pool_spawn.c  spawning a worker, its START, and the warm pool's refill
 *   pool_io.c     the worker sockets: queued writes, reading, and the
 *                 dispatch of each message by the worker's phase
 *   pool_reap.c   worker death: killing, reaping, freeing, shutdown
 *   pool_exec.c   one execution on a worker (pool_exec.h)
 */
#ifndef SUPERVISOR_POOL_STATE_H
#define SUPERVISOR_POOL_STATE_H

#include <pthread.h>
#include <time.h>

#include "pool.h"

struct config;
struct cgroup_layout;

/* The pool's memory. Defined in pool.c; guarded by pool_lock. */
struct pool_state {
	struct worker *workers;		     /* every worker not freed yet */
	pthread_cond_t ready_cond;	     /* a worker became ready, died, or failed to start */
	const struct config *cfg;	     /* borrowed for the daemon's lifetime */
	const struct cgroup_layout *cgroups; /* kernels' groups (borrowed); NULL: none */
	int stopping;			     /* pool_stop began: no refill, takers fail */
	int takers;			     /* threads waiting in pool_take */
	int early_deaths;		     /* workers in a row that died before READY */
	time_t backoff_until;		     /* no refill before this time */
};
extern struct pool_state pool;

/* pool.c: every change of a worker's state goes here, so that /health's
 * count of idle workers needs no lock. */
void worker_set_state(struct worker *w, enum worker_state st);
/* pool.c: workers that are, or will soon be, available to a new session. */
int pool_spare_count(void);
/* pool.c: workers not reaped yet. */
int pool_live_count(void);

#endif
