/* tool_close_session.c - {name}_close_session: end a session and its kernel. */
#include "autoconf.h"


#include "config.h"
#include "job.h"
#include "pool.h"
#include "session.h"
#include "tools.h"

static void
close_describe(const struct config *cfg, struct json_object *tool)
{
	json_object_object_add(tool, "description",
			       json_object_new_string("Close a session: its kernel is ended and "
						      "its working directory removed."));
	json_object_object_add(tool, "inputSchema", tool_schema(tool_session_id_schema));
}

static struct json_object *
close_call(struct tool_call *tc)
{
	struct session *s = tool_session_arg(tc, "session_id");
	if (s == NULL)
		return NULL;
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "session_id", json_object_new_string(s->id));
	json_object_object_add(o, "closed", json_object_new_boolean(1));
	session_close(s);
	session_put(s);
	return tool_result(o, NULL, 0);
}

const struct tool tool_close_session = {
	.name_format = "{name}_close_session",
	.describe = close_describe,
	.call = close_call,
	.session_arg = "session_id",
};
