/* tools.c - the tool table and the helpers every tool shares; see tools.h. */
#include "autoconf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "json_member.h"
#include "log.h"
#include "mcp_header.h"
#include "session.h"
#include "tools.h"
#include "xmalloc.h"

static const struct tool *const tool_table[] = {
	&tool_execute,	      &tool_check_job,	       &tool_cancel_job,
	&tool_list_sessions,  &tool_inspect_session,   &tool_close_session,
	&tool_parallel_execute, &tool_check_batch, &tool_cancel_batch,
	&tool_install_packages, &tool_checkpoint, &tool_restore,
	&tool_fork_session,     &tool_upload_file,
	&tool_search_tools, &tool_send,
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

/*
 * A required argument that has an alias may be given by either name: take
 * `name` out of the schema's "required" and require one of the two
 * ("anyOf"), so a client that checks its own arguments takes the alias.
 */
static void
require_either(struct json_object *schema, const char *name, const char *alias)
{
	struct json_object *req, *kept = json_object_new_array(), *any;
	int found = 0;

	if (!json_object_object_get_ex(schema, "required", &req)) {
		json_object_put(kept);
		return;
	}
	for (size_t i = 0; i < json_object_array_length(req); i++) {
		struct json_object *v = json_object_array_get_idx(req, i);
		if (strcmp(json_object_get_string(v), name) == 0)
			found = 1;
		else
			json_object_array_add(kept, json_object_get(v));
	}
	if (!found) {
		json_object_put(kept);
		return;
	}
	if (json_object_array_length(kept) > 0) {
		json_object_object_add(schema, "required", kept);
	} else {
		json_object_object_del(schema, "required");
		json_object_put(kept);
	}
	char text[200];
	snprintf(text, sizeof(text), "[{\"required\":[\"%s\"]},{\"required\":[\"%s\"]}]", name,
		 alias);
	/* A second such pair would need allOf: no tool has one. */
	if (json_object_object_get_ex(schema, "anyOf", &any))
		log_warnx("tools: %s: a second required alias is not expressed", alias);
	else
		json_object_object_add(schema, "anyOf", json_tokener_parse(text));
}

/*
 * Give `t`'s inputSchema in `o` its aliases (each described as its name's
 * double) and "additionalProperties": false: what tools_args enforces.
 */
static void
finish_input_schema(const struct tool *t, struct json_object *o)
{
	struct json_object *schema, *props, *target;

	if (!json_object_object_get_ex(o, "inputSchema", &schema))
		return;
	if (!json_object_object_get_ex(schema, "properties", &props)) {
		props = json_object_new_object();
		json_object_object_add(schema, "properties", props);
	}
	for (const struct tool_alias *a = t->aliases; a && a->alias; a++) {
		struct json_object *copy = NULL;
		char text[200];
		if (!json_object_object_get_ex(props, a->name, &target) ||
		    json_object_deep_copy(target, &copy, NULL) != 0)
			continue;
		snprintf(text, sizeof(text),
			 "The same as '%s' (its name in seed 003's run_cell); give one of the "
			 "two, or both with equal values.",
			 a->name);
		json_object_object_add(copy, "description", json_object_new_string(text));
		json_object_object_add(props, a->alias, copy);
		require_either(schema, a->name, a->alias);
	}
	/* A call may name the execution session it acts in (mcp_call.c): on the
	 * 2026-07-28 path there is no MCP session to stand for it. */
	if (t->in_session)
		json_object_object_add(
			props, "execution_session_id",
			tool_schema("{\"type\":\"string\",\"description\":\"The execution "
				    "session this call acts in (its id, as execute_*_code "
				    "returned it); without it, the MCP session's own. "
				    "Required on the 2026-07-28 path.\"}"));
	json_object_object_add(schema, "additionalProperties", json_object_new_boolean(0));
}

/* Append `more` to the string member `key` of `o`. */
static void
append_text(struct json_object *o, const char *key, const char *more)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return;
	char *text = xasprintf("%s%s", json_object_get_string(v), more);
	json_object_object_add(o, key, json_object_new_string(text));
	free(text);
}

