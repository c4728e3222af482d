/*
 * mcp_call.h - tools/call as both revisions' paths run it (mcp.c,
 * mcp_modern.c): the tool looked up and its arguments checked, the
 * execution session a call names, the progress and client-gone callbacks
 * handed to the tool, and the answer with its metrics. Each path finds
 * its caller's session and counts its requests itself.
 */
#ifndef SUPERVISOR_MCP_CALL_H
#define SUPERVISOR_MCP_CALL_H

#include "mcp.h"

struct config;
struct json_object;
struct session;

/* Remember the configuration (borrowed for the daemon's lifetime). */
void mcp_call_init(const struct config *cfg);
/*
 * tools/call of `params` by session `s` (borrowed), answered into rs; the
 * lock is held (released while the tool waits). `flags` (2026-07-28):
 * MCP_CALL_TASKS, the client declared the tasks extension, so a transient
 * caller's backgrounded execution is a task; MCP_CALL_INPUT, it declared
 * elicitation, so a kernel's input() ends the call with an
 * InputRequiredResult, answered by a retry with inputResponses.
 */
#define MCP_CALL_TASKS 1
#define MCP_CALL_INPUT 2
void mcp_tools_call(const struct mcp_request *rq, struct session *s, struct json_object *id,
		    struct json_object *params, int flags, struct mcp_response *rs);
/* 429 for a session with http.max_concurrent_calls_per_session in flight. */
void mcp_too_many_requests(const struct session *s, struct json_object *id,
			   struct mcp_response *rs);

#endif
