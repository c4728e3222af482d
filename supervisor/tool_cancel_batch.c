/* tool_cancel_batch.c - {name}_cancel_batch: stop a parallel_execute batch. */
#include "autoconf.h"

#include "batch.h"
#include "config.h"
#include "session.h"
#include "tools.h"

static void
cancel_batch_describe(const struct config *cfg, struct json_object *tool)
{
	(void)cfg;
	json_object_object_add(
		tool, "description",
		json_object_new_string("Cancel a parallel_execute batch: items not started "
				       "never start, running ones are interrupted. Answers "
				       "with the batch's state, as check_batch does."));
	json_object_object_add(tool, "inputSchema",
			       tool_schema("{\"type\":\"object\",\"properties\":{\"batch_id\":"
					   "{\"type\":\"string\"}},\"required\":[\"batch_id\"]}"));
}

static struct json_object *
cancel_batch_call(struct tool_call *tc)
{
	const char *id = tool_arg_string(tc, "batch_id");

	if (id == NULL)
		return tool_bad_params(tc, "argument 'batch_id' (a string) is required");
	struct json_object *report = batch_cancel(id, tc->session->id);
	if (report == NULL) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "batch_id", json_object_new_string(id));
		json_object_object_add(o, "status", json_object_new_string("not_found"));
		return tool_result(o, "No such batch in this session (unknown, expired, or "
				      "another session's).", 1);
	}
	return tool_result(report, NULL, 0);
}

const struct tool tool_cancel_batch = {
	.name_format = "{name}_cancel_batch",
	.describe = cancel_batch_describe,
	.call = cancel_batch_call,
};
