/*
 * mcp_client.h - a minimal MCP streamable-HTTP client over libcurl.
 *
 * Just enough of MCP for `codeexecctl exec` and for the front's calls to
 * upstream servers (code mode, upstream.h), in either revision: a server
 * whose server/discover lists 2026-07-28 is spoken to statelessly (each
 * request with its _meta and MCP-Protocol-Version, Mcp-Method and Mcp-Name
 * headers); any other gets initialize, a session, requests on it, and
 * DELETE at the end. Answers may come as JSON or as a text/event-stream;
 * either way the response to our request id is returned. A request the
 * caller stops (opts.stop) is followed by notifications/cancelled. One
 * struct mcpc per thread; the caller runs curl_global_init first.
 */
#ifndef COMMON_MCP_CLIENT_H
#define COMMON_MCP_CLIENT_H

#include <stddef.h>

#include <curl/curl.h>
#include <json-c/json.h>

/* The revision a client speaks: found out, or known from an earlier open. */
enum mcpc_revision {
	MCPC_PROBE,  /* server/discover first; initialize if it has no 2026-07-28 */
	MCPC_LEGACY, /* initialize and a session (2025-06-18 asked) */
	MCPC_MODERN, /* 2026-07-28, stateless */
};

/* How a client calls: all optional (zero: the defaults). */
struct mcpc_opts {
	const char *client_name; /* clientInfo.name; NULL: "codeexecctl" */
	const char *token;	 /* sent as a bearer token; NULL: none */
	long timeout_s;		 /* one exchange, at most; 0: none */
	size_t max_bytes;	 /* the largest answer taken; 0: any */
	/* Asked about once a second during an exchange: nonzero stops it. */
	int (*stop)(void *arg);
	void *stop_arg;
	int session_optional;	 /* a server may answer without Mcp-Session-Id */
	enum mcpc_revision revision; /* what to speak; MCPC_PROBE: ask first */
};

struct mcpc {
	CURL *curl;
	struct mcpc_opts opts;	    /* borrowed strings */
	char *url;
	char session_id[256];	    /* from the initialize response; "" before */
	char protocol_version[32];  /* as the server accepted it */
	long long next_id;
	char errbuf[CURL_ERROR_SIZE];
	char error[512];	    /* why the last request failed, as logged */
	int too_big;		    /* the last answer passed opts.max_bytes */
	int timed_out;		    /* the last exchange passed opts.timeout_s */
	int unreachable;	    /* the last exchange found no server to talk to */
	int stopped;		    /* opts.stop stopped the last exchange */
	long status;		    /* the last request's HTTP status; 0: none came */
	int ready;		    /* mcpc_open succeeded */
	int modern;		    /* the server speaks 2026-07-28: no session */
	int probing;		    /* asking server/discover: failures are not news */
	int unstoppable;	    /* sending notifications/cancelled: opts.stop not asked */
	double stop_asked;	    /* monotonic s opts.stop was last asked */
	int tools_list_changed;	    /* the server offers notifications/tools/list_changed */
};

/*
 * Connect to the MCP endpoint `url` (copied) with `opts` (copied; NULL:
 * none): initialize, then notifications/initialized. Returns 0, or -1
 * after logging why (also in m->error); call mcpc_close() in both cases.
 */
int mcpc_open(struct mcpc *m, const char *url, const struct mcpc_opts *opts);
/*
 * Call `method` with `params` (consumed; may be NULL). Returns the
 * response's `result` (caller owns), or NULL after logging the HTTP or
 * JSON-RPC error.
 */
struct json_object *mcpc_call(struct mcpc *m, const char *method, struct json_object *params);
/*
 * Hold a GET stream open on the session (2025 revisions) and hand each
 * JSON-RPC message the server sends on it to on_message (borrowed), until
 * the stream ends or opts.stop says so. Returns 0 when the server ended
 * it, -1 (logged) otherwise, e.g. a server that offers no such stream.
 */
int mcpc_listen(struct mcpc *m, void (*on_message)(struct json_object *msg, void *arg),
		void *arg);
/* End the session with DELETE if one was opened, and release `m`. */
void mcpc_close(struct mcpc *m);

#endif
