/*
 * mcp_client.h - a minimal MCP streamable-HTTP client over libcurl.
 *
 * Just enough of MCP for `codeexecctl exec` and for the front's calls to
 * upstream servers (code mode, upstream.h): initialize a session, send
 * requests on it, and end it with DELETE. Answers may come as JSON or as a
 * text/event-stream; either way the response to our request id is returned.
 * One struct mcpc per thread; the caller runs curl_global_init first.
 */
#ifndef COMMON_MCP_CLIENT_H
#define COMMON_MCP_CLIENT_H

#include <stddef.h>

#include <curl/curl.h>
#include <json-c/json.h>

/* How a client calls: all optional (zero: the defaults). */
struct mcpc_opts {
	const char *client_name; /* clientInfo.name; NULL: "codeexecctl" */
	const char *token;	 /* sent as a bearer token; NULL: none */
	long timeout_s;		 /* one exchange, at most; 0: none */
	size_t max_bytes;	 /* the largest answer taken; 0: any */
	const volatile int *cancel; /* nonzero: stop the exchange in flight */
	int session_optional;	 /* a server may answer without Mcp-Session-Id */
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
/* End the session with DELETE if one was opened, and release `m`. */
void mcpc_close(struct mcpc *m);

#endif
