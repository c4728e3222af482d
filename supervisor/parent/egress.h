/*
 * egress.h - the parent's side of the egress proxy (egress_proxy.h): it
 * starts `codeexecd --egress-proxy` when egress.allow is not empty, as the
 * sidecars' user (sidecar_spawn_self), with the rules of its own
 * configuration on the command line and one end of a socket pair as its
 * stdin; tells it each worker it starts ("open NAME -") and reaps ("close
 * NAME"), so that each worker has its socket runtime_dir/egress/NAME.sock;
 * restarts it a second after it exits, telling it the open workers again;
 * and ends it by closing that socket last at stop.
 *
 * Kernels do not reach those sockets yet (issue 36, stage 4).
 */
#ifndef SUPERVISOR_EGRESS_H
#define SUPERVISOR_EGRESS_H

#include <stddef.h>
#include <sys/types.h>

struct config;

/*
 * Start the proxy if `cfg` (borrowed for the daemon's life) asks for one,
 * its directory owned by `uid`; it logs to stderr when `foreground`. 0,
 * or -1 with why.
 */
int egress_start(const struct config *cfg, uid_t uid, int foreground, char *why,
		 size_t why_len);
/* Worker `name` started, or was reaped. */
void egress_open(const char *name);
void egress_close(const char *name);
/* 1 if `pid` was the proxy (then restarted by egress_tick), else 0. */
int egress_child_exited(pid_t pid, int status);
/* Restart the proxy when it is due. */
void egress_tick(void);
/* End the proxy. */
void egress_stop(void);

/*
 * The CA bundle kernels trust when some host is intercepted (egress.inject),
 * below runtime_dir: the system's CAs and the proxy's, made by the proxy.
 */
#define EGRESS_CA_BUNDLE "egress/ca/bundle.pem"

#endif
