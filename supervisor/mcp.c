/* mcp.c - see mcp.h; the 2026-07-28 path is mcp_modern.c, what both share mcp_int.h. */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "clock.h"
#include "config.h"
#include "job.h"
#include "json_strict.h"
#include "log.h"
#include "mcp.h"
#include "mcp_int.h"
#include "mcp_modern.h"
#include "pubhooks.h"
#include "metrics.h"
#include "pool.h"
#include "resources.h"
#include "session.h"
#include "tools.h"
#include "xmalloc.h"

/* Newest first: the first is offered when a client asks for another. */
static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

static const struct config *cfg;

void
mcp_init(const struct config *c)
{
	cfg = c;
	pubhooks_init(c);
	mcp_modern_init(c);
}

int
mcp_version_supported(const char *version)
{
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (strcmp(version, versions[i]) == 0)
			return 1;
	return 0;
}

const char *
mcp_version_newest(void)
{
	return versions[0];
}

void
mcp_response_free(struct mcp_response *rs)
{
	free(rs->body);
	rs->body = NULL;
}

/* Serialize `msg` (consumed) as the response body. */
void
mcp_set_body(struct mcp_response *rs, int status, struct json_object *msg)
{
	rs->status = status;
	rs->body = xstrdup(json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(msg);
}

/* A JSON-RPC error response for request `id` (borrowed, may be NULL). */
void
mcp_set_error(struct mcp_response *rs, int status, struct json_object *id, int code,
	      const char *message)
{
	struct json_object *msg = json_object_new_object();
	struct json_object *err = json_object_new_object();

	json_object_object_add(err, "code", json_object_new_int(code));
	json_object_object_add(err, "message", json_object_new_string(message));
	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", id ? json_object_get(id) : NULL);
	json_object_object_add(msg, "error", err);
	mcp_set_body(rs, status, msg);
	snprintf(rs->outcome, sizeof(rs->outcome), "error %d", code);
}

/* A JSON-RPC success response carrying `result` (consumed). */
void
mcp_set_result(struct mcp_response *rs, struct json_object *id, struct json_object *result)
{
	struct json_object *msg = json_object_new_object();

	if (rs->modern)
		mcp_modern_stamp(result);

	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", json_object_get(id));
	json_object_object_add(msg, "result", result);
	mcp_set_body(rs, 200, msg);
}

static struct json_object *
initialize_result(const char *version)
{
	struct json_object *r = json_object_new_object();
	struct json_object *caps = json_object_new_object();
	struct json_object *tools = json_object_new_object();
	struct json_object *info = json_object_new_object();

	json_object_object_add(r, "protocolVersion", json_object_new_string(version));
	json_object_object_add(tools, "listChanged", json_object_new_boolean(0));
	json_object_object_add(caps, "tools", tools);
	json_object_object_add(caps, "logging", json_object_new_object());
	/* The session's files under outputs/ (resources.h). */
	struct json_object *res = json_object_new_object();
	json_object_object_add(res, "listChanged", json_object_new_boolean(0));
	json_object_object_add(res, "subscribe", json_object_new_boolean(0));
	json_object_object_add(caps, "resources", res);
	json_object_object_add(r, "capabilities", caps);
	json_object_object_add(info, "name", json_object_new_string("codeexecd"));
	json_object_object_add(info, "version", json_object_new_string(PACKAGE_VERSION));
	json_object_object_add(r, "serverInfo", info);
	if (cfg->server_description && cfg->server_description[0])
		json_object_object_add(r, "instructions",
				       json_object_new_string(cfg->server_description));
	return r;
}

static void
do_initialize(const struct mcp_request *rq, struct json_object *id, struct json_object *params,
	      struct mcp_response *rs)
{
	struct json_object *v;
	char why[ERR_LEN] = "";

	if (!json_object_is_type(params, json_type_object) ||
	    !json_object_object_get_ex(params, "protocolVersion", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		mcp_set_error(rs, 400, id, ERR_PARAMS, "initialize needs params.protocolVersion");
		return;
	}
	const char *version = json_object_get_string(v);
	if (!mcp_version_supported(version))
		version = versions[0];
	struct session_limits lim = {cfg->pool_max_sessions, config_identity_share(cfg)};
	pool_lock();
	/* Every later request must come from this identity (find_session). */
	struct session *s = session_create(rq->identity ? rq->identity : "anonymous", &lim, why,
					   sizeof(why));
	if (s) {
		memcpy(rs->session_id, s->id, sizeof(rs->session_id));
		session_put(s);
		mcp_set_result(rs, id, initialize_result(version));
	} else {
		mcp_set_error(rs, 503, id, ERR_SERVER, why);
	}
	pool_unlock();
	if (s)
		log_info("session %.8s initialized for %s (protocol %s)", rs->session_id,
			 rq->identity ? rq->identity : "anonymous", version);
}

/* logging/setLevel: MCP's level names, mapped to syslog priorities. */
static void
do_set_level(struct session *s, struct json_object *id, struct json_object *params,
	     struct mcp_response *rs)
{
	static const char *const levels[] = {"emergency", "alert",  "critical", "error",
					     "warning",	  "notice", "info",	"debug"};
	struct json_object *v;

	if (json_object_is_type(params, json_type_object) &&
	    json_object_object_get_ex(params, "level", &v) &&
	    json_object_is_type(v, json_type_string)) {
		for (int i = 0; i < 8; i++) {
			if (strcmp(json_object_get_string(v), levels[i]) == 0) {
				/* Accepted; the daemon sends no log notifications. */
				mcp_set_result(rs, id, json_object_new_object());
				return;
			}
		}
	}
	mcp_set_error(rs, 200, id, ERR_PARAMS,
		      "params.level must be one of debug, info, notice, warning, error, "
		      "critical, alert, emergency");
}

/* What the progress callback of one tools/call needs. */
struct progress_io {
	const struct mcp_request *rq;
	struct json_object *token;
};

/* Send one notifications/progress for the call's progressToken. */
static int
send_progress(void *io, double progress, const char *message)
{
	struct progress_io *p = io;
	struct json_object *msg = json_object_new_object();
	struct json_object *params = json_object_new_object();

	json_object_object_add(params, "progressToken", json_object_get(p->token));
	json_object_object_add(params, "progress", json_object_new_double(progress));
	json_object_object_add(params, "message", json_object_new_string(message));
	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "method", json_object_new_string("notifications/progress"));
	json_object_object_add(msg, "params", params);
	int rc = p->rq->send_event(p->rq->io,
				   json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN |
									    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(msg);
	return rc;
}

static int
client_gone(void *io)
{
	struct progress_io *p = io;
	return p->rq->client_gone && p->rq->client_gone(p->rq->io);
}

/* The progressToken of a request, if it has one. */
static struct json_object *
progress_token(struct json_object *params)
{
	struct json_object *meta, *token;
	if (json_object_object_get_ex(params, "_meta", &meta) &&
	    json_object_object_get_ex(meta, "progressToken", &token) &&
	    (json_object_is_type(token, json_type_string) ||
	     json_object_is_type(token, json_type_int)))
		return token;
	return NULL;
}

/*
 * The execution session a call of `t` by `caller` acts in, named by its
 * argument execution_session_id (taken out of `args`), into *ctx
 * (referenced; NULL: the caller's own). An id the caller may not use
 * answers as an unknown one. -1 after answering.
 */
static int
call_context(const struct tool *t, struct session *caller, struct json_object *args,
	     struct session **ctx, struct json_object *id, struct mcp_response *rs)
{
	struct json_object *v;

	*ctx = NULL;
	if (!t->in_session)
		return 0; /* it starts, lists or names its sessions itself */
	if (!json_object_object_get_ex(args, "execution_session_id", &v)) {
		if (caller->transient) {
			mcp_set_error(rs, 200, id, ERR_PARAMS,
				      "argument 'execution_session_id' is required on the "
				      "2026-07-28 path: no MCP session stands for it");
			return -1;
		}
		return 0;
	}
	const char *name = json_object_get_string(v);
	if (json_object_is_type(v, json_type_string) &&
	    strlen(name) == (size_t)json_object_get_string_len(v))
		*ctx = session_get(name);
	if (*ctx && !session_may_use(caller, *ctx)) {
		session_put(*ctx);
		*ctx = NULL;
	}
	if (*ctx == NULL) {
		mcp_set_error(rs, 200, id, ERR_PARAMS, "unknown execution_session_id");
		return -1;
	}
	(*ctx)->named++;
	json_object_object_del(args, "execution_session_id");
	return 0;
}

void
mcp_tools_call(const struct mcp_request *rq, struct session *s, struct json_object *id,
	       struct json_object *params, struct mcp_response *rs)
{
	struct json_object *name, *args = NULL;

	if (!json_object_is_type(params, json_type_object) ||
	    !json_object_object_get_ex(params, "name", &name) ||
	    !json_object_is_type(name, json_type_string)) {
		mcp_set_error(rs, 200, id, ERR_PARAMS, "tools/call needs params.name");
		metrics_call(-1, METRICS_REJECTED);
		return;
	}
	snprintf(rs->what, sizeof(rs->what), "tools/call %.100s", json_object_get_string(name));
	const struct tool *t = tools_find(cfg, json_object_get_string(name));
	if (t == NULL) {
		char msg[300];
		snprintf(msg, sizeof(msg), "unknown tool: %.200s", json_object_get_string(name));
		mcp_set_error(rs, 200, id, ERR_PARAMS, msg);
		metrics_call(-1, METRICS_REJECTED);
		return;
	}
	json_object_object_get_ex(params, "arguments", &args);
	if (args != NULL && !json_object_is_type(args, json_type_object)) {
		mcp_set_error(rs, 200, id, ERR_PARAMS, "params.arguments must be an object");
		metrics_call(tools_index(t), METRICS_REJECTED);
		return;
	}
	struct json_object *empty = json_object_new_object();
	char why[1024];
	/* No argument is dropped unseen: an unknown one fails the call. */
	struct json_object *checked = tools_args(cfg, t, args ? args : empty, why, sizeof(why));
	json_object_put(empty);
	if (checked == NULL) {
		mcp_set_error(rs, 200, id, ERR_PARAMS, why);
		metrics_call(tools_index(t), METRICS_REJECTED);
		return;
	}
	struct session *ctx = NULL;
	if (call_context(t, s, checked, &ctx, id, rs) == -1) {
		json_object_put(checked);
		metrics_call(tools_index(t), METRICS_REJECTED);
		return;
	}
	int caller_transient = s->transient;
	if (ctx) {
		ctx->last_used = time(NULL);
		s = ctx;
	}
	/* A client that left before its call started must not have it run. */
	pool_unlock();
	int gone = rq->client_gone && rq->client_gone(rq->io);
	pool_lock();
	if (gone) {
		rs->status = 204;
		snprintf(rs->outcome, sizeof(rs->outcome), "client gone before it started");
		metrics_call(tools_index(t), METRICS_ABANDONED);
		json_object_put(checked);
		if (ctx)
			session_put(ctx);
		return;
	}
	struct progress_io io = {.rq = rq, .token = progress_token(params)};
	struct tool_call tc = {.cfg = cfg, .session = s, .args = checked,
			       .request_id = id, .client_gone = client_gone, .io = &io,
			       .arrived = rq->arrived > 0 ? rq->arrived : clock_mono(),
			       .tasks = s->transient && mcp_modern_wants_tasks(params)};
	if (io.token && rq->accepts_sse && rq->send_event)
		tc.progress = send_progress;
	struct json_object *result = t->call(&tc);
	json_object_put(checked);
	if (ctx && caller_transient && result)
		tool_note_session(result, ctx->id, 0);
	if (ctx)
		session_put(ctx);
	rs->timed = tc.timed;
	rs->queued_ms = tc.queued_ms;
	rs->kernel_ms = tc.kernel_ms;
	if (tc.no_response) {
		rs->status = 204; /* cancelled: the client expects nothing */
		snprintf(rs->outcome, sizeof(rs->outcome), "cancelled");
		metrics_call(tools_index(t), METRICS_CANCELLED);
	} else if (result == NULL) {
		mcp_set_error(rs, 200, id, tc.error_code, tc.error_message);
		metrics_call(tools_index(t), METRICS_REJECTED);
	} else {
		metrics_call(tools_index(t), metrics_outcome_of(result));
		struct json_object *is_error;
		int failed = json_object_object_get_ex(result, "isError", &is_error) &&
			     json_object_get_boolean(is_error);
		snprintf(rs->outcome, sizeof(rs->outcome), "%s", failed ? "isError" : "ok");
		mcp_set_result(rs, id, result);
	}
}

/* resources/...: the session's files (resources.h). */
static void
do_resources(struct session *s, const char *method, struct json_object *id,
	     struct json_object *params, struct mcp_response *rs)
{
	char msg[ERR_LEN];
	int code = 0;

	s->refs++; /* held while the lock is released to read a file */
	struct json_object *r = resources_handle(cfg, s, method, params, &code, msg, sizeof(msg));
	if (r)
		mcp_set_result(rs, id, r);
	else
		mcp_set_error(rs, 200, id, code, msg);
	session_put(s);
}

/* A request of an initialized session; the lock is held. */
static void
dispatch(const struct mcp_request *rq, struct session *s, const char *method,
	 struct json_object *id, struct json_object *params, struct mcp_response *rs)
{
	s->last_used = time(NULL);
	if (strcmp(method, "ping") == 0)
		mcp_set_result(rs, id, json_object_new_object());
	else if (strcmp(method, "tools/list") == 0) {
		struct json_object *r = json_object_new_object();
		json_object_object_add(r, "tools", tools_list(cfg, 0));
		mcp_set_result(rs, id, r);
	} else if (strcmp(method, "tools/call") == 0)
		mcp_tools_call(rq, s, id, params, rs);
	else if (strcmp(method, "logging/setLevel") == 0)
		do_set_level(s, id, params, rs);
	else if (resources_method(method))
		do_resources(s, method, id, params, rs);
	else if (strcmp(method, "initialize") == 0)
		mcp_set_error(rs, 400, id, ERR_INVALID_REQUEST,
			      "this session is already initialized; send initialize without "
			      "Mcp-Session-Id to start a new one");
	else
		mcp_set_error(rs, 200, id, ERR_METHOD, "method not found");
}

/* Refused at once: waiting would hold one more HTTP thread. */
void
mcp_too_many_requests(const struct session *s, struct json_object *id, struct mcp_response *rs)
{
	char why[160];

	snprintf(why, sizeof(why),
		 "this session already has %d requests in flight "
		 "(http.max_concurrent_calls_per_session)", s->requests);
	mcp_set_error(rs, 429, id, ERR_SERVER, why);
	rs->close = 1;
}

/* notifications/cancelled: stop the execution that request started. */
static void
cancel_request(struct session *s, struct json_object *params)
{
	struct json_object *rid;

	if (!json_object_is_type(params, json_type_object) ||
	    !json_object_object_get_ex(params, "requestId", &rid))
		return;
	struct job *j = job_find_request(s->id, rid);
	if (j) {
		job_cancel(j);
		job_unref(j);
	}
}

/* Look up the request's session; answers 400/404 itself when it cannot. */
static struct session *
find_session(const struct mcp_request *rq, struct mcp_response *rs, struct json_object *id)
{
	if (rq->session_id == NULL) {
		mcp_set_error(rs, 400, id, ERR_SERVER, "Mcp-Session-Id header is required");
		return NULL;
	}
	struct session *s = session_get(rq->session_id);
	/* Another identity's session answers as one that does not exist. */
	if (s != NULL && (s->stateless ||
			  strcmp(s->identity, rq->identity ? rq->identity : "anonymous") != 0)) {
		log_info("session %.8s: %s, answered as unknown", s->id,
			 s->stateless ? "an execution session named by Mcp-Session-Id"
				      : "a request of another identity");
		session_put(s);
		s = NULL;
	}
	if (s == NULL)
		mcp_set_error(rs, 404, id, -32001, "session not found");
	return s;
}

/* Check the shape of a JSON-RPC message; answers itself and returns -1 if bad. */
static int
check_message(struct json_object *msg, struct mcp_response *rs, const char **method,
	      struct json_object **id)
{
	struct json_object *v;

	*method = NULL;
	*id = NULL;
	if (json_object_is_type(msg, json_type_array)) {
		mcp_set_error(rs, 400, NULL, ERR_INVALID_REQUEST,
			      "batch requests are not supported");
		return -1;
	}
	if (!json_object_is_type(msg, json_type_object) ||
	    !json_object_object_get_ex(msg, "jsonrpc", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "2.0") != 0) {
		mcp_set_error(rs, 400, NULL, ERR_INVALID_REQUEST, "not a JSON-RPC 2.0 message");
		return -1;
	}
	if (json_object_object_get_ex(msg, "id", id)) {
		if (!json_object_is_type(*id, json_type_string) &&
		    !json_object_is_type(*id, json_type_int)) {
			*id = NULL;
			mcp_set_error(rs, 400, NULL, ERR_INVALID_REQUEST,
				      "id must be a string or an integer");
			return -1;
		}
	}
	if (json_object_object_get_ex(msg, "method", &v)) {
		if (!json_object_is_type(v, json_type_string)) {
			mcp_set_error(rs, 400, *id, ERR_INVALID_REQUEST,
				      "method must be a string");
			return -1;
		}
		*method = json_object_get_string(v);
	} else if (*id == NULL || (!json_object_object_get_ex(msg, "result", NULL) &&
				   !json_object_object_get_ex(msg, "error", NULL))) {
		mcp_set_error(rs, 400, *id, ERR_INVALID_REQUEST, "method is required");
		return -1;
	}
	return 0;
}

/*
 * The path (as "params.arguments.code") of the first string value under
 * `o` that holds a NUL, into `path`; 0 if there is none.
 */
static int
find_nul(struct json_object *o, const char *at, char *path, size_t len)
{
	char sub[200];

	switch (json_object_get_type(o)) {
	case json_type_string:
		if (strlen(json_object_get_string(o)) == (size_t)json_object_get_string_len(o))
			return 0;
		snprintf(path, len, "%s", at[0] ? at : "the message");
		return 1;
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++) {
			snprintf(sub, sizeof(sub), "%s[%zu]", at, i);
			if (find_nul(json_object_array_get_idx(o, i), sub, path, len))
				return 1;
		}
		return 0;
	case json_type_object: {
		json_object_object_foreach(o, key, v) {
			snprintf(sub, sizeof(sub), "%s%s%.60s", at, at[0] ? "." : "", key);
			if (find_nul(v, sub, path, len))
				return 1;
		}
		return 0;
	}
	default:
		return 0;
	}
}

/*
 * Refuse a message holding \u0000 anywhere: C strings would cut it short,
 * so "ping\u0000junk" would run ping and code would lose its tail. Returns
 * -1 after answering.
 */
static int
refuse_nul(struct json_object *msg, struct json_object *id, struct mcp_response *rs)
{
	char path[200], text[300];

	if (!find_nul(msg, "", path, sizeof(path)))
		snprintf(path, sizeof(path), "a member name"); /* json-c cut it: no path */
	/* Never echo an id that holds the NUL or may be a cut member name. */
	if (strcmp(path, "id") == 0 || strcmp(path, "a member name") == 0)
		id = NULL;
	snprintf(text, sizeof(text), "%s contains a NUL character (\\u0000): refused", path);
	mcp_set_error(rs, 400, id, ERR_PARAMS, text);
	return -1;
}

/*
 * Parse a request body: the strict check first (json-c alone takes
 * single quotes, NaN and more, and rewrites huge integers), then json-c
 * with its strict flags. Returns 0 with the message in *msg (caller owns;
 * NULL for the text "null"), or -1 after answering. *has_nul tells whether
 * some string holds \u0000.
 */
static int
parse_body(const struct mcp_request *rq, struct mcp_response *rs, struct json_object **msg,
	   int *has_nul)
{
	struct json_strict js;
	char text[200];

	*msg = NULL;
	if (rq->body_len > INT32_MAX) { /* json-c takes an int length */
		mcp_set_error(rs, 400, NULL, ERR_PARSE, "parse error: the body is too large");
		return -1;
	}
	if (json_strict_check(rq->body, rq->body_len, JSON_TOKENER_DEFAULT_DEPTH, &js) == -1) {
		snprintf(text, sizeof(text), "parse error: %s at byte %zu", js.error, js.error_at);
		mcp_set_error(rs, 400, NULL, ERR_PARSE, text);
		return -1;
	}
	struct json_tokener *tok = json_tokener_new();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	*msg = json_tokener_parse_ex(tok, rq->body, (int)rq->body_len);
	enum json_tokener_error err = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	if (err == json_tokener_continue && end == rq->body_len) {
		/* A bare scalar ("null", 42) ends only where the input does: say so. */
		*msg = json_tokener_parse_ex(tok, "", 1);
		err = json_tokener_get_error(tok);
	}
	int parsed = err == json_tokener_success && end == rq->body_len;
	json_tokener_free(tok);
	if (!parsed) {
		json_object_put(*msg);
		*msg = NULL;
		snprintf(text, sizeof(text), "parse error: %s",
			 err == json_tokener_success ? "text after the JSON value"
						     : json_tokener_error_desc(err));
		mcp_set_error(rs, 400, NULL, ERR_PARSE, text);
		return -1;
	}
	*has_nul = js.has_nul;
	return 0;
}

static void
handle_post(const struct mcp_request *rq, struct mcp_response *rs)
{
	struct json_object *msg, *id, *params = NULL;
	const char *method;
	int has_nul;

	if (parse_body(rq, rs, &msg, &has_nul) == -1)
		return;
	if (check_message(msg, rs, &method, &id) == -1)
		goto out;
	if (has_nul && refuse_nul(msg, id, rs) == -1)
		goto out;
	if (method)
		snprintf(rs->what, sizeof(rs->what), "%.100s", method);
	json_object_object_get_ex(msg, "params", &params);
	if (method && mcp_modern_request(rq, params)) {
		mcp_modern_handle(rq, method, id, params, rs);
		goto out;
	}
	if (method && id && strcmp(method, "initialize") == 0 && rq->session_id == NULL) {
		do_initialize(rq, id, params, rs);
		goto out;
	}
	if (rq->protocol_version && !mcp_version_supported(rq->protocol_version)) {
		mcp_set_error(rs, 400, id, ERR_INVALID_REQUEST,
			      "unsupported MCP-Protocol-Version");
		goto out;
	}
	pool_lock();
	struct session *s = find_session(rq, rs, id);
	if (s) {
		if (method && id && s->requests >= cfg->http_max_calls_per_session) {
			mcp_too_many_requests(s, id, rs);
		} else if (method && id) {
			s->requests++;
			dispatch(rq, s, method, id, params, rs);
			s->requests--;
		} else {
			if (method && strcmp(method, "notifications/cancelled") == 0)
				cancel_request(s, params);
			rs->status = 202; /* notifications and responses need no answer */
		}
		session_put(s);
	}
	pool_unlock();
out:
	json_object_put(msg);
}

static void
handle_delete(const struct mcp_request *rq, struct mcp_response *rs)
{
	pool_lock();
	struct session *s = find_session(rq, rs, NULL);
	if (s) {
		session_close(s);
		session_put(s);
		rs->status = 200;
		log_info("session %.8s ended by the client", rq->session_id);
	}
	pool_unlock();
}

/* GET: the server-to-client stream of a session. */
static void
handle_get(const struct mcp_request *rq, struct mcp_response *rs)
{
	/* Without a session no stream is offered: 405, which the transport
	 * allows and clients take as "no stream", not as a failure. */
	if (rq->session_id == NULL) {
		rs->status = 405;
		rs->allow = "POST, DELETE";
		return;
	}
	if (!rq->accepts_sse) {
		mcp_set_error(rs, 406, NULL, ERR_SERVER,
			      "GET /mcp needs Accept: text/event-stream");
		return;
	}
	pool_lock();
	struct session *s = find_session(rq, rs, NULL);
	if (s) {
		rs->status = 200;
		rs->open_stream = 1;
		rs->stream = ++s->streams; /* ends the oldest beyond the limit */
		session_put(s);
	}
	pool_unlock();
}

int
mcp_stream_current(const char *id, unsigned stream)
{
	pool_lock();
	struct session *s = session_get(id);
	int current = s && s->streams - stream < (unsigned)cfg->http_max_streams_per_session;
	if (s)
		session_put(s);
	pool_unlock();
	return current;
}

void
mcp_handle(const struct mcp_request *rq, struct mcp_response *rs)
{
	rs->status = 500;
	rs->body = NULL;
	rs->session_id[0] = '\0';
	rs->allow = NULL;
	rs->open_stream = 0;
	rs->stream = 0;
	rs->close = 0;
	rs->what[0] = rs->outcome[0] = '\0';
	rs->timed = 0;
	rs->modern = 0;
	if (strcmp(rq->method, "POST") == 0) {
		handle_post(rq, rs);
	} else if (mcp_header_modern(rq->protocol_version)) {
		/* 2026-07-28 has no server stream and no session to end. */
		rs->status = 405;
		rs->allow = "POST";
	} else if (strcmp(rq->method, "DELETE") == 0) {
		handle_delete(rq, rs);
	} else if (strcmp(rq->method, "GET") == 0) {
		handle_get(rq, rs);
	} else {
		rs->status = 405;
		rs->allow = "GET, POST, DELETE";
	}
}
