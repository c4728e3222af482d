/*
 * batch.h - parallel fan-out (seed 000's parallel_max_concurrency): one
 * piece of code run once per input, each in a fresh kernel from the pool
 * with the input's keys bound as variables, a bounded number at once.
 *
 * Owns the batch table. Like jobs, a batch is visible only to the MCP
 * session that started it, and is dropped job_retention_s after it ends.
 *
 * batch_lock guards the table, every batch and every item. It is taken
 * inside pool_lock (an item's thread holds pool_lock while it runs code,
 * and records the outcome under batch_lock), so the functions below may be
 * called with or without pool_lock.
 */
#ifndef SUPERVISOR_BATCH_H
#define SUPERVISOR_BATCH_H

#include <stdint.h>

#include <json-c/json.h>

#include "session.h"

struct config;

/*
 * Start running `code` for each object of `inputs` (borrowed), at most
 * `concurrency` at once and only while sessions and batch kernels together
 * stay under pool.max_sessions, then reading `result_variable`; each kernel
 * has USER_IDENTITY `identity`. With `from_dir` (0: none), a session
 * directory of the same identity, each item's kernel starts in a copy of it
 * (made as the item starts) with checkpoint `from_checkpoint` loaded (NULL:
 * the latest; batch_from.h) instead of an empty one from the pool.
 * Returns the new batch's id (storage of the batch: copy it before the
 * batch can expire).
 */
const char *batch_start(const struct config *cfg, const char *owner, const char *identity,
			const char *code,
			struct json_object *inputs, double timeout_s, const char *result_variable,
			int concurrency, uint32_t from_dir, const char *from_checkpoint);
/*
 * Cancel batch `id` of `owner`: pending items never start, running ones
 * are interrupted (and killed with their kernel if they ignore it). Returns
 * its report (caller owns), or NULL if `owner` may not see it. pool_lock held.
 */
struct json_object *batch_cancel(const char *id, const char *owner);
/* The session `owner` ended: so do its batches. pool_lock held. */
void batch_session_closed(const char *owner);
/* Nonzero while a batch of session `owner` has items to run. pool_lock held. */
int batch_running(const char *owner);
/* The state of batch `id` as seen by `owner`, or NULL if it may not see it. */
struct json_object *batch_report(const char *id, const char *owner);
/* Drop finished batches older than `retention_s`. */
void batch_expire(int retention_s);

#endif
