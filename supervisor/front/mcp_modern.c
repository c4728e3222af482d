/*
 * mcp_modern.c - MCP 2026-07-28: stateless, per-request metadata
 * (mcp_modern.h). The JSON-RPC envelope is mcp_rpc.c's and tools/call
 * mcp_call.c's; this file checks and answers what differs on this path.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "handle.h"
#include "mcp.h"
#include "mcp_call.h"
#include "mcp_elicit.h"
#include "mcp_header.h"
#include "mcp_modern.h"
#include "mcp_rpc.h"
#include "pool.h"
#include "resources.h"
#include "session.h"
#include "tasks.h"
#include "tools.h"
#include "xmalloc.h"

#define MODERN_VERSION "2026-07-28"
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define ERR_UNSUPPORTED_VERSION -32022
/* How long a client may keep tools/list: it changes only on reload. */
#define LIST_TTL_MS 60000

static const struct config *cfg;

void
mcp_modern_init(const struct config *c)
{
	cfg = c;
}

/* The request's params._meta[key], or NULL. */
static struct json_object *
meta_get(struct json_object *params, const char *key)
{
	struct json_object *meta, *v;

	if (json_object_is_type(params, json_type_object) &&
	    json_object_object_get_ex(params, "_meta", &meta) &&
	    json_object_is_type(meta, json_type_object) &&
	    json_object_object_get_ex(meta, key, &v))
		return v;
	return NULL;
}

/* Whether the client declared the tasks extension in its capabilities. */
static int
wants_tasks(struct json_object *params)
{
	struct json_object *caps = meta_get(params, META_CAPS), *ext;

	return caps && json_object_object_get_ex(caps, "extensions", &ext) &&
	       json_object_is_type(ext, json_type_object) &&
	       json_object_object_get_ex(ext, TASKS_EXTENSION, NULL);
}

/* Whether a request takes the 2026-07-28 path: its _meta or its header says so. */
int
mcp_modern_request(const struct mcp_request *rq, struct json_object *params)
{
	if (meta_get(params, META_VERSION) != NULL || mcp_header_modern(rq->protocol_version))
		return 1;
	/* An unknown version with no session: a newer client, told what we speak.
	 * With a session it is a session-era client's mistake, answered as before. */
	return rq->protocol_version && !mcp_version_supported(rq->protocol_version) &&
	       rq->session_id == NULL;
}

/* {"supported": [...], "requested": v}: the data of -32022. Caller owns. */
static struct json_object *
supported_versions(void)
{
	struct json_object *a = json_object_new_array();

	json_object_array_add(a, json_object_new_string(MODERN_VERSION));
	json_object_array_add(a, json_object_new_string(mcp_version_newest()));
	return a;
}

/* An error as mcp_set_error, with `data` (consumed) beside code and message. */
static void
set_error_data(struct mcp_response *rs, int status, struct json_object *id, int code,
	       const char *message, struct json_object *data)
{
	mcp_set_error(rs, status, id, code, message);
	struct json_object *msg = json_tokener_parse(rs->body);
	struct json_object *err = json_object_object_get(msg, "error");
	json_object_object_add(err, "data", data);
	free(rs->body);
	rs->body = NULL;
	mcp_set_body(rs, status, msg);
}

int
mcp_header_modern(const char *version)
{
	return version != NULL && mcp_header_matches(version, MODERN_VERSION, 0);
}

