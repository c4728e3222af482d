/* job.c - see job.h. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "handle.h"
#include "job.h"
#include "log.h"
#include "memtrim.h"
#include "metrics.h"
#include "xmalloc.h"

/* job_lock: the table `jobs` and every job's `refs`. (`kept` is written only
 * by a holder of a reference, and read by job_expire once there is none.) */
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static struct job *jobs;

const char *
job_status_name(enum job_status st)
{
	static const char *const names[] = {
		[JOB_RUNNING] = "running",     [JOB_COMPLETED] = "completed",
		[JOB_FAILED] = "failed",       [JOB_CANCELLED] = "cancelled",
		[JOB_TIMED_OUT] = "timed_out",
	};
	return names[st];
}

/* What a finished execution's result says about how it ended. */
static enum job_status
final_status(struct job *j)
{
	struct json_object *ok, *err, *type;

	if (j->cancel_requested)
		return JOB_CANCELLED;
	if (json_object_object_get_ex(j->call.result, "success", &ok) &&
	    json_object_get_boolean(ok))
		return JOB_COMPLETED;
	if (json_object_object_get_ex(j->call.result, "error", &err) &&
	    json_object_object_get_ex(err, "type", &type) &&
	    strcmp(json_object_get_string(type), "TimeoutError") == 0)
		return JOB_TIMED_OUT;
	return JOB_FAILED;
}

/* Queued and kernel seconds of ended job `j` (see job_timings). */
static void
job_phases(const struct job *j, double *queued, double *kernel)
{
	const struct call *c = &j->call;
	double returned = c->returned > 0 ? c->returned : j->ended;

	*queued = (c->sent > 0 ? c->sent : j->ended) - j->arrived;
	*kernel = c->sent > 0 ? returned - c->sent : 0;
}

/* Count how ended job `j` went, for /metrics; the daemon's own silent
 * queries are not calls. */
static void
job_count(const struct job *j)
{
	double queued, kernel;

	if (j->silent)
		return;
	if (j->status == JOB_TIMED_OUT)
		metrics_add(METRICS_TIMEOUTS, 1);
	else if (j->status == JOB_CANCELLED)
		metrics_add(METRICS_CANCELS, 1);
	job_phases(j, &queued, &kernel);
	metrics_observe(METRICS_QUEUED, queued);
	metrics_observe(METRICS_KERNEL, kernel);
	metrics_observe(METRICS_TOTAL, j->ended - j->arrived);
}

/* `seconds` as milliseconds, to the microsecond, never negative. */
static struct json_object *
json_ms(double seconds)
{
	char text[32];
	double ms = seconds > 0 ? seconds * 1e3 : 0;

	snprintf(text, sizeof(text), "%.3f", ms);
	return json_object_new_double_s(ms, text);
}

struct json_object *
job_timings(const struct job *j, double answered)
{
	struct json_object *o = json_object_new_object();
	double queued, kernel;

	job_phases(j, &queued, &kernel);
	json_object_object_add(o, "queued_ms", json_ms(queued));
	json_object_object_add(o, "kernel_ms", json_ms(kernel));
	json_object_object_add(o, "total_ms", json_ms(answered - j->arrived));
	if (j->call.stdin_wait_s > 0)
		json_object_object_add(o, "stdin_wait_ms", json_ms(j->call.stdin_wait_s));
	return o;
}

int
job_run(struct job *j, double seconds, int on_change)
{
	if (j->status != JOB_RUNNING)
		return 1;
	if (!session_run(j->session, &j->call, j->code, j->timeout_s, j->silent, seconds,
			 on_change))
		return 0;
	j->status = final_status(j);
	j->finished = time(NULL);
	j->ended = clock_mono();
	job_count(j);
	session_put(j->session);
	j->session = NULL;
	pthread_cond_broadcast(&j->call.cond);
	job_unref(j); /* the driver's reference */
	return 1;
}

/* A backgrounded job's thread: drive it to the end. */
static void *
job_thread(void *arg)
{
	pool_lock();
	job_run(arg, -1, 0);
	pool_unlock();
	return NULL;
}

