/* sandbox_steps.c - see sandbox_steps.h. */
#include "autoconf.h"

#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cap-ng.h>

#include "sandbox_steps.h"

/* Empty the bounding set while we still have CAP_SETPCAP (the uid change keeps it otherwise). */
static int
drop_bounding(void)
{
	int present;

	/* Only what is there: a worker whose supervisor emptied the set already
	 * lacks the CAP_SETPCAP that dropping needs. */
	for (int cap = 0; (present = prctl(PR_CAPBSET_READ, cap, 0, 0, 0)) >= 0; cap++)
		if (present == 1 && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1)
			return -1;
	return 0;
}

int
sandbox_become(uid_t uid, gid_t gid)
{
	if (drop_bounding() == -1 || setgroups(1, &gid) == -1)
		return -1;
	if (setresgid(gid, gid, gid) == -1 || setresuid(uid, uid, uid) == -1)
		return -1;
	/* A uid change makes us undumpable, which would lock us out of /proc/self/uid_map. */
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

int
sandbox_drop_caps(void)
{
	capng_clear(CAPNG_SELECT_ALL);
	if (capng_apply(CAPNG_SELECT_ALL) == 0)
		return 0;
	/*
	 * Without CAP_SETPCAP (an unprivileged worker) the bounding set cannot
	 * shrink; no_new_privs keeps it from ever filling the other sets.
	 */
	capng_clear(CAPNG_SELECT_ALL);
	return capng_apply(CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT) == 0 ? 0 : -1;
}

int
sandbox_enter_cgroup(const int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (write(fds[i], "0", 1) != 1)
			return -1;
	return 0;
}

/* Soft and hard, so the kernel cannot raise them. */
int
sandbox_set_rlimits(rlim_t nofile, rlim_t fsize)
{
	struct rlimit r;

	if (nofile) {
		r.rlim_cur = r.rlim_max = nofile;
		if (setrlimit(RLIMIT_NOFILE, &r) == -1)
			return -1;
	}
	if (fsize) {
		r.rlim_cur = r.rlim_max = fsize;
		if (setrlimit(RLIMIT_FSIZE, &r) == -1)
			return -1;
	}
	return 0;
}
