/*
 * worker_launch.h - the privileged parent's act of starting one worker
 * (doc/README.privsep): a private working directory owned by the kernel's
 * identity, a socketpair, posix_spawn of codeexec-worker with its end as
 * fd 3 and the parent's line to it as fd 4 (IPC_RESCUE_FD), and the
 * worker's whole START (kernel command, environment,
 * directories, identity, limits, control group, network mode), written from
 * the parent's own configuration before anyone else holds the socket.
 *
 * Only the parent calls it: the front asks for a worker (priv_msg.h) and
 * gets the other end of the socket, never a say in what START holds.
 */
#ifndef SUPERVISOR_WORKER_LAUNCH_H
#define SUPERVISOR_WORKER_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

#include "priv_msg.h"

struct config;
struct cgroup_layout;

/* What every launch needs; borrowed for the daemon's lifetime. */
struct launcher {
	const struct config *cfg;
	const struct cgroup_layout *cgroups; /* kernels' groups, or NULL: none */
	const char *worker_path;
	int verbose;			     /* the worker logs at debug level */
};

/* One started worker. */
struct launched {
	pid_t pid;
	int fd;				/* the supervisor's end of its socket */
	int rescue;			/* the parent's end of its fd 4 */
	char *workdir;			/* state_dir/sessions/NAME (owned) */
	char *rundir;			/* runtime_dir/k-ID (owned) */
	char name[PRIV_NAME_LEN + 1];	/* NAME */
};

/*
 * Start a worker for kernel identity `uid` (0: the daemon's own) and send
 * its START. It works in a new session directory, or in `reuse` (NULL:
 * none), the kept directory of an earlier worker of the same uid. 0 with
 * *out filled (caller owns its strings and fd), or -1 with why[why_len] set
 * and nothing left behind (a kept directory stays).
 */
int worker_launch(const struct launcher *l, uid_t uid, const char *reuse, struct launched *out,
		  char *why, size_t why_len);

#endif
