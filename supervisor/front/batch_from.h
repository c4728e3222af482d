/*
 * batch_from.h - a batch item's kernel that starts from a session's state
 * (parallel_execute's from_session): the privileged parent copies the
 * source session's directory, its latest checkpoint included, into a new
 * one of a kernel uid of its own (FORK_DIR, as fork_session does), a
 * worker is started there (pool_revive.h), and the checkpoint is loaded
 * into its kernel. The item's kernel thus never reads the source's files,
 * and loads only a checkpoint of the same identity's session.
 */
#ifndef SUPERVISOR_BATCH_FROM_H
#define SUPERVISOR_BATCH_FROM_H

#include <stddef.h>
#include <stdint.h>

struct config;
struct worker;

/*
 * A worker (owned: pool_release it) in a copy of session directory `dir`,
 * its checkpoint `checkpoint` (NULL: the latest) loaded, waiting at most
 * `wait_s` for it; NULL with why[why_len] and nothing left behind.
 * pool_lock held (released while it waits).
 */
struct worker *batch_from_kernel(const struct config *cfg, uint32_t dir, const char *checkpoint,
				 double wait_s, char *why, size_t why_len);

#endif
