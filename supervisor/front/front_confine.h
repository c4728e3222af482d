/*
 * front_confine.h - make the calling process the unprivileged front
 * (doc/README.privsep, "Splitting the supervisor"): its own uid, no
 * capability in any set, an empty bounding set, no_new_privs, not dumpable,
 * and last the front's seccomp filter (front_filter.h).
 *
 * Call it in the front right after the fork from the privileged parent,
 * before any thread exists (capabilities and identities are per thread
 * until then), and before privdrop_apply runs in that process: emptying
 * the bounding set needs CAP_SETPCAP, which only a process still root has.
 * Nothing of it can be undone.
 */
#ifndef SUPERVISOR_FRONT_CONFINE_H
#define SUPERVISOR_FRONT_CONFINE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Confine the calling process. With uid/gid (not -1) it becomes that user
 * with that group only; -1 keeps the identity it has, which root may not
 * (the front must not own what root owns). `filter` nonzero installs the
 * front's seccomp filter as the last step. Checks the result from the
 * kernel's side (getresuid, capability sets); an unprivileged process
 * cannot empty its bounding set and says so in *bounding_kept (may be
 * NULL), no_new_privs keeping it from ever gaining what that set allows.
 * 0, or -1 with the failed step in why[why_len].
 */
int front_confine(uid_t uid, gid_t gid, int filter, int *bounding_kept, char *why,
		  size_t why_len);

#endif
