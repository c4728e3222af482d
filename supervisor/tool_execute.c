/* tool_execute.c - execute_{name}_code: run code in the session's kernel. */
#include "autoconf.h"

#include <math.h>
#include <stdio.h>

#include "config.h"
#include "result.h"
#include "session.h"
#include "tools.h"

static void
execute_describe(const struct config *cfg, struct json_object *tool)
{
	static const char input_schema[] =
		"{\"type\":\"object\",\"properties\":{"
		"\"code\":{\"type\":\"string\",\"description\":"
		"\"Python code to run. Variables persist between calls of this session.\"},"
		"\"description\":{\"type\":\"string\",\"description\":"
		"\"A short note on what the code does, for logs.\"},"
		"\"timeout\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":"
		"\"Seconds before the execution is interrupted (clamped to the server's "
		"maximum).\"}},"
		"\"required\":[\"code\"]}";

	json_object_object_add(tool, "description", json_object_new_string(cfg->description));
	json_object_object_add(tool, "inputSchema", json_tokener_parse(input_schema));
	json_object_object_add(tool, "outputSchema", result_output_schema());
}

/* Set a bad-params error on `tc`; returns NULL for the caller to return. */
static struct json_object *
bad_params(struct tool_call *tc, const char *message)
{
	tc->error_code = -32602;
	snprintf(tc->error_message, sizeof(tc->error_message), "%s", message);
	return NULL;
}

static struct json_object *
execute_call(struct tool_call *tc)
{
	struct json_object *code, *timeout;
	double seconds = tc->cfg->default_timeout;

	if (!json_object_object_get_ex(tc->args, "code", &code) ||
	    !json_object_is_type(code, json_type_string))
		return bad_params(tc, "argument 'code' (a string) is required");
	if (json_object_object_get_ex(tc->args, "timeout", &timeout)) {
		if (!json_object_is_type(timeout, json_type_int) &&
		    !json_object_is_type(timeout, json_type_double))
			return bad_params(tc, "argument 'timeout' must be a number of seconds");
		seconds = json_object_get_double(timeout);
		if (!(seconds > 0) || !isfinite(seconds))
			return bad_params(tc, "argument 'timeout' must be greater than zero");
		if (seconds > tc->cfg->max_timeout)
			seconds = tc->cfg->max_timeout;
	}
	struct json_object *result =
		session_execute(tc->session, json_object_get_string(code), seconds);
	return result_to_tool(result, tc->session->id);
}

const struct tool tool_execute = {
	.name_format = "execute_{name}_code",
	.describe = execute_describe,
	.call = execute_call,
};
