/*
 * pool_reap.h - worker death (pool_reap.c): a worker killed for breaking
 * the protocol, a worker's exit settled (its call failed with WorkerDied
 * through pool_exec.h, its kernel and group removed, early deaths counted
 * for the refill backoff), the struct freed once no session holds it, and
 * the pool's shutdown. Frees every struct worker; pool_lock held unless said.
 */
#ifndef SUPERVISOR_POOL_REAP_H
#define SUPERVISOR_POOL_REAP_H

#include "pool_state.h"

/* A worker broke the protocol (`why`, borrowed): kill it, trust it no more. */
void worker_kill(struct worker *w, const char *why);
/* Unlink and free a worker that has exited and that no session holds. */
void worker_free(struct worker *w);
/* Collect exited workers (main loop). */
void pool_reap(void);
/* Ask every worker to shut down and wait (bounded) for them to exit. Lock
 * NOT held: it takes it while it sends and reaps. */
void pool_stop(void);

#endif
