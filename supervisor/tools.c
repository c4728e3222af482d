/* tools.c - the tool table and the helpers every tool shares; see tools.h. */
#include "autoconf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "session.h"
#include "tools.h"

static const struct tool *const tool_table[] = {
	&tool_execute,	      &tool_check_job,	       &tool_cancel_job,
	&tool_list_sessions,  &tool_inspect_session,   &tool_close_session,
	&tool_parallel_execute, &tool_check_batch, &tool_cancel_batch,
	&tool_install_packages,
};

#define TOOL_COUNT (sizeof(tool_table) / sizeof(tool_table[0]))

/* Write the name of `t` under configuration `cfg` into out. */
static void
tool_name(const struct tool *t, const struct config *cfg, char *out, size_t len)
{
	const char *mark = strstr(t->name_format, "{name}");
	/* Table formats are ours and hold exactly one {name}. */
	snprintf(out, len, "%.*s%s%s", (int)(mark - t->name_format), t->name_format, cfg->name,
		 mark + 6);
}

struct json_object *
tools_list(const struct config *cfg)
{
	struct json_object *list = json_object_new_array();
	char name[256];

	for (size_t i = 0; i < TOOL_COUNT; i++) {
		struct json_object *t = json_object_new_object();
		tool_name(tool_table[i], cfg, name, sizeof(name));
		json_object_object_add(t, "name", json_object_new_string(name));
		tool_table[i]->describe(cfg, t);
		json_object_array_add(list, t);
	}
	return list;
}

const struct tool *
tools_find(const struct config *cfg, const char *name)
{
	char candidate[256];

	for (size_t i = 0; i < TOOL_COUNT; i++) {
		tool_name(tool_table[i], cfg, candidate, sizeof(candidate));
		if (strcmp(candidate, name) == 0)
			return tool_table[i];
	}
	return NULL;
}

struct json_object *
tool_bad_params(struct tool_call *tc, const char *message)
{
	tc->error_code = -32602;
	snprintf(tc->error_message, sizeof(tc->error_message), "%s", message);
	return NULL;
}

const char *
tool_arg_string(struct tool_call *tc, const char *key)
{
	struct json_object *v;
	if (!json_object_object_get_ex(tc->args, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	/* mcp.c refuses \u0000 first; never hand on a string C would cut short. */
	if (strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return NULL;
	return json_object_get_string(v);
}

double
tool_arg_timeout(struct tool_call *tc)
{
	struct json_object *v;
	double seconds;

	if (!json_object_object_get_ex(tc->args, "timeout", &v))
		return tc->cfg->default_timeout;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double)) {
		tool_bad_params(tc, "argument 'timeout' must be a number of seconds");
		return -1;
	}
	seconds = json_object_get_double(v);
	if (!(seconds > 0) || !isfinite(seconds)) {
		tool_bad_params(tc, "argument 'timeout' must be greater than zero");
		return -1;
	}
	return seconds > tc->cfg->max_timeout ? tc->cfg->max_timeout : seconds;
}

struct json_object *
tool_result(struct json_object *structured, const char *text, int is_error)
{
	struct json_object *r = json_object_new_object();
	struct json_object *content = json_object_new_array();
	struct json_object *item = json_object_new_object();

	json_object_object_add(item, "type", json_object_new_string("text"));
	json_object_object_add(item, "text",
			       json_object_new_string(text ? text
							   : json_object_to_json_string_ext(
								     structured,
								     JSON_C_TO_STRING_PRETTY |
									     JSON_C_TO_STRING_NOSLASHESCAPE)));
	json_object_array_add(content, item);
	json_object_object_add(r, "content", content);
	json_object_object_add(r, "structuredContent", structured);
	json_object_object_add(r, "isError", json_object_new_boolean(is_error));
	return r;
}

/* {key: id, status: "not_found"}, with `text` for people. Caller owns. */
static struct json_object *
not_found(const char *key, const char *id, const char *text)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, key, json_object_new_string(id));
	json_object_object_add(o, "status", json_object_new_string("not_found"));
	return tool_result(o, text, 1);
}

struct json_object *
tool_job_not_found(const char *id)
{
	return not_found("job_id", id, "No such job in this session (unknown, expired, or another "
				       "session's).");
}

void
tool_batch_describe(struct json_object *tool, const char *text)
{
	json_object_object_add(tool, "description", json_object_new_string(text));
	json_object_object_add(tool, "inputSchema",
			       tool_schema("{\"type\":\"object\",\"properties\":{\"batch_id\":"
					   "{\"type\":\"string\"}},\"required\":[\"batch_id\"]}"));
}

struct json_object *
tool_batch_call(struct tool_call *tc, struct json_object *(*answer)(const char *id,
								    const char *owner))
{
	const char *id = tool_arg_string(tc, "batch_id");

	if (id == NULL)
		return tool_bad_params(tc, "argument 'batch_id' (a string) is required");
	struct json_object *report = answer(id, tc->session->id);
	if (report == NULL)
		return not_found("batch_id", id, "No such batch in this session (unknown, "
						 "expired, or another session's).");
	return tool_result(report, NULL, 0);
}

struct json_object *
tool_schema(const char *json)
{
	return json_tokener_parse(json);
}

struct session *
tool_session_arg(struct tool_call *tc, const char *arg)
{
	const char *id = tool_arg_string(tc, arg);

	if (id == NULL || strcmp(id, tc->session->id) == 0) {
		tc->session->refs++;
		return tc->session;
	}
	struct session *s = session_get(id);
	if (s && !session_may_use(tc->session, s)) {
		session_put(s);
		s = NULL;
	}
	if (s == NULL) {
		char why[64];
		snprintf(why, sizeof(why), "unknown %s", arg);
		tool_bad_params(tc, why);
	}
	return s;
}
