/*
 * pool_spawn.h - starting workers (pool_spawn.c): the warm pool's size,
 * the early-death backoff's effect on refills, each worker's working and
 * runtime directories, and the START that tells it its kernel. Owns the
 * worker executable's path; a worker it spawns is owned by the pool once
 * adopted into pool.workers. pool_refill (pool.h) is its entry point.
 */
#ifndef SUPERVISOR_POOL_SPAWN_H
#define SUPERVISOR_POOL_SPAWN_H

/* Remember the worker executable (borrowed) and whether it logs verbosely. */
void pool_spawn_init(const char *worker_path, int verbose);

#endif
