/* tool_cancel_job.c - {name}_cancel_job: interrupt a background execution. */
#include "autoconf.h"

#include "config.h"
#include "job.h"
#include "tools.h"

/* How long cancel_job waits for the kernel to stop before answering. */
#define CANCEL_WAIT_S 10

static void
cancel_job_describe(const struct config *cfg, struct json_object *tool)
{
	json_object_object_add(
		tool, "description",
		json_object_new_string("Cancel a background execution: the kernel is "
				       "interrupted, and variables defined before survive."));
	json_object_object_add(tool, "inputSchema",
			       tool_schema("{\"type\":\"object\",\"properties\":{\"job_id\":"
					   "{\"type\":\"string\"}},\"required\":[\"job_id\"]}"));
}

static struct json_object *
cancel_job_call(struct tool_call *tc)
{
	const char *id = tool_arg_string(tc, "job_id");

	if (id == NULL)
		return tool_bad_params(tc, "argument 'job_id' (a string) is required");
	struct job *j = job_get(id, tc->session->id);
	if (j == NULL)
		return tool_job_not_found(id);
	job_cancel(j);
	job_wait(j, CANCEL_WAIT_S, 0);
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "job_id", json_object_new_string(j->id));
	json_object_object_add(o, "status", json_object_new_string(job_status_name(j->status)));
	job_unref(j);
	return tool_result(o, NULL, 0);
}

const struct tool tool_cancel_job = {
	.name_format = "{name}_cancel_job",
	.describe = cancel_job_describe,
	.in_session = 1,
	.call = cancel_job_call,
};
