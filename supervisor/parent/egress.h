/*
 * egress.h - the parent's side of the egress proxy (egress_proxy.h): it
 * starts `codeexecd --egress-proxy` when egress.allow is not empty, as the
 * sidecars' user (sidecar_spawn_self), with the rules of its own
 * configuration on the command line and one end of a SOCK_SEQPACKET pair
 * as its stdin; makes each worker's socket runtime_dir/egress/NAME.sock
 * itself when it starts the worker (the kernel's uid's, mode 0600: no
 * other session can connect to it) and hands the listening descriptor to
 * the proxy with the line "open NAME -", removes it when the worker is
 * reaped ("close NAME"); restarts the proxy a second after it exits,
 * handing it the open sockets again; and ends it by closing that socket
 * last at stop. An isolated kernel reaches its socket through the
 * worker's forwarder (worker/egress_forward.h) on 127.0.0.1:3128, which
 * the proxy variables of egress_kernel_env() name.
 */
#ifndef SUPERVISOR_EGRESS_H
#define SUPERVISOR_EGRESS_H

#include <stddef.h>
#include <sys/types.h>

#include "config.h"
#include "netmode.h"

/*
 * Start the proxy if `cfg` (borrowed for the daemon's life) asks for one,
 * its directory owned by `uid`; it logs to stderr when `foreground`. 0,
 * or -1 with why.
 */
int egress_start(const struct config *cfg, uid_t uid, int foreground, char *why,
		 size_t why_len);
/* Worker `name`, whose kernel runs as `uid` (0: as our user), started, or was reaped. */
void egress_open(const char *name, uid_t uid);
void egress_close(const char *name);
/*
 * Worker `name` now runs MCP session `session` of `identity` (the front's
 * EGRESS_BIND): the proxy's audit lines name them from now on, and a
 * restarted proxy is told again.
 */
void egress_bind(const char *name, const char *session, const char *identity);
/*
 * Whether `cfg`'s kernels reach the proxy: egress.allow is set and they are
 * isolated (seccomp kernels get no way yet). Only then is a worker given a
 * socket, so that no kernel of another mode can connect to one.
 */
static inline int
egress_for_kernels(const struct config *cfg)
{
	return cfg->egress_allow.n > 0 && cfg->kernel_network_mode == NET_ISOLATED;
}
/* The egress socket START names for worker `name`, or NULL (as above). Caller frees. */
char *egress_socket_for(const struct config *cfg, const char *name);
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
