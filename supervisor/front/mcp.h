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
	const char *mcp_method;	      /* Mcp-Method header (2026-07-28), or NULL */
	const char *mcp_name;	      /* Mcp-Name header (2026-07-28), or NULL */
	const char *mcp_param_session; /* Mcp-Param-Session header (2026-07-28), or NULL */
	const char *identity;	      /* the caller's (auth.h); NULL: anonymous */
	int accepts_sse;	      /* Accept lists text/event-stream */
	double arrived;		      /* monotonic s: the request came (0: now) */
	/*
	 * The transport's side of streaming: send one JSON-RPC message as an
	 * event on this request's stream (starting it if needed), and tell
	 * whether the client has gone. Both return/answer -1/nonzero when the
	 * client is gone. Called without the lock.
	 */
	int (*send_event)(void *io, const char *json);
	int (*client_gone)(void *io);
	/* The client's socket, for the main loop to watch; -1: unknown. */
	int (*client_fd)(void *io);
	void *io;
};

struct mcp_response {
	int status;				/* HTTP status */
	char *body;				/* JSON, or NULL for none (owned) */
	char session_id[SESSION_ID_LEN + 1];	/* to send as Mcp-Session-Id, or "" */
	const char *allow;			/* Allow header for 405, or NULL */
	int open_stream;			/* GET: serve the session's event stream */
	unsigned stream;			/* its number, for mcp_stream_current */
	int close;				/* close the connection after answering */
	char what[160];				/* for the log: method and tool */
	char outcome[64];			/* for the log: how it ended, or "" */
	int modern;				/* the 2026-07-28 path (mcp_modern.c) */
	int timed;				/* an execution's timings are set: */
	double queued_ms, kernel_ms;		/* for the log, as in its result */
};

/* Remember the configuration (borrowed for the daemon's lifetime). */
void mcp_init(const struct config *cfg);
/* Answer one HTTP request to /mcp. */
void mcp_handle(const struct mcp_request *rq, struct mcp_response *rs);
void mcp_response_free(struct mcp_response *rs);
/*
 * Nonzero while GET stream number `stream` of session `id` may go on: the
 * session exists and no http.max_streams_per_session newer streams began.
 */
int mcp_stream_current(const char *id, unsigned stream);
/* Nonzero if `version` is a protocol version this server speaks. */
int mcp_version_supported(const char *version);
/*
 * Nonzero if an MCP-Protocol-Version header of `version` (NULL: none)
 * selects the 2026-07-28 path: any value but a session-era version. Such
 * a request has no MCP session: its Mcp-Session-Id is ignored.
 */
int mcp_header_modern(const char *version);

#endif
