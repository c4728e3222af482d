/*
 * mcp_stubs.c - what fuzz_mcp links instead of the pool, the sessions, the
 * jobs and the tools that run code: mcp.c and tools.c are real, everything
 * behind them answers from two fixed sessions and tools that only read
 * their arguments. Reference counts are checked, so a request that leaks
 * or over-drops a session reference is a finding.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "front_testhook.h"
#include "job.h"
#include "mcp_stubs.h"
#include "pool.h"
#include "pool_exec.h"
#include "pubhooks.h"
#include "resources.h"
#include "session.h"
#include "tasks.h"
#include "tools.h"

struct session stub_sessions[2] = {
	{.id = STUB_SESSION_ID, .identity = "anonymous", .refs = 1},
	{.id = STUB_OTHER_ID, .identity = "someone-else", .refs = 1},
};
static int sessions_created;

void
pool_lock(void)
{
}

void
pool_unlock(void)
{
}

/* A fresh session each time: the first of the table, renamed. */
struct session *
session_create(const char *identity, const struct session_limits *lim, char *why,
	       size_t why_len)
{
	if (++sessions_created % 7 == 0) {
		err_set(why, why_len, "too many sessions (stub)");
		return NULL;
	}
	stub_sessions[0].refs++;
	return &stub_sessions[0];
}

struct session *
session_get(const char *id)
{
	for (int i = 0; i < 2; i++) {
		if (strcmp(id, stub_sessions[i].id) == 0 && !stub_sessions[i].closed) {
			stub_sessions[i].refs++;
			return &stub_sessions[i];
		}
	}
	return NULL;
}

/* As the real one: the caller of a 2026-07-28 request, freed by its last put. */
struct session *
session_transient(const char *identity)
{
	struct session *s = calloc(1, sizeof(*s));

	if (s == NULL)
		abort();
	s->refs = 1;
	s->closed = 1;
	s->transient = 1;
	snprintf(s->identity, sizeof(s->identity), "%s", identity);
	return s;
}

void
session_put(struct session *s)
{
	if (s->transient) {
		if (--s->refs == 0)
			free(s);
		return;
	}
	if (--s->refs < 1) {
		fprintf(stderr, "mcp_stubs: session %s released more than it was taken\n", s->id);
		abort();
	}
}

void
session_close(struct session *s)
{
	s->closed = 0; /* stays usable: the next input starts from the same state */
}

int
session_may_use(const struct session *caller, const struct session *target)
{
	return strcmp(caller->identity, target->identity) == 0;
}

void
stub_check_refs(void)
{
	for (int i = 0; i < 2; i++) {
		if (stub_sessions[i].refs != 1) {
			fprintf(stderr, "mcp_stubs: session %s holds %d references after a request\n",
				stub_sessions[i].id, stub_sessions[i].refs);
			abort();
		}
	}
}

struct job *
job_find_request(const char *owner, struct json_object *request_id)
{
	return NULL;
}

void
job_cancel(struct job *j)
{
	abort(); /* job_find_request never finds one */
}

void
job_unref(struct job *j)
{
	abort();
}

/* No call runs here, so no prompt waits for an answer. */
int
pool_input_answer(const char *rpc_id, enum input_answer how, const char *value)
{
	return -1;
}

/* http.c's test hook (front_testhook.h): no front here to misbehave. */
void
front_test_hook(const char *what)
{
	(void)what;
}

static void
stub_describe(const struct config *cfg, struct json_object *tool)
{
	json_object_object_add(tool, "description", json_object_new_string("stub"));
	/* The arguments stub_call reads: tools_args refuses any other. */
	json_object_object_add(tool, "inputSchema",
			       tool_schema("{\"type\":\"object\",\"properties\":{"
					   "\"code\":{\"type\":\"string\"},"
					   "\"timeout\":{\"type\":\"number\"},"
					   "\"execution_session_id\":{\"type\":\"string\"}}}"));
}

/*
 * Read the arguments as the real tools do (code, timeout, the target
 * session) and echo them; send one progress event when asked to.
 */
