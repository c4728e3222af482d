/*
 * control_access.h - the control socket as the privileged parent made it
 * (control_socket.h), for the front that answers on it (control.h): where
 * it is, since when, and who may use it. The parent works this out as it
 * makes the socket, before privileges are dropped; the front could not
 * (it holds no privilege, and it never consults the user database, whose
 * modules may do what its seccomp filter does not allow), and inherits it
 * across the fork.
 *
 * Kernels run under kernel_uid_range or, without it, under the daemon's
 * own uid and gid: none of those ids may ever be let in.
 */
#ifndef SUPERVISOR_CONTROL_ACCESS_H
#define SUPERVISOR_CONTROL_ACCESS_H

#include <sys/types.h>
#include <sys/un.h>
#include <time.h>

#include "config.h"

struct control_access {
	const struct config *cfg;	/* kernel_uid_range, name; borrowed */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* the socket file */
	time_t started;			/* the daemon's uptime counts from it */
	uid_t daemon_uid;		/* ours once privileges are dropped */
	gid_t kernel_gid;		/* without kernel_uid_range */
	int admin_ok;			/* daemon_uid is no kernel's uid */
	gid_t control_gid;		/* control_group, or -1 */
};

/* Nonzero if a kernel may run under uid (or, as a group, gid). */
static inline int
control_kernel_id(const struct control_access *a, unsigned id, int is_gid)
{
	if (a->cfg->kernel_uid_first != 0)
		return id >= a->cfg->kernel_uid_first && id <= a->cfg->kernel_uid_last;
	return is_gid ? id == a->kernel_gid : id == a->daemon_uid;
}

#endif
