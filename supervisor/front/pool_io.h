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
/* Kill every worker that has left queued bytes unread for too long, and
 * every one taken over that did not resume by its resume_by. */
void pool_io_kill_unread(void);
/*
 * Run file call `c` (c->kind set: FILE_LIST, or FILE_OPEN of `path`) on
 * `w` outside its session's line, and wait for its answer, at most
 * timeout_s: for the end of a session, when no execution runs. On the
 * thread that reads the workers (the main loop's, which expires sessions
 * and shuts down) it reads them itself; elsewhere it waits for that
 * thread. Lock held (released while waiting elsewhere).
 */
void pool_file_call(struct worker *w, struct call *c, const char *path, double timeout_s);
/*
 * A kernel's code mode request (UPSTREAM_CALL) of the execution in flight
 * goes to `fn` (upstream.h), lock held; without one it is answered by
 * nobody and the kernel's call waits for its execution's end.
 */
struct ipc_upstream_call;
typedef void (*pool_upstream_fn)(struct worker *w, uint32_t exec_id,
				 const struct ipc_upstream_call *m);
void pool_on_upstream_call(pool_upstream_fn fn);

#endif
