/* tool_list_sessions.c - {name}_list_sessions: the caller's sessions. */
#include "autoconf.h"

#include <stdlib.h>

#include "config.h"
#include "job.h"
#include "pool.h"
#include "session.h"
#include "tools.h"

static void
list_describe(const struct config *cfg, struct json_object *tool)
{
	json_object_object_add(tool, "description",
			       json_object_new_string("List your sessions: id, created, last "
						      "used, state and working directory size."));
	json_object_object_add(tool, "inputSchema",
			       tool_schema("{\"type\":\"object\",\"properties\":{}}"));
}

static struct json_object *
list_call(struct tool_call *tc)
{
	struct session **seen = session_list_visible(tc->session);
	size_t n = 0;

	while (seen[n])
		n++;
	tool_refresh_usage(seen, n);
	struct json_object *list = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		json_object_array_add(list, tool_session_summary(seen[i]));
		session_put(seen[i]);
	}
	free(seen);
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "sessions", list);
	return tool_result(o, NULL, 0);
}

const struct tool tool_list_sessions = {
	.name_format = "{name}_list_sessions",
	.describe = list_describe,
	.call = list_call,
};

