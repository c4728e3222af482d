/*
 * kernel.h - one Jupyter kernel process and its sockets.
 *
 * Owns the runtime directory's contents for one kernel (ipc socket files),
 * the kernel's process once started (its own session and process group,
 * reaped through a pidfd; kernel_spawn.c forks it), the pipe carrying its
 * stdout and stderr, the ZeroMQ sockets (shell, control, iopub, stdin), the
 * start-up handshake (kernel_info until iopub is live) and the kernel's
 * end. It does not interpret executions: execute.c does.
 */
#ifndef WORKER_KERNEL_H
#define WORKER_KERNEL_H

#include <stddef.h>
#include <sys/types.h>

#include "buf.h"
#include "jupyter.h"
#include "kernel_spawn.h"
#include "sandbox.h"

/*
 * The largest message iopub accepts: a stream chunk bigger than this (one
 * print of it) makes ZeroMQ drop the connection, and the execution ends
 * with output_lost. Shell and control keep 64 MiB.
 */
#define KERNEL_IOPUB_MAX_MSG ((int64_t)256 * 1024 * 1024)
/* What an execution whose iopub went silent before status idle reports. */
#define KERNEL_LOST_OUTPUT_WHY                                                          \
	"the kernel's output channel delivered nothing after the reply: a single output " \
	"message over 256 MiB (one print or display of that size) ends it"

struct kernel {
	pid_t pid;	/* also its process group and session id */
	int pidfd;	/* readable once the kernel has exited */
	int out_fd;	/* read end of its stdout+stderr; -1 after EOF */
	int reaped;	/* waitpid collected it; status in wstatus */
	int wstatus;
	int conn_fd;	/* memfd with the connection file, until the kernel inherits it */
	char *conn_path; /* /proc/self/fd/N: no path of ours in the kernel's argv */
	char *ip;	/* "<runtime_dir>/k": sockets are <ip>-1 .. <ip>-5 */
	int dir_fd;	/* O_PATH of runtime_dir, until the kernel inherits it */
	struct jupyter_signer *signer;
	void *shell, *control, *iopub;
	/* stdin: a DEALER of the shell's routing id (the session's), since the
	 * kernel sends input_request to whoever sent the execute_request. */
	void *stdin_sock;
	struct buf out_line; /* partial output line */
	struct buf out_tail; /* the last lines, quoted when start-up fails */

	/* Start-up handshake. */
	double start_deadline;
	double next_info;    /* when to resend kernel_info_request */
	int got_info_reply;
	int got_iopub;
	char *language;
	char *language_version; /* NULL: the reply gave none */
	struct sandbox *sb;	/* borrowed from the spec */
	struct sandbox_gate *gate; /* seccomp before exec: open until the handshake is done */
	int up_fd;		/* the worker's end of the kernel's code mode line; -1: none */
	struct buf up_in;	/* what came on it, not yet a whole request */
};

/* Create runtime_dir 0700 (its parent exists). 0, or -1 logged. */
int kernel_runtime_create(const char *dir);
/* Remove runtime_dir once empty; failures are logged. */
void kernel_runtime_remove(const char *dir);

/*
 * Write a connection file with a fresh key, spawn the kernel, connect its
 * sockets and send the first kernel_info_request; `sess` (initialized by
 * the caller, once per worker) signs with the new key from now on.
 * Returns the kernel (caller owns it: kernel_destroy), or NULL with
 * why[why_len] set.
 */
struct kernel *kernel_start(const struct kernel_spec *spec, void *zctx,
			    struct jupyter_session *sess, char *why, size_t why_len);
/*
 * End the kernel: when `graceful`, ask it to shut down on control and wait
 * up to a second; then SIGKILL its process group, reap it, close everything
 * and remove its files. Sets *kp to NULL; NULL is fine.
 */
void kernel_destroy(struct kernel **kp, struct jupyter_session *sess, int graceful);

/* Feed one start-up message (channel "shell" or "iopub"); borrowed. */
void kernel_handshake_msg(struct kernel *k, const char *channel, const struct jupyter_msg *m);
/* 1 once kernel_info_reply arrived and iopub delivers. */
int kernel_ready(const struct kernel *k);
/*
 * Resend kernel_info_request when due. Returns the seconds until the next
 * timer, or -1 if the start-up deadline passed.
 */
double kernel_handshake_tick(struct kernel *k, struct jupyter_session *sess, double now);

/*
 * Replace the iopub socket with a fresh subscription. ZeroMQ ends, without
 * reconnecting, a connection that delivered a message over ZMQ_MAXMSGSIZE.
 * 0, or -1 logged (the old socket is gone either way).
 */
int kernel_reopen_iopub(struct kernel *k, void *zctx);

/*
 * 1 if iopub holds a message not yet received: output is still arriving,
 * however long ago the last one was read.
 */
int kernel_iopub_pending(struct kernel *k);

/* Interrupt the running code: SIGINT, or interrupt_request on control. */
void kernel_interrupt(struct kernel *k, struct jupyter_session *sess, int by_message);
/* Read what the kernel printed and log it line by line (debug). */
void kernel_read_output(struct kernel *k);
/* Close k's end of its code mode line (upstream_link.h), if it has one. */
void kernel_upstream_close(struct kernel *k);
/* Reap the kernel if it has exited: 1 if it has, else 0. */
int kernel_reap(struct kernel *k);
/*
 * How the reaped kernel ended, e.g. "kernel died: killed by signal 9
 * (SIGKILL)" or "kernel exited with status 1". Caller owns the string.
 */
char *kernel_exit_text(const struct kernel *k);
/* The last lines the kernel printed (borrowed, maybe empty). */
const char *kernel_output_tail(const struct kernel *k);

#endif
