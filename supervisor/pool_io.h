/*
 * pool_io.h - the worker sockets (pool_io.c): frames queued for a worker
 * and written without blocking, what workers send read and dispatched by
 * what each worker's phase permits (a message out of phase, or malformed,
 * ends the worker), and the kill of a worker that leaves its socket
 * unread. Owns each worker's outgoing queue (w->out) and reader; pool_lock
 * held for all of it.
 */
#ifndef SUPERVISOR_POOL_IO_H
#define SUPERVISOR_POOL_IO_H

#include <stdint.h>

#include "pool.h"

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
/* Kill every worker that has left queued bytes unread for too long. */
void pool_io_kill_unread(void);

#endif
