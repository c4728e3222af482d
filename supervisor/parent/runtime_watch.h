/*
 * runtime_watch.h - the privileged parent's care of runtime_dir: the pid
 * file (the parent's pid), and, once a second, runtime_dir itself, the
 * pid file and the control socket made again if they disappeared (a tmpfs
 * cleaned under the daemon, an operator's rm -rf). The front hears of it
 * (RUNTIME_RENEWED, with the new control socket) or, until it works, why
 * not (RUNTIME_DEGRADED, for /health). Making them needs privilege the
 * front does not have.
 */
#ifndef SUPERVISOR_RUNTIME_WATCH_H
#define SUPERVISOR_RUNTIME_WATCH_H

struct config;
struct parent_args;

/* Write the pid file runtime_dir/codeexecd.pid; fatal if it cannot be. */
void runtime_pidfile_write(const struct config *cfg);
/* Remove it (at stop). */
void runtime_pidfile_remove(void);
/* The once-a-second check (parent_args.watch). */
void runtime_watch(struct parent_args *a);

#endif
