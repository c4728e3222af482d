/*
 * kernel_spawn.h - how a kernel process comes to be: its connection file,
 * its argv, the fork, and what the child does until exec.
 *
 * Owns the connection file (written into a memfd the kernel inherits), the
 * program's lookup on the kernel's own PATH, the "{connection_file}"
 * placeholder, and the fork and exec: the child's set-up is kernel_child.c's
 * (shared with kernels forked from a template), a failure reported by stage.
 * Knows nothing of the kernel once started (kernel.h), which calls it.
 */
#ifndef WORKER_KERNEL_SPAWN_H
#define WORKER_KERNEL_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

#include "sandbox.h"

/* Channel -> port, as written in the connection file ("<ip>-<port>"). */
enum kernel_port {
	KERNEL_PORT_SHELL = 1,
	KERNEL_PORT_IOPUB = 2,
	KERNEL_PORT_STDIN = 3,
	KERNEL_PORT_CONTROL = 4,
	KERNEL_PORT_HB = 5,
};

/* What START asked for; owned by main.c, borrowed by every kernel. */
struct kernel_spec {
	char **argv;	   /* NULL-terminated; "{connection_file}" is replaced */
	char **envp;	   /* NULL-terminated "NAME=value": the complete environment */
	char *cwd;
	char *runtime_dir; /* created by kernel_runtime_create() */
	int interrupt_by_message; /* interrupt_mode "message" rather than "signal" */
	double startup_timeout_s;
	struct sandbox *sb;	   /* identity, limits, network mode (sandbox.h) */
	char **unix_fds;	   /* START's: "NAME=PATH" connections the kernel inherits */
	int upstreams;		   /* START's: a line to code mode (upstream_link.h) */
};

/*
 * Write the connection file for a kernel at ipc endpoint `ip` (as the
 * kernel names it) with key
 * `key` into a memfd (close-on-exec; the child keeps it). Returns the
 * descriptor (caller closes it), or -1 logged.
 */
int kernel_spawn_conn_file(const char *ip, const char *key, const struct sandbox *sb);
/* argv with the placeholder replaced by conn_path. Caller frees each and the array. */
char **kernel_spawn_argv(char **argv, const char *conn_path);
/*
 * Fork and exec the kernel of spec, prepared as ln says (sandbox.h), with
 * argv, connection file conn_fd, the runtime directory's descriptor dir_fd
 * (its endpoints are under /proc/self/fd/DIR_FD), and stdout+stderr into
 * out_w. Returns its pid, or -1 with why[why_len] set (a child that failed
 * has been reaped).
 */
pid_t kernel_spawn(const struct kernel_spec *spec, const struct sandbox_launch *ln, char **argv,
		   int conn_fd, int dir_fd, int out_w, char *why, size_t why_len);

#endif
