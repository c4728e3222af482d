/*
 * session.h - MCP sessions: ids, the table, and one execution at a time.
 *
 * A session is created by `initialize` and gets its kernel worker from the
 * pool at its first execution. The table and every session are guarded by
 * pool_lock (see pool.h): all functions run with it held, except
 * session_count, which needs no lock. A session found with session_get()
 * stays valid until session_put().
 */
#ifndef SUPERVISOR_SESSION_H
#define SUPERVISOR_SESSION_H

#include <pthread.h>
#include <sys/types.h>
#include <time.h>

#include <json-c/json.h>

#include "err.h"
#include "handle.h"

struct worker;

#define SESSION_ID_LEN HANDLE_LEN /* the longest id (handle.h) */

/* What the working directory holds, as last counted (tools_session.c). */
struct dir_usage {
	long long bytes;  /* of regular files */
	long files;	  /* entries of any kind */
	int complete;	  /* 0: counting stopped at a bound; these are minimums */
	int unreadable;	  /* the front may not read it (kernel_uid_range): no count */
	double measured;  /* monotonic seconds of the count; 0: never counted */
	int measuring;	  /* a thread counts it now, without the lock */
};

struct session {
	struct session *next;
	char id[SESSION_ID_LEN + 1];
	time_t created;
	time_t last_used;
	struct worker *worker; /* NULL until the first execution */
	int busy;	       /* an execution runs now */
	int closed;	       /* removed from the table */
	int refs;
	char identity[128];    /* who the client is; "anonymous" without auth */
	pid_t told_kernel;     /* the kernel last told USER_IDENTITY (session.c) */
	char *restart_note;    /* a restart that telling it saw, for the next result */
	pthread_cond_t turn;   /* broadcast when `busy` clears or the line moves */
	struct call *line_head; /* executions waiting their turn, in order */
	struct call *line_tail;
	struct dir_usage usage; /* cached: counting many files takes long */
	int requests;	       /* JSON-RPC requests in flight (mcp.c) */
	unsigned streams;      /* GET streams ever opened; numbers them (mcp.c) */
	int stateless;	       /* an execution session of the 2026-07-28 path (mcp.c):
				* named by a tool argument, never by Mcp-Session-Id */
	int transient;	       /* session_transient's: the caller alone, no kernel */
	int elicitation;       /* the client declared form elicitation at initialize */
	/* code mode: per upstream (upstream.h), calls made and the rate's
	 * bucket (upstream_call.c); NULL: none yet */
	struct upstream_use {
		unsigned calls;
		double tokens; /* calls it may start now */
		double at;     /* monotonic s tokens was counted at; 0: never */
	} *upstream_use;
	int upstream_inflight;	  /* code mode: its kernel's requests being answered */
	int named;	       /* calls that named it by execution_session_id */
	/* The caller's session session_create closed to make room for this
	 * one ("": none), and the key that bound it; told by the first result. */
	char reclaimed[SESSION_ID_LEN + 1];
	const char *reclaimed_by;
	/* Its kernel state (session_state.h). */
	int revive_due;		     /* the kernel may be new: load the last checkpoint first */
	struct json_object *revived; /* what that loading said, for the next result */
	struct json_object *save_failed; /* why the last automatic checkpoint was not taken */
	double checkpointed;	     /* monotonic s of the last automatic one; 0: none */
	int saving;		     /* an automatic checkpoint runs: the session is busy */
	int hibernating;	     /* and the session hibernates once it is taken */
	int checkpoints;	     /* taken by the daemon, automatic or asked for */
	struct session *save_next;   /* the queue of sessions to checkpoint */
	/* Its directory, kept when its worker died, for the next worker
	 * (pool_revive.h): 0 while a worker holds it. */
	uint32_t kept_dir;
	char *kept_workdir;		/* its path (owned), for display */
	struct pool_revival *revival;	/* the next worker asked for (owned), or NULL */
	time_t hibernated;		/* when it hibernated: no kernel, state kept; 0: not */
	time_t hibernate_retry;		/* a failed hibernation is not tried before */
	const char *lost_because;	/* why its next worker's kernel is new (static);
					 * NULL: its worker died */
};

