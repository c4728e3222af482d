/*
 * mcp.h - the MCP protocol over JSON-RPC 2.0: lifecycle, sessions, tools.
 *
 * Knows nothing of HTTP beyond the few headers MCP defines: http.c hands
 * it a request and sends back what it answers.
 */
#ifndef SUPERVISOR_MCP_H
#define SUPERVISOR_MCP_H

#include <stddef.h>

#include "session.h"

struct config;

struct mcp_request {
	const char *method;	      /* HTTP method: POST, GET, DELETE */
	const char *body;	      /* POST body (borrowed) */
	size_t body_len;
	const char *session_id;	      /* Mcp-Session-Id header, or NULL */
	const char *protocol_version; /* MCP-Protocol-Version header, or NULL */
};

struct mcp_response {
	int status;				/* HTTP status */
	char *body;				/* JSON, or NULL for none (owned) */
	char session_id[SESSION_ID_LEN + 1];	/* to send as Mcp-Session-Id, or "" */
	const char *allow;			/* Allow header for 405, or NULL */
};

/* Remember the configuration (borrowed for the daemon's lifetime). */
void mcp_init(const struct config *cfg);
/* Answer one HTTP request to /mcp. */
void mcp_handle(const struct mcp_request *rq, struct mcp_response *rs);
void mcp_response_free(struct mcp_response *rs);
/* Nonzero if `version` is a protocol version this server speaks. */
int mcp_version_supported(const char *version);

#endif
