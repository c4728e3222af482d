/*
 * kernel_child.h - what a kernel-to-be does to itself before it starts:
 * its own session, death with the process that made it, signals back at
 * default, only the descriptors it needs, the sandbox's steps (sandbox.h),
 * its runtime directory as its own mount namespace shows it, and its
 * working directory.
 *
 * One implementation for every way a kernel comes to be: kernel_spawn.c
 * runs it between fork and exec; a kernel forked from a template
 * (pool.start: template) runs the same code before it starts ipykernel,
 * so both are confined alike. Calls down into sandbox.c only.
 */
#ifndef WORKER_KERNEL_CHILD_H
#define WORKER_KERNEL_CHILD_H

#include <sys/types.h>

#include "sandbox.h"

/* What the child was doing when it failed (sandbox.h's stages start at 16). */
enum kernel_child_stage { KERNEL_CHILD_SETUP, KERNEL_CHILD_CHDIR, KERNEL_CHILD_EXEC };

/* Everything the child needs, borrowed; made before the fork. */
struct kernel_child {
	const struct sandbox *sb;
	const struct sandbox_launch *ln;
	const char *runtime_dir;
	const char *cwd;	/* ln->start_dir wins when set */
	int conn_fd;		/* the connection file, kept */
	int dir_fd;		/* runtime_dir, replaced by the namespace's view */
	int in_fd;		/* becomes 0 */
	int out_fd;		/* becomes 1 and 2 */
	pid_t parent;		/* the process the child must die with */
};

/*
 * In the child, after fork: async-signal-safe only (the worker has ZeroMQ
 * threads). 0, ready to exec or run the kernel; or -1 with errno set and
 * *stage saying which step failed.
 */
int kernel_child_enter(const struct kernel_child *c, int *stage);

#endif
