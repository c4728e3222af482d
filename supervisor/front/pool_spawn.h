/*
 * pool_spawn.h - starting workers (pool_spawn.c): the warm pool's size,
 * the early-death backoff's effect on refills, and asking the privileged
 * parent for each worker (parent_link.h; the parent makes its directories
 * and sends its START). A worker it gets is owned by the pool once adopted
 * into pool.workers.
 */
#ifndef SUPERVISOR_POOL_SPAWN_H
#define SUPERVISOR_POOL_SPAWN_H

#include <stddef.h>
#include <stdint.h>

struct priv_worker_left;
struct worker;

/*
 * Start workers until the warm target, plus one for each caller in the
 * queue for a kernel (pool_queue_join), is met, unless refills back off.
 * Lock NOT held: it waits for the parent. Only the main loop spawns: it alone reads the parent's
 * messages, so no worker's exit is heard before it is listed.
 */
void pool_refill(void);
/*
 * Ask the parent for a worker (it makes the directories, or gives it kept
 * directory `dir`, 0: none; spawns it and sends its START) and wrap the
 * socket it passes. Lock NOT held: it waits for the parent. The worker is
 * not in the list yet (pool_adopt). NULL on failure (logged, and in why[]).
 */
struct worker *pool_spawn_in(uint32_t dir, char *why, size_t why_len);
/* Put a worker pool_spawn_in made in the list. Lock held. */
void pool_adopt(struct worker *w);
/*
 * The worker of WORKER_LEFT `l`, whose socket is `fd` (owned): one the
 * front before this one had, its kernel running (claimed: l->kernel). It
 * is in the list, a session's alone (owned and reserved, as a revival's),
 * and `resuming` until its RESUMED, which it sends once the execution the
 * old front asked for has ended; pool_resumed is called then, or at its
 * death before. It is ASSIGNED meanwhile (no start the refill waits for),
 * and killed if no RESUMED came by `resume_by`. Lock held.
 */
struct worker *pool_take_over(const struct priv_worker_left *l, int fd);
/*
 * A worker was just taken: its session's first call runs now. Starting
 * its replacement at once would spend the host's CPU on a kernel's
 * start-up (most of a second of it) while that call runs; on a small host
 * that doubled the first call. So the warm target is refilled
 * REFILL_DEFER_S later, unless a caller waits for a worker. The take also
 * counts towards the demand that raises the warm target (pool.warm_max).
 * Lock held.
 */
void pool_worker_taken(void);
/*
 * Retire one idle worker beyond the warm target, once no worker has been
 * taken for TRIM_AFTER_S: what a burst raised the pool to shrinks back.
 * Lock held.
 */
void pool_trim(void);
/* Milliseconds until a deferred refill is due (for the main loop's poll), or -1. */
int pool_refill_due_ms(void);
/*
 * runtime_dir has been made again after it disappeared: the workers
 * spawned before failed for want of it, so forget their failures (the
 * backoff and the reason takers are given) and refill at once. Lock held.
 */
void pool_runtime_renewed(void);

#endif