/*
 * What differs on the 2026-07-28 path, where no MCP session stands for
 * the caller: state lives on only through execution_session_id, which a
 * tool acting in a session requires.
 */
static void
modern_describe(const struct tool *t, struct json_object *o)
{
	struct json_object *schema, *props, *code, *req, *sid;

	if (!json_object_object_get_ex(o, "inputSchema", &schema))
		return;
	/* A load balancer routes on it (SEP-2243): Mcp-Param-Session mirrors it. */
	const char *arg = tools_session_param(t);
	if (arg && json_object_object_get_ex(schema, "properties", &props) &&
	    json_object_object_get_ex(props, arg, &sid))
		json_object_object_add(sid, "x-mcp-header",
				       json_object_new_string(MCP_PARAM_SESSION));
	if (t->in_session) {
		if (!json_object_object_get_ex(schema, "required", &req)) {
			req = json_object_new_array();
			json_object_object_add(schema, "required", req);
		}
		json_object_array_add(req, json_object_new_string("execution_session_id"));
		return;
	}
	if (t != &tool_execute)
		return;
	append_text(o, "description",
		    "\n\nEach call without execution_session_id runs in a new kernel session. "
		    "To keep variables, pass the execution_session_id that the previous "
		    "result names.");
	if (json_object_object_get_ex(schema, "properties", &props) &&
	    json_object_object_get_ex(props, "code", &code))
		json_object_object_add(code, "description",
				       json_object_new_string(
					       "Code to run. Variables persist only between calls "
					       "that pass the same execution_session_id."));
}

/* The tools/list entry of `t`. Caller owns. */
static struct json_object *
tool_describe(const struct tool *t, const struct config *cfg, int modern)
{
	struct json_object *o = json_object_new_object();
	char name[256];

	tool_name(t, cfg, name, sizeof(name));
	json_object_object_add(o, "name", json_object_new_string(name));
	t->describe(cfg, o);
	finish_input_schema(t, o);
	if (modern)
		modern_describe(t, o);
	return o;
}

size_t
tools_count(void)
{
	return TOOL_COUNT;
}

int
tools_index(const struct tool *t)
{
	for (size_t i = 0; i < TOOL_COUNT; i++)
		if (tool_table[i] == t)
			return (int)i;
	return -1;
}

void
tools_name(size_t i, const struct config *cfg, char *out, size_t len)
{
	tool_name(tool_table[i], cfg, out, len);
}

struct json_object *
tools_list(const struct config *cfg, int modern)
{
	struct json_object *list = json_object_new_array();

	for (size_t i = 0; i < TOOL_COUNT; i++)
		if (tool_table[i]->listed == NULL || tool_table[i]->listed(cfg))
			json_object_array_add(list, tool_describe(tool_table[i], cfg, modern));
	return list;
}

/* Names listed in an error message at most, and their bytes shown at most. */
#define UNKNOWN_LISTED 5
#define NAME_SHOWN 64

/* How much of `s` to show: NAME_SHOWN bytes at most, never half a UTF-8 character. */
static int
shown_len(const char *s)
{
	size_t n = strlen(s);

	if (n <= NAME_SHOWN)
		return (int)n;
	n = NAME_SHOWN;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return (int)n;
}

/*
 * 0 if every member of args is a property of `desc`'s inputSchema; else -1
 * with err naming the others and listing the properties.
 */
static int
args_known(struct json_object *desc, struct json_object *args, char *err, size_t err_len)
{
	struct json_object *schema, *props = NULL;
	struct buf b;
	int unknown = 0;

	if (json_object_object_get_ex(desc, "inputSchema", &schema))
		json_object_object_get_ex(schema, "properties", &props);
	buf_init(&b);
	json_object_object_foreach(args, key, val) {
		(void)val;
		if (props && json_object_object_get_ex(props, key, NULL))
			continue;
		if (unknown < UNKNOWN_LISTED)
			buf_printf(&b, "%s'%.*s'", unknown ? ", " : "", shown_len(key), key);
		unknown++;
	}
	if (unknown == 0) {
		buf_free(&b);
		return 0;
	}
	if (unknown > UNKNOWN_LISTED)
		buf_printf(&b, " and %d more", unknown - UNKNOWN_LISTED);
	buf_printf(&b, " to %s; it accepts: ",
		   json_object_get_string(json_object_object_get(desc, "name")));
	int n = 0;
	if (props) {
		json_object_object_foreach(props, name, p) {
			(void)p;
			buf_printf(&b, "%s%s", n++ ? ", " : "", name);
		}
	}
	if (n == 0)
		buf_adds(&b, "no arguments");
	char *list = buf_release(&b);
	snprintf(err, err_len, "unknown argument%s %s", unknown > 1 ? "s" : "", list);
	free(list);
	return -1;
}

