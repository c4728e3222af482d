/*
 * sidecar.h - the privileged parent's sidecars (seed 000's
 * SidecarConfig): long-lived helpers started before the pool as the daemon's
 * unprivileged user, watched, restarted with back-off, stopped last.
 *
 * Only the parent calls this: the front cannot fork (doc/README.privsep).
 * The front learns each sidecar's state from SIDECAR_STATE messages
 * (priv_msg.h); kernels learn the address from their START, which the
 * parent writes (kernel_env.c reads cfg->sidecars, whose ports
 * sidecars_start has fixed).
 */
#ifndef SUPERVISOR_SIDECAR_H
#define SUPERVISOR_SIDECAR_H

#include <poll.h>
#include <stddef.h>
#include <sys/types.h>

#include "priv_msg.h"

struct config;
struct cgroup_layout;

/*
 * Start every sidecar of cfg->sidecars (borrowed for the daemon's
 * lifetime; a port of 0 is replaced with a free one) as uid/gid
 * ((uid_t)-1: our own, which must not be root), each in a control group of
 * `cgroups` when not NULL, and wait until each answers its health_path
 * with a 2xx. 0, or -1 with why[why_len] naming the sidecar and its last
 * output (those started are then killed and reaped). A sidecar with
 * socket: true gets its relay (relay.h), and cfg its socket_path; the
 * relays log to stderr when `foreground`, else to syslog.
 */
int sidecars_start(struct config *cfg, const struct cgroup_layout *cgroups, uid_t uid, gid_t gid,
		   int foreground, char *why, size_t why_len);
/* Add the sidecars' output pipes to pfd (room for `max`); returns how many. */
int sidecars_pollfds(struct pollfd *pfd, int max);
/* Log what the sidecars wrote; restart those due; check those starting. */
void sidecars_tick(void);
/* 1 if `pid` was a sidecar (its exit is handled), else 0. */
int sidecars_child_exited(pid_t pid, int status);
/* Call `tell` with each sidecar's state if any changed or `all` is set. */
void sidecars_report(int all, void (*tell)(const struct priv_msg *m));
/* SIGTERM every sidecar, SIGKILL what is left after grace_s, reap them. */
void sidecars_stop(double grace_s);
/*
 * SIGHUP: read the configuration at `path` again and restart each sidecar
 * whose settings changed with the new ones, leaving the others running. A
 * change of the list's length or of a sidecar's name, url_env_var, host,
 * port or socket (which kernels and the front hold) is logged and waits
 * for a restart of the daemon.
 */
void sidecars_reload(const char *path);
/* How many sidecars are configured. */
size_t sidecars_count(void);
/*
 * Start our own executable with `args` (borrowed, NULL-terminated; the
 * option first) as the sidecars' user and group, with no capability,
 * no_new_privs and a parent-death signal, its stdin `in` (-1: /dev/null)
 * and its output on our stderr, in its own process group: the relays and
 * the egress proxy (egress.h). Its pid, or -1 with why. Call after
 * sidecars_start.
 */
pid_t sidecar_spawn_self(const char *const *args, int in, char *why, size_t why_len);

#endif
