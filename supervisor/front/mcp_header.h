/*
 * mcp_header.h - the SEP-2243 headers of the 2026-07-28 path
 * (mcp_header.c): a header value against the body value it mirrors (OWS
 * around it dropped, the "=?base64?...?=" form decoded), the refusal of a
 * disagreement (HTTP 400, JSON-RPC -32020 naming the header), and the one
 * custom header this server declares: Mcp-Param-Session, which mirrors
 * the tools/call argument that names a kernel session (x-mcp-header
 * "Session" in the tool's inputSchema, tools.c), so that a load balancer
 * can route on it.
 */
#ifndef SUPERVISOR_MCP_HEADER_H
#define SUPERVISOR_MCP_HEADER_H

#include "mcp.h"

struct config;
struct json_object;

/* The x-mcp-header name of a kernel session's argument, and its header. */
#define MCP_PARAM_SESSION "Session"
#define MCP_PARAM_SESSION_HEADER "Mcp-Param-" MCP_PARAM_SESSION

/*
 * Whether header value `h` (OWS around it dropped; with `decode`, the
 * base64 sentinel decoded) equals the body's value `want`.
 */
int mcp_header_matches(const char *h, const char *want, int decode);
/*
 * Header `field`, of value `h` (NULL: absent), against the body's value
 * `want`; `decode` as for mcp_header_matches. 0, or -1 after answering
 * -32020 with 400 for request `id` (borrowed).
 */
int mcp_header_check(const char *field, const char *h, const char *want, int decode,
		     struct json_object *id, struct mcp_response *rs);
/*
 * A tools/call's Mcp-Param-Session (rq->mcp_param_session) against the
 * argument of the called tool that names a kernel session (`params`
 * borrowed): equal when both are there, neither when one is missing.
 * Called with pool_lock() held (it looks the tool up under `cfg`). 0, or
 * -1 after answering -32020 with 400.
 */
int mcp_header_params(const struct config *cfg, const struct mcp_request *rq,
		      struct json_object *params, struct json_object *id,
		      struct mcp_response *rs);

#endif
