/*
 * job.h - executions as jobs: every call to execute_{name}_code runs on a
 * thread of its own, so the HTTP thread that asked can wait for it, stream
 * its progress, or answer at once with a job id to poll (seed 000's
 * execution modes).
 *
 * Owns the job table. A job is visible only to the MCP session that started
 * it: to any other, its id answers exactly like a missing one. Finished jobs
 * are dropped job_retention_s after they end.
 *
 * Locks: a job's progress (status, its call, cancel_requested) is guarded
 * by pool_lock, since the execution it waits for is; the table and each
 * job's references by job_lock, taken inside pool_lock. Every function
 * runs with pool_lock held, except job_expire, which needs none.
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
	struct session *session;	  /* where it runs; referenced while running */
	char session_id[SESSION_ID_LEN + 1];
	char *code;
	double timeout_s;
	int silent;
	struct json_object *request_id;	  /* JSON-RPC id of its tools/call, or NULL */
	struct call call;
	enum job_status status;
	int cancel_requested;
	int kept;			  /* handed to the client to poll: retained */
	double started;			  /* monotonic seconds */
	double ended;			  /* monotonic seconds, once finished */
	time_t finished;
	int refs;
};

/*
 * Start running `code` in `session` on behalf of MCP session `owner`;
 * `request_id` (borrowed, may be NULL) lets notifications/cancelled find it.
 * Returns the job with a reference for the caller (job_unref).
 */
struct job *job_start(struct session *session, const char *owner, const char *code,
		      double timeout_s, int silent, struct json_object *request_id);
/* The job `id` if `owner` may see it, referenced; else NULL. */
struct job *job_get(const char *id, const char *owner);
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
/* Seconds since the job started (until it ended). */
double job_elapsed(const struct job *j);
const char *job_status_name(enum job_status st);
/* Drop finished jobs nobody holds: at once unless kept, else after `retention_s`. */
void job_expire(int retention_s);

#endif
