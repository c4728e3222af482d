/*
 * upstream.h - code mode (issue 35): the MCP servers of `upstreams:`,
 * whose tools kernels call as Python functions (codeexec_upstreams.NAME).
 *
 * The front is their client: upstream.c keeps each server's tool list
 * (listed at start-up, by a thread that retries an unreachable server,
 * again whenever a kernel asks for the list while it is missing, at
 * SIGHUP, and when a server that offers listChanged says on its session's
 * GET stream that its tools changed), the revision it speaks, its
 * bearer token (token_file, the parent's copy: secret_file.h; never sent
 * to a worker or kernel) and the counters /metrics shows. upstream_call.c
 * answers a kernel's requests, which its worker forwards as UPSTREAM_CALL:
 * each on a thread of its own, checked against the upstream's `allow`,
 * `tools` and `max_calls`, made with the token, bounded by `timeout_s`
 * and `max_response_bytes`, logged, and answered with UPSTREAM_REPLY.
 *
 * The kernel's requests and the front's replies are JSON objects:
 *   {"seq": N, "op": "list"}
 *     -> {"seq": N, "ok": true, "upstreams": {NAME: {"tools": [TOOL...]}
 *         or {"error": TEXT}}}, only the upstreams the identity may call
 *   {"seq": N, "op": "call", "upstream": NAME, "tool": T, "arguments": {...}}
 *     -> {"seq": N, "ok": true, "result": CallToolResult}
 * and on failure {"seq": N, "ok": false, "error": {"type": TYPE,
 * "message": TEXT}}, TYPE one of denied, limit, timeout, too_large,
 * unavailable, upstream, cancelled, bad_request. While a call runs, the
 * agent's call names it in its progress (struct call's upstream_note).
 */
#ifndef SUPERVISOR_UPSTREAM_H
#define SUPERVISOR_UPSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "buf.h"
#include "mcp_client.h"

struct config;
struct worker;
struct ipc_upstream_call;

/* How a kernel's upstream call ended, the `outcome` label of /metrics. */
enum upstream_outcome {
	UPSTREAM_OK,
	UPSTREAM_TOOL_ERROR, /* answered, with isError */
	UPSTREAM_DENIED,
	UPSTREAM_LIMIT,
	UPSTREAM_TIMEOUT,
	UPSTREAM_TOO_LARGE,
	UPSTREAM_UNAVAILABLE,
	UPSTREAM_FAILED, /* a JSON-RPC error, or an answer that is not one */
	UPSTREAM_CANCELLED, /* the agent's call ended first: notifications/cancelled sent */
	UPSTREAM_OUTCOME_N,
};

/*
 * Take `cfg`'s upstreams (borrowed for the front's lifetime) and their
 * tokens, list the tools of each: those marked required now (fatal when
 * one cannot be listed), the others on a thread that retries with
 * back-off. Before the HTTP server starts, after the secrets came.
 */
void upstream_init(const struct config *cfg);
/* How many upstreams the configuration has. */
size_t upstream_count(void);
/* Upstream i's name (borrowed). */
const char *upstream_name(size_t i);
/* The index of the upstream called `name`, or -1. */
int upstream_find(const char *name);
/*
 * Upstream i's exposed tools as a new JSON array (caller owns; NULL while
 * not listed yet, with why[why_len] saying what the last attempt met). A
 * missing list is asked for again first when `refresh`.
 */
struct json_object *upstream_tools(size_t i, int refresh, char *why, size_t why_len);
/* Whether `identity` may call upstream i (its `allow`, empty: anyone). */
int upstream_allowed(size_t i, const char *identity);
/* Whether upstream i exposes `tool` (its `tools`, empty: any it lists). */
int upstream_exposes(size_t i, const char *tool);
/* Whether each call of upstream i's `tool` is first approved by the agent's client (`approve`). */
int upstream_needs_approval(size_t i, const char *tool);
/* Upstream i's configuration (borrowed) and bearer token (borrowed; NULL: none). */
const struct config_upstream *upstream_config(size_t i);
const char *upstream_token(size_t i);
/* The options of an exchange with upstream i: its token, bounds, revision. */
struct mcpc_opts upstream_opts(size_t i);
/*
 * A session with upstream i for one call: one a call left open (*reused
 * set), else a new one (caller owns; m->ready clear, and m->error saying
 * why, when it could not be opened). Give it back with upstream_session_end: kept for
 * the next call when `keep` and there is room, else ended (DELETE).
 */
#define UPSTREAM_IDLE_MAX 4 /* sessions kept per upstream, at most */
struct mcpc *upstream_session(size_t i, int *reused);
void upstream_session_end(size_t i, struct mcpc *m, int keep);
/* List every upstream's tools again (SIGHUP), on the lister's thread. */
void upstream_relist(void);
/* Count a call of upstream i that ended so. */
void upstream_count_call(size_t i, enum upstream_outcome o);
/* The outcome's label. */
const char *upstream_outcome_name(enum upstream_outcome o);
/* Append code mode's metrics to the /metrics page (metrics_add_renderer). */
void upstream_render_metrics(struct buf *b);

/*
 * Worker `w` forwarded a request of its kernel during request `exec_id`
 * (pool lock held): answer it on a thread of its own, which replies to
 * the worker if it still runs that request.
 */
void upstream_kernel_request(struct worker *w, uint32_t exec_id,
			     const struct ipc_upstream_call *m);

#endif
