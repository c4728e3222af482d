/*
 * pool_state.h - the bottom of the pool: its types, the state its parts
 * share, the lock that guards them and the wake pipe (pool_state.c). It
 * includes no other pool header. The pool's parts, each with its own
 * header, stack above it; each includes only what is below it:
 *
 *   pool_state.c  struct worker and struct call, pool_lock, the wake pipe,
 *                 worker_set_state and the counts /health reads
 *   pool_send.c   the queue of frames to each worker, written without blocking
 *   pool_exec.c   one execution on a worker (send)
 *   pool_spawn.c  spawning a worker, its START, the warm pool's refill (send)
 *   pool_reap.c   worker death: killing, reaping, freeing, shutdown (exec, send)
 *   pool_io.c     reading the workers' sockets and dispatching each message
 *                 by the worker's phase (exec, reap, send)
 *   pool.c        the top: taking and releasing workers, /status and
 *                 /health numbers; pool.h, the public face, includes the
 *                 parts' headers that callers outside the pool use
 *   pool_revive.c beside it: a session's own worker in its kept directory
 *
 * Owns pool_lock (rules in pool.h) and the wake pipe; the workers in
 * pool.workers are the pool's (spawned by pool_spawn.c, freed by
 * pool_reap.c).
 */
#ifndef SUPERVISOR_POOL_STATE_H
#define SUPERVISOR_POOL_STATE_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <json-c/json.h>

#include "buf.h"
#include "ipc.h"
#include "priv_msg.h"

struct config;

/*
 * A session's request for a worker in its own kept directory (pool_revive.h):
 * its owner keeps it until it is over, and the main loop serves it.
 */
struct pool_revival {
	struct pool_revival *next;
	uint32_t dir;	    /* the kept directory */
	int asked;	    /* the main loop asked the parent */
	struct worker *w;   /* the worker started for it (owned once READY), or NULL */
	char why[PRIV_REASON_MAX + 64]; /* why it failed, or "" */
};

enum worker_state {
	WORKER_STARTING, /* spawned, kernel not ready yet */
	WORKER_IDLE,	 /* READY, waiting in the pool */
	WORKER_ASSIGNED, /* serving one session */
	WORKER_CLOSING,	 /* SHUTDOWN sent */
	WORKER_DEAD,	 /* exited and reaped; kept while a session points at it */
};

/* Where a call is on its way (session_run in session.c moves it on). */
enum call_phase {
	CALL_NEW,     /* not yet in its session's line */
	CALL_IN_LINE, /* waiting for the earlier executions of its session */
	CALL_TAKING,  /* its session's first: in the pool's queue for a kernel */
	CALL_RUNNING, /* sent to the worker: its code is no longer needed */
	CALL_ENDED,   /* has its result */
};

/*
 * A place in the pool's queue for a kernel (pool.h): callers that wait for
 * an idle worker are served in the order they joined, none passing another.
 * Its owner keeps it while it waits and until it took what it was given.
 */
struct pool_ticket {
	struct pool_ticket *next;  /* the one that joined after it */
	struct worker *given;	   /* handed to it, not yet taken by its caller (owned) */
	unsigned long number;	   /* in order of joining, from 1; 0: not in the queue */
	double joined;		   /* monotonic s */
	double moved;		   /* monotonic s: joined, or a kernel last became ready */
	unsigned long ready_seen;  /* pool.kernels_ready at `moved` */
	unsigned long failures;	   /* start failures when it joined */
	int first_position;	   /* its place when it joined */
	int position;		   /* its place as last seen, for the log */
};

/* Whether the worker sends the call's output as it comes (OUTPUT). */
enum call_stream {
	CALL_STREAM_OFF,   /* no: stdout and stderr come once, in the RESULT */
	CALL_STREAM_ASKED, /* STREAM sent; STREAMING, with the output so far, to come */
	CALL_STREAM_ON,	   /* yes: someone streams progress or polls the job */
};

/* What a call asks of the worker: code to run, or a look at outputs/. */
enum call_kind {
	CALL_EXECUTE,	/* EXECUTE; RESULT answers */
	CALL_FILE_LIST, /* FILE_LIST; FILES answers */
	CALL_FILE_OPEN, /* FILE_OPEN of the path given as code; FILE answers */
	CALL_FILE_WRITE, /* FILE_WRITE of `write`; FILE answers */
};

/*
 * One execution and what it produced so far. The caller owns it
 * (call_init/call_clear); the main loop appends streamed output and sets
 * the result, broadcasting `cond` at each change. `out` and `err` fill
 * only while the call streams; the result holds all of its output.
 */
