/* front_confine.c - see front_confine.h. */
#include "autoconf.h"

#include <cap-ng.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "err.h"
#include "front_confine.h"
#include "front_filter.h"

/* Say in why which step failed, with errno's text when `with_errno`; returns -1. */
static int
fail(char *why, size_t why_len, const char *step, int with_errno)
{
	if (with_errno)
		return err_set(why, why_len, "front: %s: %s", step, strerror(errno));
	return err_set(why, why_len, "front: %s", step);
}

int
front_confine(uid_t uid, gid_t gid, int filter, int *bounding_kept, char *why, size_t why_len)
{
	uid_t r, e, s;
	int bounds;

	if (bounding_kept)
		*bounding_kept = 0;
	if (uid == (uid_t)-1 && geteuid() == 0)
		return fail(why, why_len, "would stay root: it needs a user of its own (set user)",
			    0);
	/* Bounding first, while CAP_SETPCAP may still be ours: after the uid
	 * change no capability is left to do it with. */
	capng_get_caps_process();
	bounds = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);
	capng_clear(CAPNG_SELECT_ALL);
	if (uid != (uid_t)-1 && uid != geteuid()) {
		int rc = capng_change_id((int)uid, (int)gid,
					 CAPNG_DROP_SUPP_GRP | CAPNG_CLEAR_BOUNDING);
		if (rc != 0) {
			snprintf(why, why_len, "front: cannot become uid %d gid %d (libcap-ng "
				 "error %d): %s", (int)uid, (int)gid, rc, strerror(errno));
			return -1;
		}
	} else {
		if (bounds && capng_apply(CAPNG_SELECT_BOUNDS) != 0)
			return fail(why, why_len, "cannot empty the capability bounding set", 1);
		if (capng_apply(CAPNG_SELECT_CAPS) != 0)
			return fail(why, why_len, "cannot clear the capability sets", 1);
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 && errno != EINVAL)
		return fail(why, why_len, "cannot clear the ambient capability set", 1);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return fail(why, why_len, "cannot set no_new_privs", 1);
	/* A uid change makes a process dumpable again; a kernel of that uid must
	 * not read the front's memory. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		return fail(why, why_len, "cannot make itself undumpable", 1);

	/* What the kernel says now, not what we asked for. */
	if (getresuid(&r, &e, &s) == -1)
		return fail(why, why_len, "getresuid", 1);
	if (uid != (uid_t)-1 && (r != uid || e != uid || s != uid))
		return fail(why, why_len, "the uid change did not take", 0);
	if (r == 0 || e == 0 || s == 0)
		return fail(why, why_len, "still uid 0", 0);
	capng_clear(CAPNG_SELECT_ALL);
	if (capng_get_caps_process() != 0)
		return fail(why, why_len, "cannot read back its capabilities", 1);
	if (capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE)
		return fail(why, why_len, "capabilities left after clearing them", 0);
	if (capng_have_capabilities(CAPNG_SELECT_BOUNDS) != CAPNG_NONE) {
		if (bounds)
			return fail(why, why_len, "the bounding set is not empty", 0);
		if (bounding_kept)
			*bounding_kept = 1;
	}
	if (filter && front_filter_install(why, why_len) == -1)
		return -1;
	return 0;
}
