/*
 * worker.h - the worker's state and how its parts share it.
 *
 *   main.c             setup, reading the supervisor's frames (fd 3) and
 *                      the zmq_poll loop; it calls the three below;
 *   lifecycle.c        the kernel's state machine: start, handshake,
 *                      seccomp lock, restart, death;
 *   route.c            kernel messages to the execution, decoded
 *                      supervisor messages to their handler, the
 *                      execution's timers;
 *   supervisor_link.c  what goes up to the supervisor on fd 3: frames
 *                      and the log sink; lifecycle.c and route.c send
 *                      through it;
 *   rescue.c           the parent's line (fd 4), through which a new
 *                      front's socket replaces fd 3 after the front died.
 * All of it runs on the one thread of the loop; struct wstate lives on
 * main()'s stack and is borrowed by every function below.
 */
#ifndef WORKER_WORKER_H
#define WORKER_WORKER_H

#include <stdint.h>

#include "execute.h"
#include "ipc.h"
#include "ipc_msg.h"
#include "jupyter.h"
#include "kernel.h"
#include "outputs.h"
#include "sandbox.h"
#include "spill.h"

enum kstate {
	K_NONE,	    /* before START */
	K_STARTING, /* spawned, handshake running */
	K_LOCKING,  /* seccomp: handshake done, the kernel installs its filter */
	K_WARMING,  /* runs START's warm_code; READY once it answers */
	K_READY,
	K_DEAD,	    /* died or was killed; the next EXECUTE starts a new one */
};

/* What to tell the supervisor once a starting kernel is ready. */
enum after_start {
	AFTER_INITIAL,	   /* READY {restarted: false}; failure ends the worker */
	AFTER_RESTART_CMD, /* READY {restarted: true}; failure ends the worker */
	AFTER_QUIET,	   /* a restart for an execution or after a timeout kill */
};

/* The worker process's state (the supervisor's view of a worker is its struct worker). */
struct wstate {
	struct ipc_reader rd;
	struct kernel_spec spec;
	char **allow_mime;		/* NULL: keep every MIME type */
	struct spill_place place;	/* where executions spill what they cut */
	struct sandbox sb;		/* identity, limits, network mode */
	char *warm_code;		/* START's; NULL: none */
	char prep_msg_id[JUPYTER_MSG_ID_MAX]; /* K_LOCKING, K_WARMING: their execute_request */
	int runtime_made;
	void *zctx;
	struct jupyter_session sess;
	struct kernel *k;
	enum kstate kstate;
	enum after_start after;
	struct exec *ex;     /* running, or waiting for a starting kernel */
	struct outputs_snap snap; /* outputs/ when ex began, for its artifacts */
	int state_lost;	     /* a kernel died: the next result says kernel_restarted */
	unsigned long dropped; /* kernel messages dropped for a bad signature */
	int rescue_fd;	     /* IPC_RESCUE_FD, or -1: none, or the parent hung up */
	double orphaned;     /* monotonic s: the front died then; 0: it lives */
	int resume_due;	     /* a new front's socket: RESUMED once idle */
	int orphan_exec;     /* the execution in flight is the old front's: unanswered */
	int quit;
	int graceful;	     /* on quit: shutdown_request before the kill */
	int exit_code;
};

/* ---- supervisor_link.c: what goes up to the supervisor ---- */

/* Send every log line to the supervisor as IPC_LOG from now on. */
void supervisor_log_start(void);
/* The supervisor is gone: write nothing more to it; log lines go to stderr. */
void supervisor_gone(void);
/* fd 3 is a new front's socket: write to it again, log lines included. */
void supervisor_back(void);

/*
 * Send message `msg` (the struct of `type`, ipc_msg.h; borrowed) to the
 * supervisor. A frame over the limit or that the codec refuses is dropped
 * (nothing was written: -1 with errno EMSGSIZE or EINVAL); any other
 * failure means the supervisor is gone (0, and the worker quits).
 */
int supervisor_send(struct wstate *w, unsigned type, uint32_t id, const void *msg);
/* supervisor_send with descriptor `fd` (borrowed) passed along (SCM_RIGHTS). */
int supervisor_send_fd(struct wstate *w, unsigned type, uint32_t id, const void *msg, int fd);
/* End the worker because the supervisor broke the protocol. */
void worker_protocol_error(struct wstate *w, const char *what);

/* ---- rescue.c: a new front after the front died ---- */

/* Take fd 4 if the parent gave one. */
void rescue_init(struct wstate *w);
/* fd 3 failed: wait for a new front if there is a line to the parent, else quit. */
void rescue_front_lost(struct wstate *w);
/* Whether the front is gone and no new one came yet (fd 3 is not read). */
int rescue_orphaned(const struct wstate *w);
/* fd 4 is readable: a new front's socket, or the parent hung up. */
void rescue_read(struct wstate *w);
/* Send RESUMED to a new front once idle. Each turn of the loop. */
void rescue_tick(struct wstate *w);
/* End an orphan that waited too long; seconds to its deadline, -1 if none. */
double rescue_timers(struct wstate *w, double now);

/* ---- lifecycle.c: the kernel's state machine ---- */

/* Start a kernel; what READY says (or whether a failure ends us) is `after`. */
void lifecycle_start(struct wstate *w, enum after_start after);
/* A kernel failed to start; `why` is borrowed. */
void lifecycle_start_failed(struct wstate *w, const char *why);
/* The handshake finished: lock a seccomp kernel, or announce it. */
void lifecycle_handshake_done(struct wstate *w);
/* Whether the kernel is still on its way to READY (started, locking, warming). */
int lifecycle_starting(const struct wstate *w);
/* A shell message while K_LOCKING or K_WARMING: maybe their reply (borrowed). */
void lifecycle_prep_replied(struct wstate *w, const struct jupyter_msg *m);
/* The kernel process has exited (and was reaped). */
void lifecycle_died(struct wstate *w);
/* A timed-out or cancelled execution ignored the interrupt: kill, answer, restart. */
void lifecycle_kill_after_grace(struct wstate *w);
/* The kernel cannot be talked to any more: kill it, restart on the next call. */
void lifecycle_kill_broken(struct wstate *w);
/*
 * While lifecycle_starting: act on the start-up deadline at `now`. Seconds
 * until the next deadline, or 0 after acting on one.
 */
double lifecycle_timers(struct wstate *w, double now);

/* ---- route.c: messages and executions ---- */

/* Send the RESULT of the current execution and forget it. */
void route_finish_exec(struct wstate *w);
/* Send execute_request for the waiting execution to the ready kernel. */
void route_send_execute(struct wstate *w);
/*
 * Receive and route the waiting messages of the kernel's `channel`
 * ("iopub", "shell", "control" or "stdin"), at most a bounded number. 1 if more
 * may be waiting.
 */
int route_kernel(struct wstate *w, const char *channel);
/* Route everything the kernel already sent on iopub (before it is gone). */
void route_drain_iopub(struct wstate *w);
/* Act on one decoded frame from the supervisor (borrowed). */
void route_supervisor(struct wstate *w, struct ipc_msg *m);
/*
 * K_READY: act on the running execution's deadlines at `now` (timeout,
 * grace, lost output). Seconds until the next one, -1 if none, 0 after
 * acting on one.
 */
double route_timers(struct wstate *w, double now);

#endif
