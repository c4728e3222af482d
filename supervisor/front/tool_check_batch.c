/* tool_check_batch.c - {name}_check_batch: each item's state and result. */
#include "autoconf.h"

#include "batch.h"
#include "config.h"
#include "tools.h"

static struct json_object *
check_batch_call(struct tool_call *tc)
{
	return tool_batch_call(tc, batch_report);
}

static void
check_batch_describe(const struct config *cfg, struct json_object *tool)
{
	(void)cfg;
	tool_batch_describe(tool, "Check a parallel_execute batch: each item's status and, "
				  "once done, its result_variable or its error.");
}

const struct tool tool_check_batch = {
	.name_format = "{name}_check_batch",
	.describe = check_batch_describe,
	.in_session = 1,
	.call = check_batch_call,
};