void
job_background(struct job *j)
{
	pthread_attr_t attr;
	pthread_t tid;

	/* The code the driver lent goes with it: keep a copy if not yet sent. */
	if (j->call.phase < CALL_RUNNING && j->code_copy == NULL)
		j->code = j->code_copy = xstrdup(j->code);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&tid, &attr, job_thread, j);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		errno = rc;
		fatal("pthread_create for a job");
	}
}

struct job *
job_new(struct session *session, const char *owner, const char *code, double timeout_s,
	int silent, struct json_object *request_id)
{
	struct job *j = xcalloc(1, sizeof(*j));

	handle_mint(j->id);
	snprintf(j->owner, sizeof(j->owner), "%s", owner);
	snprintf(j->session_id, sizeof(j->session_id), "%s", session->id);
	snprintf(j->identity, sizeof(j->identity), "%s", session->identity);
	j->created = time(NULL);
	j->session = session;
	session->refs++;
	j->code = code;
	j->timeout_s = timeout_s;
	j->silent = silent;
	j->request_id = request_id ? json_object_get(request_id) : NULL;
	call_init(&j->call);
	/* In line now, in the caller's order, not when its driver gets the lock. */
	session_enqueue(session, &j->call);
	j->status = JOB_RUNNING;
	j->started = j->arrived = clock_mono();
	j->refs = 2; /* the caller's and the driver's */
	pthread_mutex_lock(&job_lock);
	j->next = jobs;
	jobs = j;
	pthread_mutex_unlock(&job_lock);
	return j;
}

struct job *
job_adopt(const struct job_record *r, struct json_object *result)
{
	struct job *j = xcalloc(1, sizeof(*j));
	double ago = difftime(time(NULL), r->finished);

	snprintf(j->id, sizeof(j->id), "%s", r->id);
	snprintf(j->owner, sizeof(j->owner), "%s", r->owner);
	snprintf(j->identity, sizeof(j->identity), "%s", r->identity);
	snprintf(j->session_id, sizeof(j->session_id), "%s", r->session_id);
	j->created = r->created;
	call_init(&j->call);
	j->call.result = result;
	j->call.done = 1;
	j->status = r->status;
	j->kept = j->journaled = 1;
	j->finished = r->finished;
	j->ended = clock_mono() - (ago > 0 ? ago : 0);
	j->started = j->arrived = j->ended;
	pthread_mutex_lock(&job_lock);
	j->next = jobs;
	jobs = j;
	pthread_mutex_unlock(&job_lock);
	return j;
}

void
job_each_kept(void (*fn)(struct job *j, void *arg), void *arg)
{
	pthread_mutex_lock(&job_lock);
	for (struct job *j = jobs; j; j = j->next)
		if (j->kept)
			fn(j, arg);
	pthread_mutex_unlock(&job_lock);
}

struct job *
job_start(struct session *session, const char *owner, const char *code, double timeout_s,
	  int silent, struct json_object *request_id)
{
	struct job *j = job_new(session, owner, code, timeout_s, silent, request_id);

	job_background(j);
	return j;
}

void
job_watch(struct job *j, double seconds)
{
	double end = clock_mono() + seconds;

	if (j->status != JOB_RUNNING || j->call.stream != CALL_STREAM_OFF)
		return;
	if (j->call.phase == CALL_RUNNING && j->session && j->session->worker)
		pool_stream(j->session->worker, &j->call);
	else if (j->call.phase < CALL_RUNNING)
		j->call.stream = CALL_STREAM_ON; /* its EXECUTE will say so */
	while (j->call.stream == CALL_STREAM_ASKED && j->status == JOB_RUNNING) {
		double left = end - clock_mono();
		if (left <= 0)
			break;
		job_wait(j, left, 1);
	}
}

struct job *
job_get(const char *id, const char *owner)
{
	struct job *found = NULL;

	pthread_mutex_lock(&job_lock);
	for (struct job *j = jobs; j && !found; j = j->next) {
		if (strcmp(j->id, id) == 0 && strcmp(j->owner, owner) == 0) {
			j->refs++;
			found = j;
		}
	}
	pthread_mutex_unlock(&job_lock);
	return found;
}

