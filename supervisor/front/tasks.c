/* tasks.c - executions as MCP tasks on the 2026-07-28 path; see tasks.h. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "config.h"
#include "job.h"
#include "result.h"
#include "tasks.h"
#include "tools.h"

/* How often a client is asked to poll, in ms. */
#define POLL_INTERVAL_MS 1000

int
tasks_method(const char *method)
{
	return strcmp(method, "tasks/get") == 0 || strcmp(method, "tasks/update") == 0 ||
	       strcmp(method, "tasks/cancel") == 0;
}

/* `t` as ISO 8601 UTC. Caller owns. */
static struct json_object *
iso_time(time_t t)
{
	char out[32];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, sizeof(out), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_object_new_string(out);
}

/* A task's status: an execution that raised or timed out still completed
 * (its result has isError); only a cancelled one did not. */
static const char *
status_of(const struct job *j)
{
	switch (j->status) {
	case JOB_RUNNING: return "working";
	case JOB_CANCELLED: return "cancelled";
	default: return "completed";
	}
}

/* The Task fields of `j`. Caller owns. */
static struct json_object *
task_of(const struct config *cfg, const struct job *j)
{
	struct json_object *t = json_object_new_object();
	int running = j->status == JOB_RUNNING;

	json_object_object_add(t, "taskId", json_object_new_string(j->id));
	json_object_object_add(t, "status", json_object_new_string(status_of(j)));
	json_object_object_add(t, "statusMessage",
			       json_object_new_string(running ? "The code is running."
							      : job_status_name(j->status)));
	json_object_object_add(t, "createdAt", iso_time(j->created));
	json_object_object_add(t, "lastUpdatedAt", iso_time(running ? j->created : j->finished));
	/* Kept job_retention_s after it ends; while it runs, no end is known. */
	if (running)
		json_object_object_add(t, "ttlMs", NULL);
	else
		json_object_object_add(
			t, "ttlMs",
			json_object_new_int64(((long long)difftime(j->finished, j->created) +
					       cfg->job_retention_s) * 1000LL));
	json_object_object_add(t, "pollIntervalMs", json_object_new_int(POLL_INTERVAL_MS));
	return t;
}

struct json_object *
tasks_created(const struct config *cfg, struct job *j)
{
	j->kept = 1; /* the client will poll it: keep it for job_retention_s */
	struct json_object *t = task_of(cfg, j);
	json_object_object_add(t, "resultType", json_object_new_string("task"));
	return t;
}

/* What tools/call would have answered had it waited: the CallToolResult. */
static struct json_object *
final_result(const struct job *j)
{
	struct json_object *r = result_to_tool(json_object_get(j->call.result), j->session_id);
	struct json_object *sc = json_object_object_get(r, "structuredContent");

	json_object_object_add(sc, "execution_session_id", json_object_new_string(j->session_id));
	json_object_object_add(sc, "timings", job_timings(j, j->ended));
	tool_note_session(r, j->session_id, 0); /* tasks are the 2026-07-28 path's */
	return r;
}

struct json_object *
tasks_handle(const struct config *cfg, const char *method, struct json_object *params,
	     const char *identity, int *code, char *msg, size_t msg_len)
{
	struct json_object *v;

	if (!json_object_is_type(params, json_type_object) ||
	    !json_object_object_get_ex(params, "taskId", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		*code = -32602;
		snprintf(msg, msg_len, "%s needs params.taskId (a string)", method);
		return NULL;
	}
	struct job *j = job_get_task(json_object_get_string(v), identity);
	if (j == NULL) {
		*code = -32602;
		snprintf(msg, msg_len, "unknown taskId");
		return NULL;
	}
	struct json_object *r;
	if (strcmp(method, "tasks/get") == 0) {
		r = task_of(cfg, j);
		if (j->status != JOB_RUNNING && j->status != JOB_CANCELLED)
			json_object_object_add(r, "result", final_result(j));
	} else {
		/* tasks/update: no execution asks for input, so there is nothing
		 * to take; tasks/cancel: the same as {name}_cancel_job. */
		if (strcmp(method, "tasks/cancel") == 0 && j->status == JOB_RUNNING)
			job_cancel(j);
		r = json_object_new_object();
	}
	job_unref(j);
	return r;
}
