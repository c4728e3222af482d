/*
 * pool_io.h - what the workers send (pool_io.c): their sockets polled,
 * read, and each message dispatched by what the worker's phase permits (a
 * message out of phase, or malformed, ends the worker) to pool_exec.c or
 * pool_reap.c; queued writes flushed on POLLOUT (pool_send.h), and the
 * kill of a worker that leaves its socket unread. Owns each worker's
 * reader; pool_lock held for all of it.
 */
#ifndef SUPERVISOR_POOL_IO_H
#define SUPERVISOR_POOL_IO_H

#include <poll.h>

#include "pool_state.h"

/*
 * Main loop helpers. pool_pollfds() fills up to `max` entries (lock held)
 * and returns how many; pool_handle() processes the revents (lock held):
 * reads what workers sent, writes what is queued for them.
 */
int pool_pollfds(struct pollfd *pfd, int max);
void pool_handle(const struct pollfd *pfd, int n);
/* Kill every worker that has left queued bytes unread for too long. */
void pool_io_kill_unread(void);

#endif
