/*
 * mcp_rpc.h - the JSON-RPC 2.0 envelope of /mcp, for both revisions'
 * paths (mcp.c, mcp_modern.c): the session-era version table, the body
 * checks a POST passes before any method is looked at (strict parse,
 * message shape, \u0000), and the response bodies, a 2026-07-28 result
 * stamped with what that revision asks every result to carry. It knows
 * no method, session or tool; mcp_version_supported (mcp.h) is defined
 * here too.
 */
#ifndef SUPERVISOR_MCP_RPC_H
#define SUPERVISOR_MCP_RPC_H

#include "mcp.h"

struct json_object;

/* JSON-RPC error codes both paths answer with. */
#define ERR_PARSE -32700
#define ERR_INVALID_REQUEST -32600
#define ERR_METHOD -32601
#define ERR_PARAMS -32602
#define ERR_SERVER -32000
/* A handle of another node (handle.h): a load balancer's routing mistake. */
#define ERR_MISDIRECTED -32050

/* The newest session-era protocol version (borrowed, static). */
const char *mcp_version_newest(void);

/*
 * Parse a request body: the strict check first, then json-c with its
 * strict flags. Returns 0 with the message in *msg (caller owns; NULL for
 * the text "null"), or -1 after answering. *has_nul tells whether some
 * string holds \u0000.
 */
int mcp_parse_body(const struct mcp_request *rq, struct mcp_response *rs,
		   struct json_object **msg, int *has_nul);
/*
 * Check the shape of JSON-RPC message `msg` (borrowed): *method and *id
 * (borrowed from msg, NULL when absent). Returns 0, or -1 after answering.
 */
int mcp_check_message(struct json_object *msg, struct mcp_response *rs, const char **method,
		      struct json_object **id);
/*
 * Refuse message `msg` (borrowed), which holds \u0000 somewhere, naming
 * where. Returns -1 after answering.
 */
int mcp_refuse_nul(struct json_object *msg, struct json_object *id, struct mcp_response *rs);

/* Serialize `msg` (consumed) as the response body. */
void mcp_set_body(struct mcp_response *rs, int status, struct json_object *msg);
/* A JSON-RPC error response for request `id` (borrowed, may be NULL). */
void mcp_set_error(struct mcp_response *rs, int status, struct json_object *id, int code,
		   const char *message);
/*
 * Answer request `id` (borrowed) whose `what` (the header or argument)
 * names a handle of node `node`: HTTP 421, ERR_MISDIRECTED naming that
 * node, with data {"node": node}; counted in /metrics.
 */
void mcp_set_misdirected(struct mcp_response *rs, struct json_object *id, const char *what,
			 const char *node);
/*
 * A JSON-RPC success response carrying `result` (consumed); on the
 * 2026-07-28 path (rs->modern) it carries resultType and _meta serverInfo.
 */
void mcp_set_result(struct mcp_response *rs, struct json_object *id, struct json_object *result);

#endif
