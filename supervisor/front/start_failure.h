/*
 * start_failure.h - why kernels cannot start, for the callers waiting for
 * one and for /health.
 *
 * When a worker reports START_FAILED (isolation could not be set up, a
 * limit could not be enforced, the kernel died or did not answer during
 * start-up), the pool records its reason here; the next READY clears it.
 * A call waiting for a kernel then fails at once with that reason instead
 * of waiting out its timeout. Writers hold pool_lock(); the reason is also
 * guarded by a mutex of its own, so /health reads it without the pool lock.
 */
#ifndef SUPERVISOR_START_FAILURE_H
#define SUPERVISOR_START_FAILURE_H

#include <json-c/json.h>

/* Record `why` (copied, cut to a few hundred bytes); NULL clears it. Pool lock held. */
void start_failure_set(const char *why);
/*
 * How many failures were recorded so far, so a waiter can tell a failure
 * that happened while it waited. Pool lock held.
 */
unsigned long start_failure_count(void);
/*
 * "no kernel could be started: <reason>", or NULL when none is recorded.
 * Valid while the pool lock is held.
 */
const char *start_failure_message(void);
/*
 * Add "kernel_start_failure": <reason> to a /health object when one is
 * recorded. Any thread; no pool lock needed.
 */
void start_failure_add(struct json_object *health);

#endif
