/*
 * pool.h - the worker processes: spawning, the warm pool, IPC dispatch,
 * reaping and throttled refill.
 *
 * Its parts, each with its own header (pool_state.h lists them): pool.c
 * takes and releases workers; pool_spawn.c spawns them and refills the
 * warm pool; pool_io.c reads, writes and dispatches on their sockets;
 * pool_reap.c settles their deaths and the shutdown. Running one execution
 * on a worker, and what the worker answers to it, is pool_exec.c's part
 * (struct call, pool_execute*, pool_interrupt, pool_stream).
 *
 * Owns every struct worker and pool_lock, which guards the workers, the
 * session table and every struct call: the main loop and the HTTP threads
 * take it for every change to workers or sessions. An HTTP thread that runs
 * code waits on its struct call's condition variable; the main loop, which
 * alone reads and writes worker sockets, completes the call.
 *
 * Nothing that holds pool_lock may block on I/O, a child or the file
 * system: messages to workers are queued and written by the main loop
 * (POLLOUT), directories are removed by remover.c, /health reads counters
 * that need no lock. A worker that leaves its socket unread for
 * WORKER_UNREAD_S seconds is killed, and its session's call fails with
 * WorkerDied saying so.
 *
 * The supervisor's locks, in the order they are taken (an outer one may be
 * held when an inner one is taken, never the reverse):
 *   pool_lock    (pool.c)    workers, sessions, calls, jobs' progress
 *   config_lock  (reload.c)  the settings SIGHUP reloads; reload holds
 *                            pool_lock too, so holders of either may read
 *   job_lock     (job.c)     the job table and jobs' references
 *   batch_lock   (batch.c)   the batch table and items' outcomes
 *   remover_lock, health_lock  leaves, held only to copy a value
 */
#ifndef SUPERVISOR_POOL_H
#define SUPERVISOR_POOL_H

#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <json-c/json.h>

#include "buf.h"
#include "ipc.h"

struct config;
struct cgroup_layout;

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
	CALL_RUNNING, /* sent to the worker: its code is no longer needed */
	CALL_ENDED,   /* has its result */
};

/* Whether the worker sends the call's output as it comes (OUTPUT). */
enum call_stream {
	CALL_STREAM_OFF,   /* no: stdout and stderr come once, in the RESULT */
	CALL_STREAM_ASKED, /* STREAM sent; STREAMING, with the output so far, to come */
	CALL_STREAM_ON,	   /* yes: someone streams progress or polls the job */
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
	enum call_phase phase;
	enum call_stream stream;
	struct json_object *result; /* set when done; owned by the call */
	struct buf out;		    /* stdout streamed so far */
	struct buf err;		    /* stderr streamed so far */
	unsigned long changes;	    /* bumped at every output and at the end */
	int cancelled;		    /* do not start it if it has not started */
	struct call *next_in_line;  /* the session's queue (session.c) */
	struct timespec turn_deadline; /* its timeout, while it waits in line */
	struct timespec kill_deadline; /* running: a worker silent until then is killed */
	pthread_cond_t cond;
};

void call_init(struct call *c);
void call_clear(struct call *c);

struct worker {
	struct worker *next;
	pid_t pid;
	pid_t kernel_pid;    /* READY's, once proven a child of pid (kernelpid.h); or 0 */
	int kernel_pidfd;    /* pins kernel_pid; -1 when none */
	int fd;
	struct ipc_reader reader;
	enum worker_state state;
	int owned;	     /* a session holds this worker */
	const char *session; /* id of that session, for status reports (borrowed) */
	int ever_ready;
	char *workdir;	     /* the kernel's working directory (owned) */
	char *rundir;	     /* its private runtime directory (owned) */
	uid_t uid;	     /* the kernel's identity from kernel_uid_range, or 0 */
	char *death;	     /* how it died, once it did (owned) */
	char *cause;	     /* why the supervisor killed it, if it did (owned) */
	struct call *call;   /* the execution in flight, or NULL */
	struct buf out;	     /* frames queued for the worker (main loop writes them) */
	size_t out_off;	     /* bytes of `out` already written */
	double out_since;    /* monotonic s: `out` became pending or last moved */
};

/*
 * Remember the configuration and, when kernels get control groups, their
 * layout (both borrowed for the daemon's lifetime; layout may be NULL).
 * Call before pool_start.
 */
void pool_init(const struct config *cfg, const struct cgroup_layout *layout,
	       const char *worker_path, int verbose);
/* Spawn the warm workers. */
void pool_start(void);
/* Ask every worker to shut down and wait (bounded) for them to exit. */
void pool_stop(void);

void pool_lock(void);
void pool_unlock(void);
/* The lock itself, for condition variables that wait under it. */
pthread_mutex_t *pool_mutex(void);

/*
 * Take a READY worker for a session, waiting at most `wait_s` seconds for
 * one. Caller holds the lock. Returns NULL with why[why_len] set when none came.
 */
struct worker *pool_take(double wait_s, char *why, size_t why_len);
/* A session is done with `w`: shut it down and forget it. Lock held. */
void pool_release(struct worker *w);
/*
 * Run `code` on `w` and wait for its result, which lands in c->result
 * (the RESULT payload, or a result describing why there is none). Lock held
 * on entry and exit (released while waiting). `silent` runs it without
 * history or execution count, for the daemon's own queries.
 */
void pool_execute(struct worker *w, struct call *c, const char *code, double timeout_s,
		  int silent);
/*
 * pool_execute in two steps, for a caller that does other things while it
 * waits: pool_execute_start queues EXECUTE (streaming when c->stream is
 * not off) and returns at once; pool_execute_wait waits at most `seconds`
 * (<0: until the result) and returns 1 once c->done. Lock held.
 */
void pool_execute_start(struct worker *w, struct call *c, const char *code, double timeout_s,
			int silent);
int pool_execute_wait(struct worker *w, struct call *c, double seconds);
/*
 * Someone now watches call `c`, running on `w`: ask the worker to stream
 * its output (STREAM; c->stream turns on when STREAMING brings what came
 * before). Nothing if it streams already or is no longer w's. Lock held.
 */
void pool_stream(struct worker *w, struct call *c);
/* Ask the kernel of `w` to interrupt the execution in flight. Lock held. */
void pool_interrupt(struct worker *w);

/* [{pid, state, kernel_pid, session}] for every worker. Lock held; caller owns. */
struct json_object *pool_describe(void);
/* Numbers for /health. Need no lock. */
int pool_idle_count(void);
int pool_ready(void);

/* Wake the main loop (from any thread) so it re-reads the pool's state. */
void pool_wake(void);

/*
 * Main loop helpers. pool_pollfds() fills up to `max` entries (lock held)
 * and returns how many; pool_handle() processes the revents (lock held):
 * reads what workers sent, writes what is queued for them; pool_reap()
 * collects exited workers (lock held); pool_tick() kills workers that leave
 * their socket unread (lock held); pool_refill() starts workers until the
 * warm target, plus one for each thread waiting in pool_take, is met,
 * unless refills back off (lock NOT held: it makes directories and spawns).
 * Only the main loop spawns: it alone holds the capabilities workers
 * inherit, and it alone reaps, so no worker exits unseen before it is
 * listed.
 */
int pool_pollfds(struct pollfd *pfd, int max);
void pool_handle(const struct pollfd *pfd, int n);
void pool_reap(void);
void pool_tick(void);
void pool_refill(void);
/* Read end of the wake pipe, for the main loop's poll set. */
int pool_wake_fd(void);

#endif