/* What bounds session_create. */
struct session_limits {
	int max_sessions; /* pool.max_sessions: sessions and batch kernels together */
	int share;	  /* config_identity_share: sessions of one identity */
};

/*
 * New session of `identity` (copied). While the identity holds its share,
 * or the pool is full, its least recently used idle session (no call
 * running or waiting, no batch running, no reference held) is closed first, logged, counted and
 * named in the new one's `reclaimed`; with session_hibernate_after it
 * hibernates instead, losing nothing, and a full pool hibernates anyone's. NULL with why[why_len] when neither
 * bound can be met so: every session of the identity is busy, or the pool
 * is full of others', or the node is draining (health.h).
 */
struct session *session_create(const char *identity, const struct session_limits *lim,
			       char *why, size_t why_len);
/*
 * The caller of a 2026-07-28 request that names no execution session:
 * `identity` (copied) and nothing else. Never in the table, never given a
 * kernel; session_put frees it. Caller owns the reference.
 */
struct session *session_transient(const char *identity);
/*
 * A session of an earlier front or instance (session_journal.h) under its
 * old `id`, in the table with no reference held and no kernel; NULL if a
 * session of that id exists.
 */
struct session *session_adopt(const char *id, const char *identity, time_t created,
			      time_t last_used);
/* Call `fn` with each session in the table (lock held; fn must not close). */
void session_each(void (*fn)(struct session *s, void *arg), void *arg);
/* Find a live session and take a reference, or NULL. */
struct session *session_get(const char *id);
/*
 * Whether `caller` may run code in, inspect or close `target`: both belong
 * to the same identity. Knowing a session's id is part of the proof, so an
 * anonymous caller may resume a session whose id it holds.
 */
int session_may_use(const struct session *caller, const struct session *target);
/*
 * Whether `caller` sees `target` in list_sessions. Anonymous callers are
 * indistinguishable, so they see only their own session.
 */
int session_visible(const struct session *caller, const struct session *target);
/* Drop a reference taken by session_create or session_get. */
void session_put(struct session *s);
/* End a session: its kernel is shut down once no execution runs. */
void session_close(struct session *s);
/*
 * Close every session idle longer than `idle_s` seconds (0: never), and
 * an execution session no call named again after its first longer than
 * `unused_s` (0: idle_s alone).
 */
void session_expire(double idle_s, double unused_s);
/*
 * Sessions idle longer than `after_s` (0: never) are hibernated: once the
 * saver thread checkpointed the namespace, the kernel and worker end and
 * the session keeps its directory (session_state.h). Hibernated sessions
 * whose last call is older than `retention_s` (0: forever) are closed, and
 * beyond `max_hibernated` the least recently used. Main loop, lock held.
 */
void session_hibernate_idle(double after_s, double retention_s, int max_hibernated);
/*
 * Let s's worker go, keeping its directory (files, checkpoints, and under
 * kernel_uid_range the uid reserved with it) for the worker its next call
 * gets (pool_revive.h), which loads the last checkpoint. Lock held.
 */
void session_keep_dir(struct session *s);
/* Mark s hibernated (on) or not, for the counts. Lock held. */
void session_set_hibernated(struct session *s, int on);
/*
 * `w` is s's worker from now on; with egress.allow the parent is told
 * (EGRESS_BIND), so that the egress proxy's audit lines name s and its
 * identity.
 */
void session_take_worker(struct session *s, struct worker *w);
/* How many sessions are hibernated; needs no lock. */
int session_hibernated_count(void);
/* Nonzero while an execution runs in any session. */
int session_any_busy(void);
/* Every session's directory outlives its worker (a stop with
 * persist_sessions: the journal names them for the next start). */
void session_keep_all_dirs(void);
/* Close every session (shutdown). */
void session_close_all(void);
/* How many sessions there are; needs no lock (for /health). */
int session_count(void);
/* How many of them (and of closed ones whose last call still ends) run a
 * call now; needs no lock (for /metrics). */
