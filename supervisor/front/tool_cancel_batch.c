/* tool_cancel_batch.c - {name}_cancel_batch: stop a parallel_execute batch. */
#include "autoconf.h"

#include "batch.h"
#include "config.h"
#include "tools.h"

static void
cancel_batch_describe(const struct config *cfg, struct json_object *tool)
{
	(void)cfg;
	tool_batch_describe(tool, "Cancel a parallel_execute batch: items not started never "
				  "start, running ones are interrupted. Answers with the "
				  "batch's state, as check_batch does.");
}

static struct json_object *
cancel_batch_call(struct tool_call *tc)
{
	return tool_batch_call(tc, batch_cancel);
}

const struct tool tool_cancel_batch = {
	.name_format = "{name}_cancel_batch",
	.describe = cancel_batch_describe,
	.in_session = 1,
	.call = cancel_batch_call,
};
