/*
 * front.h - the unprivileged front's life (doc/README.privsep): its
 * confinement right after the fork from the privileged parent; HTTP and
 * MCP, sessions, jobs and batches, the control socket's protocol, and the
 * pool's logic, driving each worker over the socket the privileged parent
 * passed; one poll() loop that reads the workers and the parent and acts
 * on the flags the signal handlers set; a graceful stop on TERM.
 */
#ifndef SUPERVISOR_FRONT_H
#define SUPERVISOR_FRONT_H

#include <sys/types.h>

struct config;
struct control_access;

/* What front_main needs; borrowed. */
struct front_args {
	struct config *cfg; /* the front reloads it on HUP */
	/* The identity it confines itself to; -1: the parent's. */
	uid_t uid;
	gid_t gid;
	/* The control socket as the parent made it (control_access.h). */
	const struct control_access *control;
};

/*
 * The front's entry point (parent.h's front_main_fn), in the child that
 * `parent` forked: `arg` is a struct front_args. It confines itself first
 * (front_confine.h, front_filter.h), keeping no descriptor but the three it
 * is given, before privdrop_apply runs in the parent (emptying the
 * bounding set needs the parent's CAP_SETPCAP). Never returns.
 */
void front_main(void *arg, pid_t parent, int sock, int control_fd, int ready_fd);

#endif