/* The body value Mcp-Name mirrors: params.name, or params.uri; NULL if neither. */
static const char *
name_in_body(const char *method, struct json_object *params)
{
	struct json_object *v;
	const char *key = strcmp(method, "resources/read") == 0 ? "uri"
			  : tasks_method(method)		? "taskId"
								: "name";

	if (strcmp(method, "tools/call") != 0 && strcmp(method, "prompts/get") != 0 &&
	    strcmp(method, "resources/read") != 0 && !tasks_method(method))
		return NULL;
	if (json_object_is_type(params, json_type_object) &&
	    json_object_object_get_ex(params, key, &v) && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return NULL;
}

/*
 * The checks of a 2026-07-28 request, in the order the revision gives its
 * errors: _meta (-32602), the headers against it (-32020), the version
 * (-32022), Mcp-Method and Mcp-Name against the body (-32020). 0, or -1
 * after answering with 400.
 */
static int
modern_check(const struct mcp_request *rq, const char *method, struct json_object *id,
	     struct json_object *params, struct mcp_response *rs)
{
	struct json_object *v = meta_get(params, META_VERSION);
	struct json_object *caps = meta_get(params, META_CAPS);

	if (v == NULL || !json_object_is_type(v, json_type_string) || caps == NULL ||
	    !json_object_is_type(caps, json_type_object)) {
		mcp_set_error(rs, 400, id, ERR_PARAMS,
			      "params._meta must hold io.modelcontextprotocol/protocolVersion "
			      "(a string) and io.modelcontextprotocol/clientCapabilities (an "
			      "object)");
		return -1;
	}
	const char *version = json_object_get_string(v);
	const char *pv = rq->protocol_version;
	if (mcp_header_check("MCP-Protocol-Version", pv, version, 0, id, rs) == -1)
		return -1;
	if (strcmp(version, MODERN_VERSION) != 0) {
		struct json_object *data = json_object_new_object();
		json_object_object_add(data, "supported", supported_versions());
		json_object_object_add(data, "requested", json_object_new_string(version));
		set_error_data(rs, 400, id, ERR_UNSUPPORTED_VERSION, "Unsupported protocol version",
			       data);
		return -1;
	}
	if (mcp_header_check("Mcp-Method", rq->mcp_method, method, 0, id, rs) == -1)
		return -1;
	const char *name = name_in_body(method, params);
	if (name == NULL)
		return 0;
	return mcp_header_check("Mcp-Name", rq->mcp_name, name, 1, id, rs);
}

/* ttlMs and cacheScope of a cacheable result: the same for every caller. */
static struct json_object *
cacheable(struct json_object *r)
{
	json_object_object_add(r, "ttlMs", json_object_new_int(LIST_TTL_MS));
	json_object_object_add(r, "cacheScope", json_object_new_string("public"));
	return r;
}

static struct json_object *
discover_result(void)
{
	struct json_object *r = json_object_new_object();
	struct json_object *caps = json_object_new_object();

	json_object_object_add(r, "supportedVersions", supported_versions());
	json_object_object_add(caps, "tools", json_object_new_object());
	json_object_object_add(caps, "resources", json_object_new_object());
	/* None are offered, but prompts/list answers (with none), so it is declared. */
	json_object_object_add(caps, "prompts", json_object_new_object());
	/* A backgrounded execution is a task for a client that declares it. */
	struct json_object *ext = json_object_new_object();
	json_object_object_add(ext, TASKS_EXTENSION, json_object_new_object());
	json_object_object_add(caps, "extensions", ext);
	json_object_object_add(r, "capabilities", caps);
	if (cfg->server_description && cfg->server_description[0])
		json_object_object_add(r, "instructions",
				       json_object_new_string(cfg->server_description));
	return cacheable(r);
}

/* A named list of nothing, cacheable: what this server has no use for. */
static struct json_object *
empty_list(const char *key)
{
	struct json_object *r = json_object_new_object();
	json_object_object_add(r, key, json_object_new_array());
	return cacheable(r);
}

/*
 * On the 2026-07-28 path a tool's refusal of its arguments is a tool
 * result with isError, as the revision asks, not a protocol error: a
 * client's model can read it and retry.
 */
static void
modern_tool_error(struct mcp_response *rs)
{
	struct json_object *msg, *err, *m, *id, *code;

	if (rs->body == NULL || (msg = json_tokener_parse(rs->body)) == NULL)
		return;
	if (!json_object_object_get_ex(msg, "error", &err) ||
	    !json_object_object_get_ex(err, "code", &code) ||
	    json_object_get_int(code) != ERR_PARAMS ||
	    !json_object_object_get_ex(err, "message", &m) ||
	    strncmp(json_object_get_string(m), "unknown tool", 12) == 0 ||
	    strcmp(json_object_get_string(m), "tools/call needs params.name") == 0) {
		json_object_put(msg);
		return;
	}
	struct json_object *r = tool_result(json_object_new_object(), json_object_get_string(m), 1);
	json_object_object_del(r, "structuredContent");
	json_object_object_get_ex(msg, "id", &id);
	free(rs->body);
	rs->body = NULL;
	mcp_set_result(rs, id, r);
	json_object_put(msg); /* after: id is its member */
	snprintf(rs->outcome, sizeof(rs->outcome), "isError");
}

/*
 * The execution session a tools/call names by execution_session_id, if
 * `caller` may use it: referenced, else NULL (the tool answers for it).
 */
static struct session *
named_session(struct session *caller, struct json_object *params)
{
	struct json_object *args, *v;

	if (!json_object_object_get_ex(params, "arguments", &args) ||
	    !json_object_is_type(args, json_type_object) ||
	    !json_object_object_get_ex(args, "execution_session_id", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return NULL;
	struct session *s = session_get(json_object_get_string(v));
	if (s && !session_may_use(caller, s)) {
		session_put(s);
		s = NULL;
	}
	return s;
}

/* The identity a request acts as (auth.h): its caller's, or "anonymous". */
static const char *
identity_of(const struct mcp_request *rq)
{
	return rq->identity ? rq->identity : "anonymous";
}

/*
 * tools/call, as the caller's transient session, once Mcp-Param-Session
 * agrees with the body; the named session's calls count too.
 */
static void
modern_tools_call(const struct mcp_request *rq, struct json_object *id,
		  struct json_object *params, struct mcp_response *rs)
{
	pool_lock();
	if (mcp_header_params(cfg, rq, params, id, rs) == -1) {
		pool_unlock();
		return;
	}
	struct session *caller = session_transient(identity_of(rq));
	struct session *named = named_session(caller, params);
	if (named && named->requests >= cfg->http_max_calls_per_session) {
		mcp_too_many_requests(named, id, rs);
	} else {
		if (named)
			named->requests++;
		int flags = (wants_tasks(params) ? MCP_CALL_TASKS : 0) |
			    (mcp_elicit_declared(meta_get(params, META_CAPS)) ? MCP_CALL_INPUT : 0);
		mcp_tools_call(rq, caller, id, params, flags, rs);
		if (named)
			named->requests--;
	}
	if (named)
		session_put(named);
	session_put(caller);
	pool_unlock();
	modern_tool_error(rs);
}

/* tasks/...: the caller's backgrounded executions (tasks.h). */
static void
modern_tasks(const struct mcp_request *rq, const char *method, struct json_object *id,
	     struct json_object *params, struct mcp_response *rs)
{
	char msg[ERR_LEN], node[CONFIG_NODE_NAME_MAX + 1];
	int code = 0;
	struct json_object *tid;

	if (json_object_object_get_ex(params, "taskId", &tid) &&
	    json_object_is_type(tid, json_type_string) &&
	    handle_elsewhere(json_object_get_string(tid), node, sizeof(node))) {
		mcp_set_misdirected(rs, id, "params.taskId", node);
		return;
	}
	pool_lock();
	struct json_object *r = tasks_handle(cfg, method, params, identity_of(rq), &code, msg,
					     sizeof(msg));
	pool_unlock();
	if (r)
		mcp_set_result(rs, id, r);
	else
		mcp_set_error(rs, 200, id, code, msg);
}

/* resources/...: cacheable; an unknown URI is invalid params naming it (SEP-2164). */
static void
modern_resources(const struct mcp_request *rq, const char *method, struct json_object *id,
		 struct json_object *params, struct mcp_response *rs)
{
	char msg[ERR_LEN];
	int code = 0;
	struct json_object *uri;

	pool_lock();
	struct session *caller = session_transient(identity_of(rq));
	struct json_object *r = resources_handle(cfg, caller, method, params, &code, msg,
						 sizeof(msg));
	session_put(caller);
	pool_unlock();
	if (r) {
		mcp_set_result(rs, id, cacheable(r));
	} else if (code == RESOURCES_NOT_FOUND && json_object_object_get_ex(params, "uri", &uri)) {
		/* 2026-07-28 (SEP-2164): invalid params, naming the URI. */
		struct json_object *data = json_object_new_object();
		json_object_object_add(data, "uri", json_object_get(uri));
		set_error_data(rs, 200, id, ERR_PARAMS, msg, data);
	} else {
		mcp_set_error(rs, 200, id, code, msg);
	}
}

/* A 2026-07-28 request: no MCP session; the caller is its identity alone. */
void
mcp_modern_handle(const struct mcp_request *rq, const char *method, struct json_object *id,
		  struct json_object *params, struct mcp_response *rs)
{
	if (id == NULL) {
		rs->status = 202; /* notifications: none is defined over HTTP; ignored */
		return;
	}
	rs->modern = 1;
	if (modern_check(rq, method, id, params, rs) == -1)
		return;
	if (strcmp(method, "server/discover") == 0) {
		mcp_set_result(rs, id, discover_result());
	} else if (strcmp(method, "tools/list") == 0) {
		struct json_object *r = json_object_new_object();
		json_object_object_add(r, "tools", tools_list(cfg, 1));
		mcp_set_result(rs, id, cacheable(r));
	} else if (strcmp(method, "prompts/list") == 0) {
		mcp_set_result(rs, id, empty_list("prompts"));
	} else if (strcmp(method, "resources/list") == 0) {
		/* Files live in execution sessions, which a list names no one of. */
		mcp_set_result(rs, id, empty_list("resources"));
	} else if (strcmp(method, "tools/call") == 0) {
		modern_tools_call(rq, id, params, rs);
	} else if (tasks_method(method)) {
		modern_tasks(rq, method, id, params, rs);
	} else if (resources_method(method)) {
		modern_resources(rq, method, id, params, rs);
	} else {
		mcp_set_error(rs, 404, id, ERR_METHOD, "Method not found");
	}
}
