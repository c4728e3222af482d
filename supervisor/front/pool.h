/*
 * pool.h - the worker processes: spawning, the warm pool, IPC dispatch,
 * reaping and throttled refill.
 *
 * The public face of the pool: callers outside it include this header
 * only. It includes the parts' headers that such callers use and declares
 * what pool.c, the top of the pool, defines: taking and releasing workers
 * and the numbers /status and /health read. The parts stack in layers,
 * none including this header (pool_state.h lists them): pool_state.h
 * (types, lock, wake pipe), pool_send.h, then pool_exec.h and
 * pool_spawn.h, pool_reap.h, and pool_io.h (reading and dispatch) on top.
 *
 * The pool owns every struct worker and pool_lock (pool_state.c), which
 * guards the workers, the session table and every struct call: the main
 * loop and the HTTP threads take it for every change to workers or
 * sessions. An HTTP thread that runs
 * code waits on its struct call's condition variable; the main loop, which
 * alone reads and writes worker sockets, completes the call.
 *
 * Nothing that holds pool_lock may block on I/O, a child or the file
 * system: messages to workers are queued and written by the main loop
 * (POLLOUT), directories are removed by the privileged parent on request
 * (parent_link.h; its remover.c thread), /health reads counters that need
 * no lock. A worker that leaves its socket unread for
 * WORKER_UNREAD_S seconds is killed, and its session's call fails with
 * WorkerDied saying so.
 *
 * The front's locks, in the order they are taken (an outer one may be
 * held when an inner one is taken, never the reverse):
 *   pool_lock    (pool_state.c) workers, sessions, calls, jobs' progress
 *   config_lock  (reload.c)     the settings SIGHUP reloads; reload holds
 *                               pool_lock too, so holders of either may read
 *   job_lock     (job.c)        the job table and jobs' references
 *   batch_lock   (batch.c)      the batch table and items' outcomes
 *   health_lock  (health.c)     a leaf, held only to copy a value
 * remover_lock (remover.c) is the parent's: a leaf, as health_lock.
 */
#ifndef SUPERVISOR_POOL_H
#define SUPERVISOR_POOL_H

#include <stddef.h>

#include <json-c/json.h>

#include "pool_exec.h"
#include "pool_io.h"
#include "pool_reap.h"
#include "pool_revive.h"
#include "pool_spawn.h"
#include "pool_state.h"

struct config;

/*
 * Remember the configuration (borrowed for the daemon's lifetime). Workers
 * are the privileged parent's to start (parent_link.h). Call before
 * pool_start.
 */
void pool_init(const struct config *cfg);
/* Spawn the warm workers. */
void pool_start(void);

/*
 * Callers wait for a kernel in a queue, first come first served: each holds
 * a ticket, and each idle worker is handed to the first in the queue (even
 * while its caller is away, telling its client its place), so a caller
 * that comes when one is idle does not pass those already waiting.
 * The wait fails when no kernel became ready for `wait_s` seconds (since
 * it joined, or since the last one did), when kernels fail to start, or at
 * shutdown. Lock held for all of these, except pool_queue_length.
 */
/* `t` (the caller's, kept until it leaves) joins the end of the queue. */
void pool_queue_join(struct pool_ticket *t);
/*
 * Wait in the queue, at most `seconds` this time (<0: no bound), releasing
 * the lock meanwhile. Returns 1 once the wait is over and t has left the
 * queue: *w is the worker (ASSIGNED, owned), or NULL with why[why_len]
 * set. Returns 0, t keeping its place, when `seconds` passed or the queue
 * moved: the caller may look at why it waits (a session closed, a client
 * to tell its position) and call again, from this thread or another.
 */
int pool_queue_wait(struct pool_ticket *t, double wait_s, double seconds, struct worker **w,
		    char *why, size_t why_len);
/* `t` leaves the queue without a kernel (nothing if it is not in it); a
 * worker handed to it and not yet taken goes back to the pool. */
void pool_queue_leave(struct pool_ticket *t);
/* t's place in the queue (1: next to be served; 0: not in it), and in
 * *length (if not NULL) how many wait. */
int pool_queue_position(const struct pool_ticket *t, int *length);
/* How many callers wait for a kernel, for /metrics. Needs no lock. */
int pool_queue_length(void);
/* Join, wait until it is over, and return the worker or NULL (why[] set). */
struct worker *pool_take(double wait_s, char *why, size_t why_len);
/* A session is done with `w`: shut it down and forget it. Lock held. */
void pool_release(struct worker *w);
/*
 * A session's worker may have died between its calls before the parent's
 * word of it came (its socket hung up): wait, bounded, until it is
 * WORKER_DEAD, so that the call takes the dead worker's path (a new one in
 * its directory) instead of failing to reach it. Lock held (released while
 * it waits).
 */
void pool_settle_hung_up(struct worker *w);

/* [{pid, state, kernel_pid, session}] for every worker. Lock held; caller owns. */
struct json_object *pool_describe(void);
/* Whether the daemon is ready, for /health. Needs no lock. */
int pool_ready(void);

/* Main loop: drain the wake pipe and kill workers that leave their socket
 * unread (pool_io.h). Lock held. The main loop's other steps: pool_pollfds
 * and pool_handle (pool_io.h), pool_reap (pool_reap.h), pool_refill
 * (pool_spawn.h). */
void pool_tick(void);

#endif