struct job *
job_get_task(const char *id, const char *identity)
{
	struct job *found = NULL;

	pthread_mutex_lock(&job_lock);
	for (struct job *j = jobs; j && !found; j = j->next) {
		if (j->kept && strcmp(j->id, id) == 0 && strcmp(j->identity, identity) == 0) {
			j->refs++;
			found = j;
		}
	}
	pthread_mutex_unlock(&job_lock);
	return found;
}

struct job *
job_find_request(const char *owner, struct json_object *request_id)
{
	struct job *found = NULL;

	pthread_mutex_lock(&job_lock);
	for (struct job *j = jobs; j && !found; j = j->next) {
		if (j->status == JOB_RUNNING && j->request_id && strcmp(j->owner, owner) == 0 &&
		    json_object_equal(j->request_id, request_id)) {
			j->refs++;
			found = j;
		}
	}
	pthread_mutex_unlock(&job_lock);
	return found;
}

/* Unlink and free `j`; nobody holds it any more. job_lock held. */
static void
job_free(struct job *j)
{
	for (struct job **pp = &jobs; *pp; pp = &(*pp)->next) {
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	}
	call_clear(&j->call);
	json_object_put(j->request_id);
	free(j->code_copy);
	free(j);
}

void
job_unref(struct job *j)
{
	/* A finished job stays listed, unreferenced, until job_expire drops it. */
	pthread_mutex_lock(&job_lock);
	j->refs--;
	pthread_mutex_unlock(&job_lock);
}

int
job_wait(struct job *j, double seconds, int on_change)
{
	struct timespec deadline = clock_deadline(seconds >= 0 ? seconds : 0);
	unsigned long seen = j->call.changes;

	while (j->status == JOB_RUNNING && !(on_change && j->call.changes != seen)) {
		if (seconds < 0)
			pthread_cond_wait(&j->call.cond, pool_mutex());
		else if (pthread_cond_timedwait(&j->call.cond, pool_mutex(), &deadline) ==
			 ETIMEDOUT)
			break;
	}
	return j->status != JOB_RUNNING;
}

void
job_wake(void *arg)
{
	struct job *j = arg;

	j->call.changes++;
	pthread_cond_broadcast(&j->call.cond);
	pthread_cond_broadcast(&pool.ready_cond);
	if (j->session)
		pthread_cond_broadcast(&j->session->turn);
}

void
job_cancel(struct job *j)
{
	if (j->status != JOB_RUNNING || j->cancel_requested)
		return;
	j->cancel_requested = 1;
	j->call.cancelled = 1;
	if (j->session == NULL)
		return;
	if (j->session->worker && j->session->worker->call == &j->call)
		pool_interrupt(j->session->worker);
	else if (j->call.phase == CALL_TAKING)
		pthread_cond_broadcast(&pool.ready_cond); /* waiting for a kernel */
	else
		pthread_cond_broadcast(&j->session->turn); /* still waiting its turn */
	log_info("job %.8s cancelled", j->id);
}

double
job_elapsed(const struct job *j)
{
	return (j->status == JOB_RUNNING ? clock_mono() : j->ended) - j->started;
}

void
job_expire(int retention_s)
{
	time_t now = time(NULL);
	struct job *j, *next;
	int freed = 0;

	/* refs 0 means its driver has put it: it is over, and nothing
	 * outside this lock can reach it any more. */
	pool_lock();
	pthread_mutex_lock(&job_lock);
	for (j = jobs; j; j = next) {
		next = j->next;
		if (j->refs == 0 && (!j->kept || difftime(now, j->finished) >= retention_s)) {
			freed += j->kept;
			job_free(j);
		}
	}
	pthread_mutex_unlock(&job_lock);
	pool_unlock();
	/* A kept (polled) job's result may have been large, and its size is
	 * not known here; such expiries are rare: trim whenever one went. */
	if (freed)
		memtrim_after(MEMTRIM_LARGE);
}
