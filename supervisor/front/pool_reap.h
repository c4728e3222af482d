/*
 * pool_reap.h - worker death (pool_reap.c): a worker's exit, as the
 * privileged parent reports it, settled (its call failed with WorkerDied
 * through pool_exec.h, its kernel and group removed, early deaths counted
 * for the refill backoff), the struct freed once no session holds it, and
 * the pool's shutdown. Frees every struct worker; pool_lock held unless said.
 */
#ifndef SUPERVISOR_POOL_REAP_H
#define SUPERVISOR_POOL_REAP_H

#include "pool_state.h"
#include "priv_msg.h"

/* Unlink and free a worker that has exited and that no session holds. */
void worker_free(struct worker *w);
/*
 * Act on what the privileged parent said (main loop): workers it reaped,
 * kernels it refused to pin, and runtime_dir's news, handed to the
 * function pool_on_runtime set. If the parent is gone, the front exits.
 */
void pool_reap(void);
/* Who hears of RUNTIME_RENEWED (with the new control socket or -1, which
 * it then owns) and RUNTIME_DEGRADED (a reason; NULL with RENEWED). */
typedef void (*pool_runtime_fn)(const char *degraded, int control_fd);
void pool_on_runtime(pool_runtime_fn fn);
/* A session directory the parent kept from before (DIR_LEFT) goes to `fn`
 * (session_journal.h); without one, it is removed. */
typedef void (*pool_dir_left_fn)(const struct priv_dir_left *d);
void pool_on_dir_left(pool_dir_left_fn fn);
/*
 * A worker the front before this one had (WORKER_LEFT), taken over
 * (pool_take_over, pool_spawn.h), goes to `left` (session_journal.h), which
 * gives it to its session or releases it; without one, it is killed. Once
 * it is RESUMED, or dead before, `resumed` hears of it (pool_resumed).
 */
typedef void (*pool_worker_left_fn)(const struct priv_worker_left *l, struct worker *w);
typedef void (*pool_resumed_fn)(struct worker *w);
void pool_on_worker_left(pool_worker_left_fn left, pool_resumed_fn resumed);
/* Taken-over worker `w` is resumed, or dead (its state says): its
 * session may go on. */
void pool_resumed(struct worker *w);
/* Ask every worker to shut down and wait (bounded) for them to exit. Lock
 * NOT held: it takes it while it sends and reaps. */
void pool_stop(void);

#endif
