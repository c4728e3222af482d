/*
 * mcp_client.h - a minimal MCP streamable-HTTP client over libcurl.
 *
 * Just enough of MCP for `codeexecctl exec`: initialize a session, send
 * requests on it, and end it with DELETE. Answers may come as JSON or as a
 * text/event-stream; either way the response to our request id is returned.
 */
#ifndef CTL_MCP_CLIENT_H
#define CTL_MCP_CLIENT_H

#include <curl/curl.h>
#include <json-c/json.h>

struct mcpc {
	CURL *curl;
	char *url;
	char session_id[256];	    /* from the initialize response; "" before */
	char protocol_version[32];  /* as the server accepted it */
	long long next_id;
	char errbuf[CURL_ERROR_SIZE];
};

/*
 * Connect to the MCP endpoint `url` (copied): initialize, then
 * notifications/initialized. Returns 0, or -1 after logging why; call
 * mcpc_close() in both cases.
 */
int mcpc_open(struct mcpc *m, const char *url);
/*
 * Call `method` with `params` (consumed; may be NULL). Returns the
 * response's `result` (caller owns), or NULL after logging the HTTP or
 * JSON-RPC error.
 */
struct json_object *mcpc_call(struct mcpc *m, const char *method, struct json_object *params);
/* End the session with DELETE if one was opened, and release `m`. */
void mcpc_close(struct mcpc *m);

#endif
