/* tool_check_batch.c - {name}_check_batch: each item's state and result. */
#include "autoconf.h"

#include "batch.h"
#include "config.h"
#include "session.h"
#include "tools.h"

static void
check_batch_describe(const struct config *cfg, struct json_object *tool)
{
	json_object_object_add(tool, "description",
			       json_object_new_string("Check a parallel_execute batch: each "
						      "item's status and, once done, its "
						      "result_variable or its error."));
	json_object_object_add(tool, "inputSchema",
			       tool_schema("{\"type\":\"object\",\"properties\":{\"batch_id\":"
					   "{\"type\":\"string\"}},\"required\":[\"batch_id\"]}"));
}

static struct json_object *
check_batch_call(struct tool_call *tc)
{
	const char *id = tool_arg_string(tc, "batch_id");

	if (id == NULL)
		return tool_bad_params(tc, "argument 'batch_id' (a string) is required");
	struct json_object *report = batch_report(id, tc->session->id);
	if (report == NULL) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "batch_id", json_object_new_string(id));
		json_object_object_add(o, "status", json_object_new_string("not_found"));
		return tool_result(o, "No such batch in this session (unknown, expired, or "
				      "another session's).", 1);
	}
	return tool_result(report, NULL, 0);
}

const struct tool tool_check_batch = {
	.name_format = "{name}_check_batch",
	.describe = check_batch_describe,
	.call = check_batch_call,
};
