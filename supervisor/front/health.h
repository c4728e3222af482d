/*
 * health.h - what the daemon says about itself on /health and in the
 * control socket's status: "ok", "starting", "draining" (the operator's
 * codeexecctl drain: no new sessions, the existing ones go on), or
 * "degraded" with a reason.
 *
 * Readable from any thread without pool_lock, so that /health answers
 * while a lock holder is slow. The degraded reason is guarded by a lock of
 * its own (a leaf: nothing else is taken while it is held).
 */
#ifndef SUPERVISOR_HEALTH_H
#define SUPERVISOR_HEALTH_H

#include <stddef.h>

/* Say the daemon is degraded because of `why` (copied); NULL: it is not.
 * One reason at a time: whoever set it clears it. */
void health_set_degraded(const char *why);
/*
 * Nonzero while degraded, with the reason copied into why[why_len]. `why` may
 * be NULL to ask only whether.
 */
int health_degraded(char *why, size_t why_len);
/* Drain (nonzero) or stop draining: a draining node starts no new session. */
void health_set_draining(int on);
/* Nonzero while draining. */
int health_draining(void);

#endif