static struct json_object *
stub_call(struct tool_call *tc)
{
	const char *code = tool_arg_string(tc, "code");
	double seconds = tool_arg_timeout(tc);

	if (seconds < 0)
		return NULL;
	struct session *target = tool_session_arg(tc, "execution_session_id");
	if (target == NULL)
		return NULL;
	session_put(target);
	if (tc->progress && tc->progress(tc->io, 0.5, code ? code : "") == -1) {
		tc->no_response = 1;
		return NULL;
	}
	if (code && strcmp(code, "cancel") == 0) {
		tc->no_response = 1;
		return NULL;
	}
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "stdout", json_object_new_string(code ? code : ""));
	json_object_object_add(o, "timeout", json_object_new_double(seconds));
	return tool_result(o, NULL, code && strcmp(code, "raise") == 0);
}

/* As the real execute tool: seed 003's name for timeout. */
static const struct tool_alias stub_aliases[] = {{"timeout_s", "timeout"}, {NULL, NULL}};

const struct tool tool_execute = {.name_format = "execute_{name}_code",
				  .describe = stub_describe,
				  .call = stub_call,
				  .aliases = stub_aliases,
				  .session_arg = "execution_session_id"};

#define STUB_TOOL(var, format)                                                                    \
	const struct tool var = {.name_format = format, .describe = stub_describe, .call = stub_call}
STUB_TOOL(tool_check_job, "{name}_check_job");
STUB_TOOL(tool_cancel_job, "{name}_cancel_job");
STUB_TOOL(tool_list_sessions, "{name}_list_sessions");
STUB_TOOL(tool_inspect_session, "{name}_inspect_session");
STUB_TOOL(tool_close_session, "{name}_close_session");
STUB_TOOL(tool_parallel_execute, "{name}_parallel_execute");
STUB_TOOL(tool_check_batch, "{name}_check_batch");
STUB_TOOL(tool_cancel_batch, "{name}_cancel_batch");
STUB_TOOL(tool_install_packages, "{name}_install_packages");
STUB_TOOL(tool_checkpoint, "{name}_checkpoint");
STUB_TOOL(tool_restore, "{name}_restore");
STUB_TOOL(tool_fork_session, "{name}_fork_session");

/* As the real one: listed only when tools are configured. */
static int
stub_search_listed(const struct config *cfg)
{
	return cfg->tools.n > 0;
}

const struct tool tool_search_tools = {.name_format = "search_{name}_tools",
				       .describe = stub_describe,
				       .call = stub_call,
				       .listed = stub_search_listed};

/* As the real one: listed only when publishers are configured. */
static int
stub_send_listed(const struct config *cfg)
{
	return cfg->publishers.n > 0;
}

const struct tool tool_send = {.name_format = "{name}_send",
			       .describe = stub_describe,
			       .call = stub_call,
			       .listed = stub_send_listed};

/* As the real one: listed unless max_upload_bytes is 0. */
static int
stub_upload_listed(const struct config *cfg)
{
	return cfg->max_upload_bytes > 0;
}

const struct tool tool_upload_file = {.name_format = "{name}_upload_file",
				      .describe = stub_describe,
				      .call = stub_call,
				      .listed = stub_upload_listed};

/* resources/...: answered as if the session had no files. */
int
resources_method(const char *method)
{
	return strncmp(method, "resources/", 10) == 0;
}

struct json_object *
resources_handle(const struct config *cfg, struct session *s, const char *method,
		 struct json_object *params, int *code, char *msg, size_t msg_len)
{
	(void)cfg;
	(void)s;
	(void)params;
	(void)code;
	(void)msg;
	(void)msg_len;
	struct json_object *r = json_object_new_object();
	json_object_object_add(r, strcmp(method, "resources/templates/list") == 0
					  ? "resourceTemplates"
					  : "resources",
			       json_object_new_array());
	return r;
}

/* On-close publishing is not exercised here. */
void
pubhooks_init(const struct config *cfg)
{
	(void)cfg;
}

/* Tasks are jobs, which these stubs do not run: every task is unknown. */
int
tasks_method(const char *method)
{
	return strncmp(method, "tasks/", 6) == 0;
}

struct json_object *
tasks_created(const struct config *cfg, struct job *j)
{
	(void)cfg;
	(void)j;
	return json_object_new_object();
}

struct json_object *
tasks_handle(const struct config *cfg, const char *method, struct json_object *params,
	     const char *identity, int *code, char *msg, size_t msg_len)
{
	(void)cfg;
	(void)method;
	(void)params;
	(void)identity;
	*code = -32602;
	snprintf(msg, msg_len, "unknown taskId");
	return NULL;
}