/* Nonzero if a and b are the same value (1 and 1.0 are). */
static int
same_value(struct json_object *a, struct json_object *b)
{
	int a_num = json_object_is_type(a, json_type_int) || json_object_is_type(a, json_type_double);
	int b_num = json_object_is_type(b, json_type_int) || json_object_is_type(b, json_type_double);

	if (a_num && b_num)
		return json_object_get_double(a) == json_object_get_double(b);
	return json_object_equal(a, b);
}

/* The name alias `key` of `t` stands for, or key itself. */
static const char *
canonical_name(const struct tool *t, const char *key)
{
	for (const struct tool_alias *a = t->aliases; a && a->alias; a++)
		if (strcmp(a->alias, key) == 0)
			return a->name;
	return key;
}

/* The member of args other than `key` that stands for `name` too. */
static const char *
other_name(const struct tool *t, struct json_object *args, const char *key, const char *name)
{
	json_object_object_foreach(args, k, v) {
		(void)v;
		if (strcmp(k, key) != 0 && strcmp(canonical_name(t, k), name) == 0)
			return k;
	}
	return name;
}

struct json_object *
tools_args(const struct config *cfg, const struct tool *t, struct json_object *args, char *err,
	   size_t err_len)
{
	struct json_object *desc = tool_describe(t, cfg, 0);
	int known = args_known(desc, args, err, err_len);

	json_object_put(desc);
	if (known == -1)
		return NULL;
	struct json_object *out = json_object_new_object(), *have;
	json_object_object_foreach(args, key, val) {
		const char *name = canonical_name(t, key);
		if (!json_object_object_get_ex(out, name, &have)) {
			json_object_object_add(out, name, json_object_get(val));
		} else if (!same_value(have, val)) {
			snprintf(err, err_len,
				 "arguments '%s' and '%s' are two names for the same argument "
				 "but their values differ: give one of them",
				 other_name(t, args, key, name), key);
			json_object_put(out);
			return NULL;
		}
	}
	return out;
}

const char *
tools_session_param(const struct tool *t)
{
	return t->in_session ? "execution_session_id" : t->session_arg;
}

