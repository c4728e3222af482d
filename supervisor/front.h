/*
 * front.h - the unprivileged front's life (doc/README.privsep): HTTP and
 * MCP, sessions, jobs and batches, the control socket's protocol, and the
 * pool's logic, driving each worker over the socket the privileged parent
 * passed; one poll() loop that reads the workers and the parent and acts
 * on the flags the signal handlers set; a graceful stop on TERM.
 */
#ifndef SUPERVISOR_FRONT_H
#define SUPERVISOR_FRONT_H

struct config;

/* What front_main needs; borrowed. */
struct front_args {
	struct config *cfg; /* the front reloads it on HUP */
};

/*
 * The front's entry point (parent.h's front_main_fn), in the confined
 * child: `arg` is a struct front_args. Never returns.
 */
void front_main(void *arg, int sock, int control_fd, int ready_fd);

#endif
