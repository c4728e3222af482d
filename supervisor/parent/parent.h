/*
 * parent.h - the privileged parent (doc/README.privsep): after start-up it
 * forks the unprivileged front and then only serves it, through the
 * monitor (monitor.h), on one SOCK_SEQPACKET socket: it starts, ends and
 * reaps workers, pins and kills their kernels, removes session directories
 * and sweeps kernel uids. It parses nothing but priv_msg.h records and wait
 * statuses; it keeps runtime_dir, the control socket and the pid file,
 * which need privilege to make again; it passes TERM, HUP and USR1 on to
 * the front; and when the front dies it ends every worker and, per
 * front_restart, starts a new front or exits non-zero.
 */
#ifndef SUPERVISOR_PARENT_H
#define SUPERVISOR_PARENT_H

#include <sys/types.h>

#include "worker_launch.h"

struct config;
struct cgroup_layout;
struct control_access;

/* The front's entry point, in the child that `parent` forked: `sock` is
 * its end of the protocol socket, `control_fd` the control socket (or -1),
 * `ready_fd` the start-up readiness pipe (or -1). It confines itself and
 * never returns. */
typedef void (*front_main_fn)(void *arg, pid_t parent, int sock, int control_fd, int ready_fd);

struct parent_args {
	const struct config *cfg;
	struct launcher launcher;		/* cgroups there: kernels' groups, or NULL */
	struct cgroup_layout *cgroups_owned;	/* removed at the end; NULL: none */
	int control_fd;				/* the listening control socket, or -1 */
	struct control_access *control;		/* where it is, who may use it */
	front_main_fn front;
	void *front_arg;
	uid_t front_uid;			/* the front's identity; -1: the parent's */
	gid_t front_gid;
	/* Once a second unless stopping: runtime_watch.h's check, or NULL. */
	void (*watch)(struct parent_args *a);
};

/*
 * Fork the first front (it gets `ready_fd`; the parent closes its copy).
 * Before privdrop_apply: the front empties its bounding set with the
 * parent's CAP_SETPCAP. Fatal if the fork fails.
 */
void parent_fork_front(struct parent_args *a, int ready_fd);

/*
 * The parent's loop, after privdrop_apply and uid_init: until a TERM
 * ends the front and every worker, or the front dies and front_restart says
 * exit. Returns the exit status.
 */
int parent_run(struct parent_args *a);

/* Send the front `type` (RUNTIME_RENEWED or RUNTIME_DEGRADED) with
 * `reason` (or NULL) and `fd` (borrowed, or -1); a failure is logged. */
void parent_tell_front(enum priv_type type, const char *reason, int fd);

/*
 * Serve a front that is not our child (tests/unit/test_pool.c plays it) on
 * `sock` (owned) until it closes its end and every worker is reaped.
 */
void parent_serve(struct parent_args *a, int sock);

#endif
