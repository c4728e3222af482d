/*
 * privdrop.h - privileged-minimal: what the supervisor keeps of root.
 *
 * Started as root with `user` configured, codeexecd gives its directories
 * to that user and changes to it before any thread exists, keeping only the
 * capabilities the configured features need (a table in privdrop.c, each
 * with its reason; in the default configuration, kernels sharing `user` in
 * control groups, the two that keep those groups root's). Kept capabilities
 * are also made ambient so that workers, which do the per-kernel work,
 * inherit them; workers drop them all before a kernel starts.
 */
#ifndef SUPERVISOR_PRIVDROP_H
#define SUPERVISOR_PRIVDROP_H

#include <stddef.h>
#include <sys/types.h>

struct config;

/*
 * Change to cfg->user (and group) if started as root; `cgroups`: kernels
 * get control groups (cgroup_probe found a usable layout). Returns 0, or
 * -1 with the reason in why.
 */
int privdrop_apply(const struct config *cfg, int cgroups, char *why, size_t why_len);
/* Resolve cfg->user and group into uid and gid (-1 when user is unset). 0, or -1 with why. */
int privdrop_lookup(const struct config *cfg, uid_t *uid, gid_t *gid, char *why, size_t why_len);

#endif
