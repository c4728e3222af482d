/*
 * mcp_elicit.h - a kernel's input() as an MCP elicitation (2025-11-25):
 * whether a client declared it can answer one, the elicitation/create
 * request sent on a call's SSE stream, and the client's POSTed answer
 * handed to the call that waits for it (pool_exec.h).
 */
#ifndef SUPERVISOR_MCP_ELICIT_H
#define SUPERVISOR_MCP_ELICIT_H

#include <json-c/json.h>

#include "pool_exec.h"

struct mcp_request;

/*
 * Whether client capabilities `caps` (initialize's params.capabilities, or
 * 2026-07-28's clientCapabilities) declare form elicitation: elicitation
 * empty, or with "form".
 */
int mcp_elicit_declared(struct json_object *caps);
/*
 * What ElicitResult `result` (borrowed) answers: accept with a string
 * content.value (*text borrowed from result), decline, cancel. Anything
 * else is end of input.
 */
enum input_answer mcp_elicit_result(struct json_object *result, const char **text);
/* The params of an elicitation/create asking for `prompt`'s line. Caller owns them. */
struct json_object *mcp_elicit_params(const char *prompt);
/*
 * Send elicitation/create with JSON-RPC id `rpc_id` asking for one string,
 * `prompt`, on the stream of request rq (borrowed). 0, or -1 if the client
 * is gone. Called unlocked.
 */
int mcp_elicit_send(const struct mcp_request *rq, const char *rpc_id, const char *prompt);
/*
 * A JSON-RPC response the client POSTed (borrowed): if it answers one of
 * our elicitations, hand the answer to the call that waits (accept: the
 * string; decline or an error: end of input; cancel: an interrupt). Other
 * responses are ignored. Lock held.
 */
void mcp_elicit_answer(struct json_object *msg);

#endif
