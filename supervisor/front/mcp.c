/*
 * mcp.c - see mcp.h: the /mcp entry and the session-era path (2025-11-25
 * and older): initialize, sessions, their requests and streams. The
 * 2026-07-28 path is mcp_modern.c, handed the requests it picks; both
 * answer through the JSON-RPC envelope (mcp_rpc.h) and run tools/call
 * through mcp_call.h.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "config.h"
#include "handle.h"
#include "job.h"
#include "log.h"
#include "mcp.h"
#include "mcp_call.h"
#include "mcp_elicit.h"
#include "mcp_modern.h"
#include "mcp_rpc.h"
#include "pool.h"
#include "pubhooks.h"
#include "resources.h"
#include "session.h"
#include "tools.h"

static const struct config *cfg;

void
mcp_init(const struct config *c)
{
	cfg = c;
	pubhooks_init(c);
	mcp_call_init(c);
	mcp_modern_init(c);
}

void
mcp_response_free(struct mcp_response *rs)
{
	free(rs->body);
	rs->body = NULL;
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
		version = mcp_version_newest();
	struct session_limits lim = {cfg->pool_max_sessions, config_identity_share(cfg)};
	pool_lock();
	/* Every later request must come from this identity (find_session). */
	struct session *s = session_create(rq->identity ? rq->identity : "anonymous", &lim, why,
					   sizeof(why));
	if (s) {
		memcpy(rs->session_id, s->id, sizeof(rs->session_id));
		s->elicitation = mcp_elicit_declared(json_object_object_get(params, "capabilities"));
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
		mcp_tools_call(rq, s, id, params, 0, rs);
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

/* Look up the request's session; answers 400, 404 or 421 (another node's) itself. */
static struct session *
find_session(const struct mcp_request *rq, struct mcp_response *rs, struct json_object *id)
{
	if (rq->session_id == NULL) {
		mcp_set_error(rs, 400, id, ERR_SERVER, "Mcp-Session-Id header is required");
		return NULL;
	}
	char node[CONFIG_NODE_NAME_MAX + 1];
	if (handle_elsewhere(rq->session_id, node, sizeof(node))) {
		mcp_set_misdirected(rs, id, "Mcp-Session-Id header", node);
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

static void
handle_post(const struct mcp_request *rq, struct mcp_response *rs)
{
	struct json_object *msg, *id, *params = NULL;
	const char *method;
	int has_nul;

	if (mcp_parse_body(rq, rs, &msg, &has_nul) == -1)
		return;
	if (mcp_check_message(msg, rs, &method, &id) == -1)
		goto out;
	if (has_nul && mcp_refuse_nul(msg, id, rs) == -1)
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
			else if (method == NULL)
				mcp_elicit_answer(msg); /* maybe a kernel's prompt answered */
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
