/*
 * mcp_int.h - what the two paths of /mcp share, inside the MCP module
 * only (no file outside mcp.c and mcp_modern.c includes it):
 *
 *   mcp.c         the session-era path (2025-11-25 and older): lifecycle,
 *                 sessions, the JSON-RPC envelope and tools/call; mcp.h
 *   mcp_modern.c  the stateless 2026-07-28 path: its request checks,
 *                 server/discover, cacheable lists, tasks; mcp_modern.h
 *
 * mcp.c owns the answers: these build mcp_response bodies for both paths.
 */
#ifndef SUPERVISOR_MCP_INT_H
#define SUPERVISOR_MCP_INT_H

#include "mcp.h"

struct json_object;
struct session;

/* JSON-RPC error codes both paths answer with. */
#define ERR_PARSE -32700
#define ERR_INVALID_REQUEST -32600
#define ERR_METHOD -32601
#define ERR_PARAMS -32602
#define ERR_SERVER -32000

/* The newest session-era protocol version (borrowed, static). */
const char *mcp_version_newest(void);
/* Serialize `msg` (consumed) as the response body. */
void mcp_set_body(struct mcp_response *rs, int status, struct json_object *msg);
/* A JSON-RPC error response for request `id` (borrowed, may be NULL). */
void mcp_set_error(struct mcp_response *rs, int status, struct json_object *id, int code,
		   const char *message);
/*
 * A JSON-RPC success response carrying `result` (consumed); on the
 * 2026-07-28 path (rs->modern) stamped as mcp_modern_stamp says.
 */
void mcp_set_result(struct mcp_response *rs, struct json_object *id, struct json_object *result);
/*
 * tools/call of `params` by session `s` (borrowed), answered into rs; the
 * lock is held (released while the tool waits).
 */
void mcp_tools_call(const struct mcp_request *rq, struct session *s, struct json_object *id,
		    struct json_object *params, struct mcp_response *rs);
/* 429 for a session with http.max_concurrent_calls_per_session in flight. */
void mcp_too_many_requests(const struct session *s, struct json_object *id,
			   struct mcp_response *rs);

#endif