const struct tool *
tools_find(const struct config *cfg, const char *name)
{
	char candidate[256];

	for (size_t i = 0; i < TOOL_COUNT; i++) {
		tool_name(tool_table[i], cfg, candidate, sizeof(candidate));
		if (strcmp(candidate, name) == 0 &&
		    (tool_table[i]->listed == NULL || tool_table[i]->listed(cfg)))
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

struct json_object *
tool_refuse(struct tool_call *tc, const char *fmt, ...)
{
	va_list ap;

	tc->error_code = -32000;
	va_start(ap, fmt);
	vsnprintf(tc->error_message, sizeof(tc->error_message), fmt, ap);
	va_end(ap);
	return NULL;
}

const char *
tool_arg_string(struct tool_call *tc, const char *key)
{
	struct json_object *v;
	if (!json_object_object_get_ex(tc->args, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	/* mcp_rpc.c refuses \u0000 first; never hand on a string C would cut short. */
	if (strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return NULL;
	return json_object_get_string(v);
}

/*
 * Refuse a timeout that is not a number of seconds above zero. null and 0
 * mean "unbounded" in seed 003; nothing runs here without a bound.
 */
static double
bad_timeout(struct tool_call *tc, const char *what)
{
	char msg[256];

	snprintf(msg, sizeof(msg),
		 "argument 'timeout' %s; codeexecd never runs code unbounded (null and 0 "
		 "are refused): give at most max_timeout, %g seconds, or leave it out for "
		 "default_timeout, %g seconds",
		 what, tc->cfg->max_timeout, tc->cfg->default_timeout);
	tool_bad_params(tc, msg);
	return -1;
}

double
tool_arg_timeout(struct tool_call *tc)
{
	struct json_object *v;
	double seconds;

	if (!json_object_object_get_ex(tc->args, "timeout", &v))
		return tc->cfg->default_timeout;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return bad_timeout(tc, "must be a number of seconds");
	seconds = json_object_get_double(v);
	if (!(seconds > 0) || !isfinite(seconds))
		return bad_timeout(tc, "must be greater than zero");
	return seconds > tc->cfg->max_timeout ? tc->cfg->max_timeout : seconds;
}

struct json_object *
tool_error(const char *type, const char *message)
{
	struct json_object *o = json_object_new_object(), *e = json_object_new_object();

	json_object_object_add(e, "type", json_object_new_string(type));
	json_object_object_add(e, "message", json_object_new_string(message));
	json_object_object_add(o, "error", e);
	return tool_result(o, message, 1);
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

void
tool_note(struct json_object *r, const char *line)
{
	struct json_object *content, *item;

	if (!json_object_object_get_ex(r, "content", &content) ||
	    json_object_array_length(content) == 0)
		return;
	item = json_object_array_get_idx(content, 0);
	const char *text = json_member_str(item, "text");
	size_t n = strlen(text);
	char *joined = xasprintf("%s%s%s", text, n > 0 && text[n - 1] != '\n' ? "\n" : "", line);
	json_object_object_add(item, "text", json_object_new_string(joined));
	free(joined);
}

void
tool_note_session(struct json_object *r, const char *id, int created)
{
	char line[200];

	snprintf(line, sizeof(line),
		 "[%sexecution_session_id: %s; pass it as execution_session_id to continue in "
		 "this kernel]",
		 created ? "new execution session; " : "", id);
	tool_note(r, line);
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

/*
 * The session named by `id` if the caller may use it, referenced; else
 * NULL after tool_bad_params("unknown ARG"): a foreign id and an unknown
 * one get the same answer.
 */
static struct session *
named_session(struct tool_call *tc, const char *arg, const char *id)
{
	struct session *s = session_get(id);

	if (s && !session_may_use(tc->session, s)) {
		session_put(s);
		s = NULL;
	}
	if (s == NULL) {
		char why[64];
		snprintf(why, sizeof(why), "unknown %s", arg);
		tool_bad_params(tc, why);
	} else {
		s->named++;
	}
	return s;
}

struct session *
tool_session_or_new(struct tool_call *tc, const char *arg)
{
	if (!tc->session->transient || tool_arg_string(tc, arg) != NULL)
		return tool_session_arg(tc, arg);
	char why[ERR_LEN];
	struct session_limits lim = {tc->cfg->pool_max_sessions, config_identity_share(tc->cfg)};
	/* Bound to the caller: another identity's call answers as unknown. */
	struct session *s = session_create(tc->session->identity, &lim, why, sizeof(why));
	if (s == NULL) {
		tool_refuse(tc, "%.200s", why);
		return NULL;
	}
	s->stateless = 1;
	tc->new_session = 1;
	log_info("execution session %.8s created for %s", s->id, s->identity);
	return s; /* session_create's reference is the caller's */
}

struct session *
tool_session_arg(struct tool_call *tc, const char *arg)
{
	const char *id = tool_arg_string(tc, arg);

	if (id == NULL && tc->session->transient) {
		char why[160];
		snprintf(why, sizeof(why),
			 "argument '%s' is required on the 2026-07-28 path: no MCP session "
			 "stands for it",
			 arg);
		tool_bad_params(tc, why);
		return NULL;
	}
	/* A transient caller's empty id names nothing (not itself). */
	if (id == NULL || (!tc->session->transient && strcmp(id, tc->session->id) == 0)) {
		tc->session->refs++;
		return tc->session;
	}
	return named_session(tc, arg, id);
}
