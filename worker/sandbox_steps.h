/*
 * sandbox_steps.h - the steps a child takes between fork and exec, the
 * same in every sandbox mode: enter the cgroup, set the rlimits, become
 * the kernel's identity, drop capabilities.
 *
 * Below both sandbox.c and the per-mode backends (sandbox_isolated.c,
 * sandbox_seccomp.c) and sweep.c, which call it; it calls none of them.
 * Every step is async-signal-safe (the worker has ZeroMQ threads) and
 * returns 0, or -1 with errno.
 */
#ifndef WORKER_SANDBOX_STEPS_H
#define WORKER_SANDBOX_STEPS_H

#include <sys/resource.h>
#include <sys/types.h>

/* Write "0" (ourselves) to each of the n cgroup.procs descriptors in fds. */
int sandbox_enter_cgroup(const int *fds, int n);
/* RLIMIT_NOFILE and RLIMIT_FSIZE, soft and hard; 0 leaves one as it is. */
int sandbox_set_rlimits(rlim_t nofile, rlim_t fsize);
/* Become uid/gid with gid as the only group, the bounding set emptied first. */
int sandbox_become(uid_t uid, gid_t gid);
/* Drop every capability, the bounding and ambient sets included. */
int sandbox_drop_caps(void);

#endif
