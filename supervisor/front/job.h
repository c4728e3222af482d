/*
 * job.h - executions as jobs (seed 000's execution modes): every call to
 * execute_{name}_code is a job, which its MCP session can poll, cancel,
 * or find by the request that started it.
 *
 * A job is run by one thread at a time, its driver (job_run). A call
 * answered synchronously is driven by the HTTP thread that received it,
 * which streams its progress meanwhile; only a call that is backgrounded
 * (async_only, adaptive promotion, a client gone before the end) gets a
 * thread of its own (job_background), which drives it to the end.
 *
 * Owns the job table. A job is visible only to the MCP session that started
 * it: to any other, its id answers exactly like a missing one. Finished jobs
 * are dropped job_retention_s after they end.
 *
 * Locks: a job's progress (status, its call, cancel_requested) is guarded
 * by pool_lock, since the execution it waits for is; the table and each
 * job's references by job_lock, taken inside pool_lock. Every function
 * runs with pool_lock held, except job_expire, which takes it.
 */
#ifndef SUPERVISOR_JOB_H
#define SUPERVISOR_JOB_H

#include <time.h>

#include <json-c/json.h>

#include "pool.h"
#include "session.h"

enum job_status {
	JOB_RUNNING,
	JOB_COMPLETED,
	JOB_FAILED,
	JOB_CANCELLED,
	JOB_TIMED_OUT,
};

struct job {
	struct job *next;
	char id[SESSION_ID_LEN + 1];
	char owner[SESSION_ID_LEN + 1];	  /* MCP session that may see the job */
	char identity[128];		  /* its session's caller: who may see it as a task */
	time_t created;			  /* wall clock, for a task's createdAt */
	struct session *session;	  /* where it runs; referenced while running */
	char session_id[SESSION_ID_LEN + 1];
	const char *code;		  /* until sent: the driver's, or code_copy */
	char *code_copy;		  /* owned; made only when backgrounded */
	double timeout_s;
	int silent;
	struct json_object *request_id;	  /* JSON-RPC id of its tools/call, or NULL */
	struct call call;
	enum job_status status;
	int cancel_requested;
	int kept;			  /* handed to the client to poll: retained */
	double arrived;			  /* monotonic s: its request came (default: started) */
	double started;			  /* monotonic seconds */
	double ended;			  /* monotonic seconds, once finished */
	time_t finished;
	int refs;
	int journaled;			  /* its result is in the journal (session_journal.h) */
};

/* What the journal keeps of a job (session_journal.h). */
struct job_record {
	const char *id, *owner, *identity, *session_id;
	time_t created, finished;
	enum job_status status;
};

/*
 * A job that runs `code` (borrowed until it is sent or backgrounded) in
 * `session` on behalf of MCP session `owner`; `request_id` (borrowed, may
 * be NULL) lets notifications/cancelled find it. It is in the session's
 * line at once, and runs as far as the caller drives it: job_run, then
 * job_background if it has not ended. Returns it with a reference for the
 * caller (job_unref), beside the driver's.
 */
struct job *job_new(struct session *session, const char *owner, const char *code,
		    double timeout_s, int silent, struct json_object *request_id);
/*
 * Drive job `j` for at most `seconds` (<0: until it ends), on this thread;
 * with `on_change`, only until something its driver may tell changes (an
 * output, its place in the pool's queue, a job_wake). Returns nonzero once
 * it has ended (then the driver is done with it).
 */
int job_run(struct job *j, double seconds, int on_change);
/* Wake j's driver, wherever it waits: its job_run(..., 1) returns. */
void job_wake(void *j);
/* The driver hands `j`, not ended, to a thread of its own. */
void job_background(struct job *j);
/*
 * A kept job of an earlier front or instance, ended with `result` (owned
 * from now on) as `r` says, listed until job_expire drops it. Lock held.
 */
struct job *job_adopt(const struct job_record *r, struct json_object *result);
/* Call `fn` with each kept job (handed to a client to poll), job_lock held
 * (fn may not call what takes it). Lock held. */
void job_each_kept(void (*fn)(struct job *j, void *arg), void *arg);
/* job_new, then job_background: a job that runs on its own thread. */
struct job *job_start(struct session *session, const char *owner, const char *code,
		      double timeout_s, int silent, struct json_object *request_id);
/*
 * Someone polls `j`: from now on its output streams (pool_stream), and
 * for at most `seconds` wait until what it printed before has come.
 */
void job_watch(struct job *j, double seconds);
/* The job `id` if `owner` may see it, referenced; else NULL. */
struct job *job_get(const char *id, const char *owner);
/*
 * The job `id` as a task (2026-07-28 tasks extension) of caller `identity`:
 * referenced, or NULL when unknown, not handed out, or another identity's
 * (the same answer).
 */
struct job *job_get_task(const char *id, const char *identity);
/* The running job started by request `request_id` of `owner`, referenced. */
struct job *job_find_request(const char *owner, struct json_object *request_id);
/*
 * Drop a reference taken by job_start, job_get or job_find_request. Unlike
 * a _put, it never frees: a finished job stays listed until job_expire.
 */
void job_unref(struct job *j);
/*
 * Wait until the job ends or `seconds` pass (<0: forever), or its output
 * changes when `on_change`. Returns nonzero once it has ended.
 */
int job_wait(struct job *j, double seconds, int on_change);
/* Interrupt the job's execution; it ends as cancelled. */
void job_cancel(struct job *j);
/*
 * The timings of ended job `j`, in ms: queued (arrival until its code went
 * to the worker), kernel (until its result came; 0 if it never ran) and
 * total (arrival until `answered`, monotonic s), and stdin_wait (the
 * code waited in input() for the client; only when it did). Caller owns.
 */
struct json_object *job_timings(const struct job *j, double answered);
/* Seconds since the job started (until it ended). */
double job_elapsed(const struct job *j);
const char *job_status_name(enum job_status st);
/* Drop finished jobs nobody holds: at once unless kept, else after
 * `retention_s`. Takes pool_lock: their results may be shared with answers
 * being written (result_to_tool), and json-c's references are not atomic. */
void job_expire(int retention_s);

#endif