struct call {
	uint32_t id;
	int done;
	enum call_kind kind;
	/* CALL_FILE_OPEN: the descriptor FILE passed (owned), or -1. */
	int fd;
	const struct ipc_file_write *write; /* CALL_FILE_WRITE's message, borrowed */
	enum call_phase phase;
	enum call_stream stream;
	struct json_object *result; /* set when done; owned by the call */
	/* The MIME types the caller asked for (owned, NULL-terminated; NULL:
	 * allow_mime as configured), narrowing allow_mime at EXECUTE. */
	char **allow_mime;
	struct buf out;		    /* stdout streamed so far */
	struct buf err;		    /* stderr streamed so far */
	unsigned long changes;	    /* bumped at every output and at the end */
	int cancelled;		    /* do not start it if it has not started */
	int silent;		    /* the daemon's own cell, not the agent's code */
	struct call *next_in_line;  /* the session's queue (session.c) */
	struct timespec turn_deadline; /* its timeout, while it waits in line */
	struct pool_ticket ticket;  /* CALL_TAKING: its place in the pool's queue */
	double timeout_s;	    /* EXECUTE's, for the message of a kill */
	double rescue_s;	    /* EXECUTE's: a checkpoint before a kill may take this
				     * (ipc_msg.h; the caller's, 0: none) */
	struct timespec kill_deadline; /* running: a worker silent until then is killed */
	double sent;		    /* monotonic s: EXECUTE queued for the worker; 0: never */
	double returned;	    /* monotonic s: its result came; 0: not yet */
	/*
	 * A kernel's input() (pool_exec_input): EXECUTE's stdin, set when the
	 * client can answer; the prompt waiting for its answer (owned; NULL:
	 * none), the JSON-RPC id it was asked under ("": not asked yet), and
	 * whether someone drives the call who can ask (progress.c): without
	 * one, a prompt is answered with end of input at once.
	 */
	int allow_stdin;
	char *input_prompt;
	char input_id[48];
	int asker;
	/* The front's own prompt (code mode's approval, upstream_call.c): its
	 * answer goes to input_to(input_to_arg, ...) instead of the kernel. */
	void (*input_to)(void *arg, int how, const char *value);
	void *input_to_arg;
	double stdin_wait_s;	    /* RESULT's, for the timings */
	/* Code mode: the upstream tool its kernel's call waits for, as
	 * "UPSTREAM.TOOL" ("": none), and how often that changed. */
	char upstream_note[160];
	unsigned upstream_notes;
	pthread_cond_t cond;
};

void call_init(struct call *c);
void call_clear(struct call *c);

struct worker {
	struct worker *next;
	pid_t pid;	     /* for log lines and status: the parent alone signals it */
	uint32_t priv_id;    /* the parent's id for it (parent_link.h) */
	uint32_t dir_id;     /* the parent's id for its working directory */
	pid_t kernel_pid;    /* READY's, claimed from the parent; or 0 */
	int fd;
	struct ipc_reader reader;
	enum worker_state state;
	int owned;	     /* a session holds this worker */
	const char *session; /* id of that session, for status reports (borrowed) */
	int ever_ready;
	char *workdir;	     /* the kernel's working directory (owned) */
	uid_t uid;	     /* the kernel's identity from kernel_uid_range, or 0 */
	unsigned generation; /* pool.generation when it was spawned */
	char *death;	     /* how it died, once it did (owned) */
	char *cause;	     /* why the supervisor killed it, if it did (owned) */
	int kernel_lost;     /* its kernel died while idle: the next one is new */
	/* Started in a session's kept directory for that session alone (a
	 * revival, pool_revive.h): never idle in the pool, never handed out. */
	int reserved;
	int keep_dir;	     /* freed without removing its directory: a session keeps it */
	/* Taken over from the front before this one (WORKER_LEFT), RESUMED
	 * not come yet: its session waits, busy (pool_spawn.h). */
	int resuming;
	double resume_by;    /* monotonic s: killed if still resuming then */
	struct call *call;   /* the execution in flight, or NULL */
	struct buf out;	     /* frames queued for the worker (main loop writes them) */
	size_t out_off;	     /* bytes of `out` already written */
	double out_since;    /* monotonic s: `out` became pending or last moved */
};


/* The pool's memory. Defined in pool_state.c; guarded by pool_lock. */
struct pool_state {
	struct worker *workers;		     /* every worker not freed yet */
	pthread_cond_t ready_cond;	     /* a worker came, died or failed; the queue moved */
	const struct config *cfg;	     /* borrowed for the daemon's lifetime */
	int stopping;			     /* pool_stop began: no refill, takers fail */
	int takers;			     /* tickets in the queue for a kernel */
	struct pool_ticket *queue_head;	     /* the queue for kernels, first come first */
	struct pool_ticket *queue_tail;
	unsigned long tickets;		     /* tickets ever handed out */
	unsigned long kernels_ready;	     /* READYs of first kernels so far */
	int early_deaths;		     /* workers in a row that died before READY */
	time_t backoff_until;		     /* no refill before this time */
	double refill_at;		     /* monotonic: no refill for the warm target before */
	/*
	 * Bumped when runtime_dir is made again: workers spawned before then
	 * failed for a reason that has gone, so their failures neither back
	 * off the refill nor become the reason takers are given.
	 */
	unsigned generation;
	struct pool_revival *revivals;	     /* sessions waiting for their kernel back */
};
extern struct pool_state pool;

void pool_lock(void);
void pool_unlock(void);
/* The lock itself, for condition variables that wait under it. */
pthread_mutex_t *pool_mutex(void);

/* Make the wake pipe; fatal if it cannot. Once, before the main loop. */
void pool_wake_init(void);
/* Wake the main loop (from any thread) so it re-reads the pool's state. */
void pool_wake(void);
/* Read end of the wake pipe, for the main loop's poll set. */
int pool_wake_fd(void);

/* Every change of a worker's state goes here, so that /health's count of
 * idle workers needs no lock. Lock held. */
void worker_set_state(struct worker *w, enum worker_state st);
/* A new worker, spawned STARTING, joins the counts. Once; lock held. */
void worker_counted(struct worker *w);
/* Idle workers, for /health. Needs no lock. */
int pool_idle_count(void);
/* Workers starting their kernel, for /metrics. Needs no lock. */
int pool_starting_count(void);
/* Workers that are, or will soon be, available to a new session. Lock held. */
int pool_spare_count(void);
/* Workers not reaped yet. Lock held. */
int pool_live_count(void);

#endif
