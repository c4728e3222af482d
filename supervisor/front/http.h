/*
 * http.h - the HTTP front: civetweb serving /mcp and /health.
 *
 * Owns the civetweb context, the checks that come before MCP sees a request
 * (Origin and Host against DNS rebinding, the body size limit) and the
 * translation between HTTP and struct mcp_request/mcp_response.
 */
#ifndef SUPERVISOR_HTTP_H
#define SUPERVISOR_HTTP_H

struct config;

/*
 * Bind the configured listen address and start serving. Returns the bound
 * port, or -1 with a message in err.
 */
int http_start(const struct config *cfg, char *why, size_t why_len);
/* From now on answer new MCP requests 503: the daemon is stopping. */
void http_drain(void);
/* Stop accepting and wait for the handler threads to finish. */
void http_stop(void);

#endif
