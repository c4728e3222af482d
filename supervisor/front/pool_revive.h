/*
 * pool_revive.h - a kernel for a session in the session's own directory:
 * after its worker died, the session's next call gets a new worker, which
 * the parent starts in the directory the session kept (its files, its
 * checkpoints, and under kernel_uid_range the same kernel uid, reserved
 * for it meanwhile). Such a worker is the session's alone: it never waits
 * in the pool nor is handed to another caller.
 *
 * A caller holds a struct pool_revival (pool_state.h) from join until the
 * wait is over or it leaves; the main loop starts the workers
 * (pool_revive_serve). Lock held for all but pool_revive_serve.
 */
#ifndef SUPERVISOR_POOL_REVIVE_H
#define SUPERVISOR_POOL_REVIVE_H

#include <stddef.h>
#include <stdint.h>

struct pool_revival;
struct worker;

/* Ask for a worker in kept directory `dir`, which `r` (the caller's) now
 * stands for: the directory is the request's until it is over. */
void pool_revive_join(struct pool_revival *r, uint32_t dir);
/*
 * Wait at most `seconds` (<0: no bound), releasing the lock meanwhile. 1
 * once it is over: *w is the worker, its kernel ready (ASSIGNED, owned), or
 * NULL with why[why_len] and the directory the caller's again. 0 when
 * `seconds` passed first, or the pool moved: call again to go on.
 */
int pool_revive_wait(struct pool_revival *r, double seconds, struct worker **w, char *why,
		     size_t why_len);
/* As pool_revive_wait, never waiting nor releasing the lock: 0 while it
 * goes on. */
int pool_revive_poll(struct pool_revival *r, struct worker **w, char *why, size_t why_len);
/* The caller gives up (its session closed): what was started for it ends,
 * and the directory goes with it. */
void pool_revive_leave(struct pool_revival *r);
/* Start, one at a time, the workers asked for. Main loop, lock NOT held. */
void pool_revive_serve(void);

#endif
