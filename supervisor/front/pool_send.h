/*
 * pool_send.h - frames to the workers (pool_send.c): each message is
 * encoded into the worker's queue (w->out) and written as far as its
 * socket takes it at once; the main loop writes the rest on POLLOUT, so
 * nothing ever blocks on a worker. Owns each worker's outgoing queue,
 * and the end of a worker that can no longer be talked to (worker_kill);
 * pool_lock held for all of it.
 */
#ifndef SUPERVISOR_POOL_SEND_H
#define SUPERVISOR_POOL_SEND_H

#include <stdint.h>

#include "pool_state.h"

/*
 * Queue message `msg` (the struct of `type` in ipc_msg.h, borrowed; NULL
 * for the types without fields) for `w`; never blocks. 0, or -1 with errno
 * set (EPIPE: the worker is gone; EMSGSIZE: too large; EINVAL: a value the
 * codec refuses).
 */
int worker_send(struct worker *w, unsigned type, uint32_t id, const void *msg);
/* Write what is queued for `w` as far as its socket takes it now. */
void worker_flush(struct worker *w);
/* Forget what is queued for `w`: written, or never to be read. */
void worker_drop_queue(struct worker *w);
/*
 * `w` broke the protocol or stopped answering (`why`, borrowed): ask the
 * parent to kill it, and trust it no more (its socket is closed now; its
 * death comes later, from the parent).
 */
void worker_kill(struct worker *w, const char *why);

#endif
