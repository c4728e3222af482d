/* tool_check_job.c - {name}_check_job: the state, output so far and result of a job. */
#include "autoconf.h"

#include "config.h"
#include "job.h"
#include "result.h"
#include "tools.h"

/* How long a first poll waits for the output printed before it. */
#define WATCH_WAIT_S 2

static void
check_job_describe(const struct config *cfg, struct json_object *tool)
{
	json_object_object_add(
		tool, "description",
		json_object_new_string("Check a background execution started by execute_*_code: "
				       "its status (running, completed, failed, cancelled, "
				       "timed_out), the output so far, and its full result once "
				       "done."));
	json_object_object_add(tool, "inputSchema",
			       tool_schema("{\"type\":\"object\",\"properties\":{\"job_id\":"
					   "{\"type\":\"string\"}},\"required\":[\"job_id\"]}"));
}

/* job_id, session_id, status and elapsed_seconds of `j`, into `o`. */
static void
add_job_fields(struct json_object *o, struct job *j)
{
	json_object_object_add(o, "job_id", json_object_new_string(j->id));
	json_object_object_add(o, "session_id", json_object_new_string(j->session_id));
	json_object_object_add(o, "status", json_object_new_string(job_status_name(j->status)));
	json_object_object_add(o, "elapsed_seconds", json_object_new_double(job_elapsed(j)));
}

static struct json_object *
check_job_call(struct tool_call *tc)
{
	const char *id = tool_arg_string(tc, "job_id");
	struct json_object *r;

	if (id == NULL)
		return tool_bad_params(tc, "argument 'job_id' (a string) is required");
	struct job *j = job_get(id, tc->session->id);
	if (j == NULL)
		return tool_job_not_found(id);
	/* A poll is a watcher: the job's output streams from now on. */
	job_watch(j, WATCH_WAIT_S);
	if (j->status == JOB_RUNNING) {
		struct json_object *o = json_object_new_object();
		add_job_fields(o, j);
		json_object_object_add(o, "stdout", json_object_new_string(j->call.out.data
										  ? j->call.out.data
										  : ""));
		json_object_object_add(o, "stderr", json_object_new_string(j->call.err.data
										  ? j->call.err.data
										  : ""));
		r = tool_result(o, NULL, 0);
	} else {
		r = result_to_tool(json_object_get(j->call.result), j->session_id);
		struct json_object *sc = json_object_object_get(r, "structuredContent");
		add_job_fields(sc, j);
		/* Its total runs to the end of the execution, not to this poll. */
		json_object_object_add(sc, "timings", job_timings(j, j->ended));
	}
	job_unref(j);
	return r;
}

const struct tool tool_check_job = {
	.name_format = "{name}_check_job",
	.describe = check_job_describe,
	.in_session = 1,
	.call = check_job_call,
};
