/* mcp_call.c - tools/call for both paths of /mcp; see mcp_call.h. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "clock.h"
#include "config.h"
#include "handle.h"
#include "mcp.h"
#include "mcp_call.h"
#include "mcp_elicit.h"
#include "mcp_rpc.h"
#include "metrics.h"
#include "pool.h"
#include "session.h"
#include "tools.h"

static const struct config *cfg;

void
mcp_call_init(const struct config *c)
{
	cfg = c;
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

/* Ask the client for a kernel's line of input (mcp_elicit.h). */
static int
send_elicit(void *io, const char *rpc_id, const char *prompt)
{
	struct progress_io *p = io;
	return mcp_elicit_send(p->rq, rpc_id, prompt);
}

static int
client_gone(void *io)
{
	struct progress_io *p = io;
	return p->rq->client_gone && p->rq->client_gone(p->rq->io);
}

static int
client_fd(void *io)
{
	struct progress_io *p = io;
	return p->rq->client_fd ? p->rq->client_fd(p->rq->io) : -1;
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

/*
 * A 2026-07-28 retry's requestState and its first inputResponses entry
 * (we ask one line at a time), into tc.
 */
static void
retry_fields(struct tool_call *tc, struct json_object *params)
{
	struct json_object *st, *resp;
	const char *text;

	if (json_object_object_get_ex(params, "requestState", &st) &&
	    json_object_is_type(st, json_type_string))
		tc->request_state = json_object_get_string(st);
	if (!json_object_object_get_ex(params, "inputResponses", &resp) ||
	    !json_object_is_type(resp, json_type_object))
		return;
	json_object_object_foreach(resp, key, val) {
		tc->input_key = key;
		tc->input_how = mcp_elicit_result(val, &text);
		tc->input_text = text;
		break;
	}
}

void
mcp_tools_call(const struct mcp_request *rq, struct session *s, struct json_object *id,
	       struct json_object *params, int flags, struct mcp_response *rs)
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
	const char *arg;
	char node[CONFIG_NODE_NAME_MAX + 1], what[64];
	if (handle_args_elsewhere(args, &arg, node, sizeof(node))) {
		snprintf(what, sizeof(what), "argument %s", arg);
		mcp_set_misdirected(rs, id, what, node);
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
	/* The capability is the MCP session's, whichever session the code runs in. */
	int can_elicit = s->elicitation && !s->transient;
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
			       .request_id = id, .client_gone = client_gone,
			       .client_fd = client_fd, .io = &io,
			       .arrived = rq->arrived > 0 ? rq->arrived : clock_mono(),
			       .tasks = s->transient && (flags & MCP_CALL_TASKS)};
	if (io.token && rq->accepts_sse && rq->send_event)
		tc.progress = send_progress;
	if (can_elicit && rq->accepts_sse && rq->send_event)
		tc.elicit = send_elicit;
	if (caller_transient && (flags & MCP_CALL_INPUT)) {
		tc.input_required = 1;
		retry_fields(&tc, params);
	}
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