int session_busy_count(void);
/*
 * Kernels held outside sessions (batch items) change by `delta`; they count
 * against pool.max_sessions with the sessions that are not hibernated.
 * Needs no lock.
 */
void session_hold_kernels(int delta);
/* Sessions that hold a kernel (not hibernated) and kernels held outside
 * them together; needs no lock. */
int session_kernels(void);
/*
 * Call `fn` with the id of each session as it closes (pool_lock held), so
 * that what runs on a session's behalf elsewhere (batches) ends with it.
 * Set once, before the first session.
 */
void session_on_close(void (*fn)(const char *id));
/*
 * Ask `fn` whether work runs on a session's behalf elsewhere (batches,
 * pool_lock held): session_create never closes such a session to make
 * room. Set once, before the first session.
 */
void session_busy_elsewhere(int (*fn)(const char *id));
/*
 * Call `fn` with each session as it closes, once it is out of the table
 * and before its worker is released (pool_lock held; fn may release it
 * while it waits): on-close publishing (pubhooks.c). Set once, at start.
 */
void session_before_close(void (*fn)(struct session *s));
/*
 * `fn` says whether that function needs the session's worker (on_close
 * publishers list and open outputs/ through it): a hibernated session
 * that session_retention or max_hibernated_sessions closes gets a worker
 * in its directory first (its kernel restores nothing), and closes once
 * it is ready. Set once, at start.
 */
void session_close_needs_worker(int (*fn)(void));
/*
 * Call `fn` with each execution's call once its result came, before the
 * session's next call may run (pool_lock held; fn may release it): it may
 * add to c->result (auto_publish, pubhooks.c). Set once, at start.
 */
void session_after_run(void (*fn)(struct session *s, struct call *c));
/*
 * Every session `caller` sees, each referenced (session_put each), in a
 * NULL-terminated array the caller frees.
 */
struct session **session_list_visible(const struct session *caller);
/* [{id, identity, created, last_used, busy, hibernated, worker_pid,
 * kernel_uid}] of every session. Caller owns. */
struct json_object *session_describe(void);

struct call;

/*
 * Seed 000's USER_IDENTITY: pooled kernels start before anyone owns them,
 * with "anonymous". Tell the kernel of `w` its owner's `identity` with a
 * silent execution, unless it is anonymous or this kernel (its pid, kept
 * in *told; 0: none yet) was told already: again after a restart, where
 * the kernel's pid is known. Lock held (released while the kernel runs it).
 * When that silent execution was the new kernel's first, returns the
 * restart note of its stderr (caller frees), which belongs to the next
 * result; else NULL.
 */
char *session_tell_identity(struct worker *w, const char *identity, pid_t *told);

/*
 * The daemon's own work in the session's kernel (an automatic checkpoint,
 * a hibernation) takes the session's turn, as a call does (busy), and is
 * over: the next call in line may run. Lock held.
 */
void session_take_turn(struct session *s);
void session_turn_over(struct session *s);

/* Put `c` in line for the session's kernel: executions run in this order. */
void session_enqueue(struct session *s, struct call *c);
/*
 * Run `code` in the session's kernel once every execution in line before
 * `c` has finished (c joins the line now if it is not in it); the result
 * lands in c->result.
 */
void session_execute(struct session *s, struct call *c, const char *code, double timeout_s,
		     int silent);
/*
 * session_execute for at most `seconds` (<0: until it ends), on the
 * calling thread: wait c's turn, take a kernel, send the code (borrowed,
 * needed only until c->phase is CALL_RUNNING), wait for the result.
 * Returns 1 once c has ended (c->done, the result in c->result), 0 when
 * `seconds` passed first, or with `on_change` once c->changes moved (an
 * output, a wake of its driver) or the pool's queue did: call it again,
 * from this or another thread, to go on; one thread at a time. A session's first execution waits for a
 * kernel in the pool's queue (pool.h; at most a minute after the last
 * kernel came) in phase CALL_TAKING, its place in c->ticket.
 */
int session_run(struct session *s, struct call *c, const char *code, double timeout_s,
		int silent, double seconds, int on_change);

#endif
