/* mcp_elicit.c - see mcp_elicit.h. */
#include "autoconf.h"

#include <string.h>

#include "json_member.h"
#include "log.h"
#include "mcp.h"
#include "mcp_elicit.h"
#include "pool.h"
#include "pool_exec.h"

int
mcp_elicit_declared(struct json_object *caps)
{
	struct json_object *el;

	if (!json_object_is_type(caps, json_type_object) ||
	    !json_object_object_get_ex(caps, "elicitation", &el) ||
	    !json_object_is_type(el, json_type_object))
		return 0;
	/* 2025-11-25: {} is form alone, as before modes existed. */
	return json_object_object_length(el) == 0 || json_object_object_get_ex(el, "form", NULL);
}

/* The requestedSchema of one prompt: a single required string. Caller owns it. */
static struct json_object *
string_schema(const char *prompt)
{
	struct json_object *sc = json_object_new_object();
	struct json_object *props = json_object_new_object();
	struct json_object *value = json_object_new_object();
	struct json_object *req = json_object_new_array();

	json_object_object_add(value, "type", json_object_new_string("string"));
	json_object_object_add(value, "title", json_object_new_string(prompt[0] ? prompt
										  : "input"));
	json_object_object_add(props, "value", value);
	json_object_array_add(req, json_object_new_string("value"));
	json_object_object_add(sc, "type", json_object_new_string("object"));
	json_object_object_add(sc, "properties", props);
	json_object_object_add(sc, "required", req);
	return sc;
}

struct json_object *
mcp_elicit_params(const char *prompt)
{
	struct json_object *params = json_object_new_object();

	json_object_object_add(params, "message",
			       json_object_new_string(prompt[0] ? prompt
								: "The code asks for a line of input"));
	json_object_object_add(params, "requestedSchema", string_schema(prompt));
	return params;
}

int
mcp_elicit_send(const struct mcp_request *rq, const char *rpc_id, const char *prompt)
{
	struct json_object *msg = json_object_new_object();
	struct json_object *params = mcp_elicit_params(prompt);

	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", json_object_new_string(rpc_id));
	json_object_object_add(msg, "method", json_object_new_string("elicitation/create"));
	json_object_object_add(msg, "params", params);
	int rc = rq->send_event(rq->io, json_object_to_json_string_ext(
						 msg, JSON_C_TO_STRING_PLAIN |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(msg);
	return rc;
}

enum input_answer
mcp_elicit_result(struct json_object *result, const char **text)
{
	struct json_object *content, *value;

	*text = NULL;
	if (!json_object_is_type(result, json_type_object))
		return INPUT_EOF;
	const char *action = json_member_str(result, "action");
	if (strcmp(action, "accept") == 0 &&
	    json_object_object_get_ex(result, "content", &content) &&
	    json_object_object_get_ex(content, "value", &value) &&
	    json_object_is_type(value, json_type_string)) {
		*text = json_object_get_string(value);
		return INPUT_VALUE;
	}
	return strcmp(action, "cancel") == 0 ? INPUT_CANCEL : INPUT_EOF;
}

void
mcp_elicit_answer(struct json_object *msg)
{
	struct json_object *id, *result = NULL;
	const char *text;

	if (!json_object_object_get_ex(msg, "id", &id) || !json_object_is_type(id, json_type_string))
		return;
	json_object_object_get_ex(msg, "result", &result);
	enum input_answer how = mcp_elicit_result(result, &text);
	if (pool_input_answer(json_object_get_string(id), how, text) == -1)
		log_debug("a response to %.60s, which no prompt waits for",
			  json_object_get_string(id));
}
