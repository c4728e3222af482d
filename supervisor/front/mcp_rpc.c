/* mcp_rpc.c - the JSON-RPC envelope both paths of /mcp share; see mcp_rpc.h. */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "handle.h"
#include "json_strict.h"
#include "log.h"
#include "mcp.h"
#include "mcp_rpc.h"
#include "metrics.h"
#include "xmalloc.h"

#define META_SERVER "io.modelcontextprotocol/serverInfo"

/* Newest first: the first is offered when a client asks for another. */
static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

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

void
mcp_set_misdirected(struct mcp_response *rs, struct json_object *id, const char *what,
		    const char *node)
{
	struct json_object *msg = json_object_new_object();
	struct json_object *err = json_object_new_object();
	struct json_object *data = json_object_new_object();
	char text[300];

	snprintf(text, sizeof(text),
		 "misdirected: the %s names a handle of node '%s', not of this node ('%s'); "
		 "the request must go to node '%s'",
		 what, node, handle_node(), node);
	json_object_object_add(err, "code", json_object_new_int(ERR_MISDIRECTED));
	json_object_object_add(err, "message", json_object_new_string(text));
	json_object_object_add(data, "node", json_object_new_string(node));
	json_object_object_add(err, "data", data);
	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", id ? json_object_get(id) : NULL);
	json_object_object_add(msg, "error", err);
	mcp_set_body(rs, 421, msg);
	snprintf(rs->outcome, sizeof(rs->outcome), "misdirected to node %.32s", node);
	metrics_add(METRICS_MISDIRECTED, 1);
	log_info("misdirected request: its %s names a handle of node '%s'", what, node);
}

/* {name, version} of this server. Caller owns. */
static struct json_object *
server_info(void)
{
	struct json_object *info = json_object_new_object();

	json_object_object_add(info, "name", json_object_new_string("codeexecd"));
	json_object_object_add(info, "version", json_object_new_string(PACKAGE_VERSION));
	return info;
}

/* What every 2026-07-28 result carries: resultType and _meta serverInfo. */
static void
stamp_modern(struct json_object *result)
{
	struct json_object *meta;

	if (!json_object_is_type(result, json_type_object))
		return;
	/* A task says "task" itself (tasks.c). */
	if (!json_object_object_get_ex(result, "resultType", NULL))
		json_object_object_add(result, "resultType", json_object_new_string("complete"));
	if (!json_object_object_get_ex(result, "_meta", &meta)) {
		meta = json_object_new_object();
		json_object_object_add(result, "_meta", meta);
	}
	json_object_object_add(meta, META_SERVER, server_info());
}

/* A JSON-RPC success response carrying `result` (consumed). */
void
mcp_set_result(struct mcp_response *rs, struct json_object *id, struct json_object *result)
{
	struct json_object *msg = json_object_new_object();

	if (rs->modern)
		stamp_modern(result);

	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", json_object_get(id));
	json_object_object_add(msg, "result", result);
	mcp_set_body(rs, 200, msg);
}

/* Check the shape of a JSON-RPC message; answers itself and returns -1 if bad. */
int
mcp_check_message(struct json_object *msg, struct mcp_response *rs, const char **method,
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
int
mcp_refuse_nul(struct json_object *msg, struct json_object *id, struct mcp_response *rs)
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
int
mcp_parse_body(const struct mcp_request *rq, struct mcp_response *rs, struct json_object **msg,
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
