/*
 * mcp_modern.h - MCP 2026-07-28, the stateless path of /mcp (mcp_modern.c):
 * no MCP session; every request carries its version and capabilities in
 * params._meta, mirrored in MCP-Protocol-Version, Mcp-Method, Mcp-Name and
 * Mcp-Param-Session headers that must agree with the body (mcp_header.h
 * compares them). It owns the order of those checks,
 * server/discover, the cacheable lists, and tools/call, tasks and
 * resources as this path answers them; the resultType and serverInfo
 * every result carries are stamped by the envelope (mcp_rpc.h). mcp.c
 * hands it the requests mcp_modern_request picks. mcp_header_modern
 * (mcp.h) is defined here too.
 */
#ifndef SUPERVISOR_MCP_MODERN_H
#define SUPERVISOR_MCP_MODERN_H

#include "mcp.h"

struct config;
struct json_object;

/* Remember the configuration (borrowed for the daemon's lifetime). */
void mcp_modern_init(const struct config *cfg);
/*
 * Whether a request with `params` (borrowed, may be NULL) takes the
 * 2026-07-28 path: its _meta or its header says so, or it names a version
 * unknown here and no session.
 */
int mcp_modern_request(const struct mcp_request *rq, struct json_object *params);
/* Answer one 2026-07-28 request (all borrowed) into rs; takes the lock itself. */
void mcp_modern_handle(const struct mcp_request *rq, const char *method, struct json_object *id,
		       struct json_object *params, struct mcp_response *rs);

#endif
