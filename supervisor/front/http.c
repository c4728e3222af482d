/* http.c - see http.h. */
#include "autoconf.h"

#include <civetweb.h>
#include <json-c/json.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "authority.h"
#include "clock.h"
#include "config.h"
#include "front_testhook.h"
#include "health.h"
#include "http.h"
#include "http_conn.h"
#include "http_linger.h"
#include "listen_probe.h"
#include "log.h"
#include "memtrim.h"
#include "mcp.h"
#include "metrics.h"
#include "pool.h"
#include "reload.h"
#include "session.h"
#include "sidecar_view.h"
#include "start_failure.h"
#include "xmalloc.h"

/*
 * Threads beyond what sessions may hold, for /health, new sessions and
 * short requests; long work (calls, streams) never takes the last of them.
 */
#define HTTP_SPARE_THREADS 64
#define HTTP_RESERVED_THREADS 16
/*
 * A thread's stack where civetweb sets none (Debian's build sets 100 KiB
 * itself): civetweb's and our handlers' frames need a few KiB.
 */
#ifdef __SANITIZE_ADDRESS__
#define HTTP_STACK_BYTES (1024 * 1024)
#else
#define HTTP_STACK_BYTES (256 * 1024)
#endif

static struct mg_context *ctx;
static struct mg_context *metrics_ctx; /* metrics_listen's, when set */
static atomic_int draining;
static const struct config *cfg;
static int max_busy;	   /* /mcp handlers allowed at once */
static atomic_int busy;	   /* /mcp handlers running now */

/* Nonzero if origin `o` is listed in allowed_origins. */
static int
origin_listed(const struct origin *o)
{
	struct origin allowed;

	for (size_t i = 0; i < cfg->allowed_origins.n; i++)
		if (origin_parse(cfg->allowed_origins.v[i], &allowed, NULL, 0) == 0 &&
		    origin_equal(o, &allowed))
			return 1;
	return 0;
}

/* Nonzero if `a` (a Host header) addresses a listed origin. */
static int
authority_listed(const struct authority *a)
{
	struct origin allowed;

	for (size_t i = 0; i < cfg->allowed_origins.n; i++)
		if (origin_parse(cfg->allowed_origins.v[i], &allowed, NULL, 0) == 0 &&
		    origin_serves(&allowed, a))
			return 1;
	return 0;
}

/*
 * The defence against DNS rebinding: a browser page may only reach us from
 * a loopback or listed origin, and on a loopback listener only under a
 * loopback or listed Host. Both headers go through the one strict parser
 * (authority.h): what it cannot read is refused, never guessed at.
 * `listen_host` is the host of the listener the request came to.
 * Returns 0 if allowed, else -1 with why not in why[why_len].
 */
static int
check_origin_and_host(struct mg_connection *conn, const char *listen_host, char *why,
		      size_t why_len)
{
	const char *origin = mg_get_header(conn, "Origin");
	const char *host_hdr = mg_get_header(conn, "Host");
	struct origin o;
	struct authority a;

	if (origin && (origin_parse(origin, &o, NULL, 0) == -1 ||
		       (!authority_is_loopback(&o.auth) && !origin_listed(&o))))
		return err_set(why, why_len, "Origin not allowed");
	if (host_hdr && authority_host_is_loopback(listen_host) &&
	    (authority_parse(host_hdr, &a, NULL, 0) == -1 ||
	     (!authority_is_loopback(&a) && !authority_listed(&a))))
		return err_set(why, why_len, "Host not allowed");
	return 0;
}

/* Send a complete response. */
/*
 * The headers that let a page of an allowed `origin` (NULL: no Origin was
 * sent) read the answer: never "*", always the one origin, with Vary.
 */
static void
add_cors_headers(struct mg_connection *conn, const char *origin)
{
	if (origin == NULL)
		return;
	mg_response_header_add(conn, "Access-Control-Allow-Origin", origin, -1);
	mg_response_header_add(conn, "Access-Control-Expose-Headers",
			       "Mcp-Session-Id, WWW-Authenticate", -1);
	mg_response_header_add(conn, "Vary", "Origin", -1);
}

static void
send_response(struct mg_connection *conn, int status, const char *type, const char *body,
	      const char *session_id, const char *allow, const char *origin)
{
	char len[32];
	size_t n = body ? strlen(body) : 0;

	snprintf(len, sizeof(len), "%zu", n);
	mg_response_header_start(conn, status);
	add_cors_headers(conn, origin);
	if (body)
		mg_response_header_add(conn, "Content-Type", type, -1);
	mg_response_header_add(conn, "Content-Length", len, -1);
	mg_response_header_add(conn, "Cache-Control", "no-store", -1);
	if (session_id && session_id[0])
		mg_response_header_add(conn, "Mcp-Session-Id", session_id, -1);
	if (allow)
		mg_response_header_add(conn, "Allow", allow, -1);
	mg_response_header_send(conn);
	if (n)
		mg_write(conn, body, n);
}

/* A plain JSON error for failures before MCP sees the request. */
static int
send_http_error(struct mg_connection *conn, int status, const char *message)
{
	char body[512];
	snprintf(body, sizeof(body),
		 "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32000,\"message\":\"%s\"}}",
		 message);
	send_response(conn, status, "application/json", body, NULL, NULL, NULL);
	return status;
}

/*
 * A request auth.h refused: 400, 401 or 403 with the WWW-Authenticate
 * challenge naming the metadata (MCP authorization, RFC 6750, RFC 9728).
 */
static int
send_auth_refusal(struct mg_connection *conn, const struct auth_result *ar, const char *origin)
{
	char challenge[1600];
	struct json_object *o = json_object_new_object(), *e = json_object_new_object();

	auth_challenge(ar, challenge, sizeof(challenge));
	json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(o, "id", NULL);
	json_object_object_add(e, "code", json_object_new_int(-32001));
	json_object_object_add(e, "message", json_object_new_string(ar->why));
	json_object_object_add(o, "error", e);
	const char *body = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	char len[32];
	snprintf(len, sizeof(len), "%zu", strlen(body));
	mg_response_header_start(conn, ar->status);
	add_cors_headers(conn, origin);
	mg_response_header_add(conn, "WWW-Authenticate", challenge, -1);
	mg_response_header_add(conn, "Content-Type", "application/json", -1);
	mg_response_header_add(conn, "Content-Length", len, -1);
	mg_response_header_add(conn, "Cache-Control", "no-store", -1);
	mg_response_header_send(conn);
	mg_write(conn, body, strlen(body));
	json_object_put(o);
	return ar->status;
}

/* Answer with a plain JSON error and close the connection after it. */
static int
send_http_error_close(struct mg_connection *conn, int status, const char *message)
{
	mg_disable_connection_keep_alive(conn);
	return send_http_error(conn, status, message);
}

/* What a request's body may be, read under config_lock for each request. */
struct body_limits {
	size_t max;	  /* max_request_bytes */
	int linger_s;	  /* http.linger_s */
	long linger_bytes; /* http.linger_bytes */
};

/*
 * After a 413 sent before the body was read: read and drop the rest
 * (http_linger.h), so that a client still sending it reads the answer
 * instead of a reset. The handler is counted in `busy` meanwhile, so
 * lingering never takes the threads kept for /health.
 */
static void
linger_after_413(struct mg_connection *conn, const struct body_limits *lim)
{
	const struct mg_request_info *ri = mg_get_request_info(conn);
	struct http_linger_result r;
	int fd = http_conn_socket(conn);

	if (lim->linger_s == 0 || lim->linger_bytes == 0)
		return;
	if (fd < 0) {
		log_warnx("http: cannot find the socket of %s:%d to read the rest of its body "
			  "after its 413", ri->remote_addr, ri->remote_port);
		return;
	}
	http_linger(fd, lim->linger_s, lim->linger_bytes, &r);
	if (r.end == HTTP_LINGER_ERROR)
		log_warnx("http: reading the rest of the body of %s:%d after its 413: %s",
			  ri->remote_addr, ri->remote_port, strerror(r.err));
	else if (r.end != HTTP_LINGER_CLOSED)
		log_info("POST /mcp from %s: still sending %.1f s and %lld bytes after its 413 "
			 "(%s); closed", ri->remote_addr, r.seconds, r.bytes,
			 r.end == HTTP_LINGER_TIME ? "http.linger_s" : "http.linger_bytes");
}

/* Answer 413, then read on (linger_after_413) before the close. */
static void
refuse_body(struct mg_connection *conn, const struct body_limits *lim)
{
	send_http_error_close(conn, 413, "request body exceeds max_request_bytes");
	linger_after_413(conn, lim);
}

/*
 * A client that sent Expect: 100-continue waits for the 100 before its
 * body; civetweb sends none to a request handler. Written on the socket
 * itself: civetweb takes anything written through it for the start of
 * the answer, and would then send no headers.
 */
static void
send_continue(struct mg_connection *conn)
{
	static const char line[] = "HTTP/1.1 100 Continue\r\n\r\n";
	const struct mg_request_info *ri = mg_get_request_info(conn);
	const char *expect = mg_get_header(conn, "Expect");
	int fd;

	if (expect == NULL || strcasecmp(expect, "100-continue") != 0 ||
	    strcmp(ri->http_version, "1.1") != 0)
		return;
	if ((fd = http_conn_socket(conn)) < 0 ||
	    send(fd, line, sizeof(line) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(line) - 1)
		log_warn("http: cannot send 100 Continue to %s:%d", ri->remote_addr,
			 ri->remote_port);
}

/*
 * Read the request body, refusing (with 413) one larger than lim->max
 * bytes before reading it, and asking for it (100 Continue) otherwise.
 * Returns the body (caller frees) or NULL after answering.
 */
static char *
read_body(struct mg_connection *conn, const struct body_limits *lim, size_t *len)
{
	const struct mg_request_info *ri = mg_get_request_info(conn);
	size_t max = lim->max;
	size_t cap = ri->content_length >= 0 ? (size_t)ri->content_length : 65536;
	size_t used = 0;
	/* A body trickled in must not hold the thread past the header limit. */
	time_t deadline = time(NULL) + cfg->http_header_timeout_s;

	if (ri->content_length > (long long)max) {
		refuse_body(conn, lim);
		return NULL;
	}
	send_continue(conn);
	char *body = xmalloc(cap + 1);
	for (;;) {
		if (used == cap) {
			if (cap >= max + 1)
				break;
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			body = xreallocarray(body, cap + 1, 1);
		}
		if (time(NULL) > deadline) {
			free(body);
			send_http_error_close(conn, 408, "the request body came too slowly "
					      "(http.header_timeout_s)");
			return NULL;
		}
		int n = mg_read(conn, body + used, cap - used);
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	if (used > max) {
		free(body);
		refuse_body(conn, lim);
		return NULL;
	}
	body[used] = '\0';
	*len = used;
	return body;
}

/*
 * One request's side of streaming: whether its SSE response has begun, or
 * its JSON response (chunked) began early to learn whether the client is
 * still there.
 */
struct http_io {
	struct mg_connection *conn;
	int sse_started;
	int json_started;
	int probed;		/* written to once the client sent FIN */
	int accepts_sse;	/* so the early answer may be an event stream */
	const char *session_id; /* to send as Mcp-Session-Id, or NULL */
	const char *origin;	/* an allowed Origin to answer with, or NULL */
};

/* Begin an SSE response, chunked so that its end is sent, not waited for. */
static void
sse_begin(struct http_io *io)
{
	mg_response_header_start(io->conn, 200);
	mg_response_header_add(io->conn, "Content-Type", "text/event-stream", -1);
	mg_response_header_add(io->conn, "Cache-Control", "no-cache", -1);
	mg_response_header_add(io->conn, "Transfer-Encoding", "chunked", -1);
	if (io->session_id && io->session_id[0])
		mg_response_header_add(io->conn, "Mcp-Session-Id", io->session_id, -1);
	add_cors_headers(io->conn, io->origin);
	mg_response_header_send(io->conn);
	io->sse_started = 1;
}

/*
 * Begin the JSON answer of a tools/call (always 200) before its result,
 * chunked. Sent only to a client that has sent FIN: if it closed, this
 * write draws the reset that proves it gone; if it only half-closed, it
 * reads the answer as usual.
 */
static void
json_begin(struct http_io *io)
{
	mg_response_header_start(io->conn, 200);
	mg_response_header_add(io->conn, "Content-Type", "application/json", -1);
	mg_response_header_add(io->conn, "Cache-Control", "no-store", -1);
	mg_response_header_add(io->conn, "Transfer-Encoding", "chunked", -1);
	add_cors_headers(io->conn, io->origin);
	mg_response_header_send(io->conn);
	io->json_started = 1;
}

/* Write raw bytes of the stream as one chunk; -1 once the client is gone. */
static int
sse_write(struct http_io *io, const char *text, size_t len)
{
	return mg_send_chunk(io->conn, text, (unsigned)len) > 0 ? 0 : -1;
}

/* The empty chunk that ends a stream. */
static void
sse_end(struct http_io *io)
{
	mg_send_chunk(io->conn, "", 0);
}

static int
sse_send_event(void *arg, const char *json)
{
	struct http_io *io = arg;
	if (!io->sse_started)
		sse_begin(io);
	char *event = xasprintf("event: message\ndata: %s\n\n", json);
	int rc = sse_write(io, event, strlen(event));
	free(event);
	return rc;
}

/*
 * Nonzero once the client is gone: its connection was reset, or a write
 * to it failed. A FIN alone is not enough (a client may half-close and
 * still read), so on the first FIN we write to it - the start of the
 * answer, or an SSE comment - and a client that really closed answers
 * that write with a reset, which we wait for briefly.
 */
static int
http_client_gone(void *arg)
{
	struct http_io *io = arg;

	switch (http_conn_peer(io->conn, 0)) {
	case HTTP_PEER_GONE:
		return 1;
	case HTTP_PEER_EOF:
		break;
	default:
		return 0;
	}
	if (io->probed)
		return 0; /* no reset came after the probe: it half-closed */
	io->probed = 1;
	if (io->sse_started) {
		if (sse_write(io, ":\n\n", 3) == -1)
			return 1;
	} else if (io->accepts_sse) {
		sse_begin(io); /* progress may follow: it needs the stream */
	} else if (!io->json_started) {
		json_begin(io);
	}
	return http_conn_peer(io->conn, 100) == HTTP_PEER_GONE;
}

static int
http_client_fd(void *arg)
{
	const struct http_io *io = arg;
	return http_conn_socket(io->conn);
}

/*
 * GET /mcp: keep the session's stream open until the session ends, a newer
 * stream of it takes its place, the client goes or we stop.
 */
static void
serve_session_stream(struct http_io *io, const char *session_id, unsigned stream)
{
	sse_begin(io);
	for (int tick = 0; !draining && mcp_stream_current(session_id, stream); tick++) {
		if (http_client_gone(io))
			return;
		/* A comment line every 15 s keeps proxies from closing the stream. */
		if (tick % 60 == 59 && sse_write(io, ": keepalive\n\n", 14) == -1)
			return;
		usleep(250 * 1000);
	}
}

static double
now_ms(void)
{
	return clock_mono() * 1e3;
}

/*
 * OPTIONS /mcp: a CORS preflight gets its answer only for an allowed
 * Origin, and then names that origin, never "*".
 */
static int
cors_preflight(struct mg_connection *conn, const char *origin)
{
	mg_response_header_start(conn, 204);
	add_cors_headers(conn, origin);
	mg_response_header_add(conn, "Access-Control-Allow-Methods", "GET, POST, DELETE", -1);
	mg_response_header_add(conn, "Access-Control-Allow-Headers",
			       "Content-Type, Accept, Authorization, Mcp-Session-Id, "
			       "MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-Session, "
			       "Last-Event-ID", -1);
	mg_response_header_add(conn, "Access-Control-Max-Age", "600", -1);
	mg_response_header_add(conn, "Content-Length", "0", -1);
	mg_response_header_send(conn);
	return 204;
}

static int
mcp_handler(struct mg_connection *conn, void *unused)
{
	const struct mg_request_info *ri = mg_get_request_info(conn);
	struct mcp_request rq = {.method = ri->request_method};
	struct mcp_response rs;
	char *body = NULL;
	char denied[64]; /* a fixed refusal of check_origin_and_host */
	double start = now_ms();

	rq.arrived = start / 1e3;
	if (draining)
		return send_http_error(conn, 503, "the server is shutting down");
	/* Reload swaps allowed_origins under config_lock. */
	config_read_lock();
	int refused = check_origin_and_host(conn, cfg->listen_host, denied, sizeof(denied));
	struct body_limits lim = {.max = (size_t)cfg->max_request_bytes,
				  .linger_s = cfg->http_linger_s,
				  .linger_bytes = cfg->http_linger_bytes};
	config_read_unlock();
	if (refused) {
		log_info("%s /mcp from %s refused: %s", ri->request_method, ri->remote_addr, denied);
		return send_http_error(conn, 403, denied);
	}
	const char *origin = mg_get_header(conn, "Origin");
	if (strcmp(ri->request_method, "OPTIONS") == 0 && origin != NULL)
		return cors_preflight(conn, origin);
	/* Before the body is read: a caller without a valid token costs little. */
	struct auth_result ar;
	auth_check(mg_get_header(conn, "Authorization"), ri->query_string, &ar);
	if (ar.status != 0) {
		log_info("%s /mcp from %s refused: %d %s", ri->request_method, ri->remote_addr,
			 ar.status, ar.why);
		return send_auth_refusal(conn, &ar, origin);
	}
	rq.identity = ar.identity;
	/* Calls and streams may take long: keep threads for everyone else. */
	if (atomic_fetch_add(&busy, 1) >= max_busy) {
		atomic_fetch_sub(&busy, 1);
		log_warnx("%s /mcp from %s refused: %d requests are in progress (http.threads)",
			  ri->request_method, ri->remote_addr, max_busy);
		return send_http_error_close(conn, 503, "the server is busy; retry later");
	}
	rq.protocol_version = mg_get_header(conn, "MCP-Protocol-Version");
	rq.mcp_method = mg_get_header(conn, "Mcp-Method");
	rq.mcp_name = mg_get_header(conn, "Mcp-Name");
	rq.mcp_param_session = mg_get_header(conn, "Mcp-Param-Session");
	/* 2026-07-28 has no sessions: an id sent there is ignored, never echoed. */
	if (!mcp_header_modern(rq.protocol_version))
		rq.session_id = mg_get_header(conn, "Mcp-Session-Id");
	const char *accept = mg_get_header(conn, "Accept");
	rq.accepts_sse = accept && strstr(accept, "text/event-stream") != NULL;
	struct http_io io = {.conn = conn, .session_id = rq.session_id, .origin = origin,
			     .accepts_sse = rq.accepts_sse};
	rq.send_event = sse_send_event;
	rq.client_gone = http_client_gone;
	rq.client_fd = http_client_fd;
	rq.io = &io;
	if (strcmp(ri->request_method, "POST") == 0) {
		if ((body = read_body(conn, &lim, &rq.body_len)) == NULL) {
			atomic_fetch_sub(&busy, 1);
			return 413;
		}
		rq.body = body;
	}
	mcp_handle(&rq, &rs);
	if (rs.close)
		mg_disable_connection_keep_alive(conn);
	if (rs.open_stream) {
		/* A stream's connection is not reused: its thread goes back. */
		mg_disable_connection_keep_alive(conn);
		serve_session_stream(&io, rq.session_id, rs.stream);
		sse_end(&io);
	} else if (io.sse_started) {
		if (rs.body)
			sse_send_event(&io, rs.body); /* the answer ends the stream it began */
		sse_end(&io);
	} else if (io.json_started) {
		if (rs.body)
			mg_send_chunk(conn, rs.body, (unsigned)strlen(rs.body));
		mg_send_chunk(conn, "", 0);
	} else {
		send_response(conn, rs.status, "application/json", rs.body, rs.session_id,
			      rs.allow, origin);
	}
	atomic_fetch_sub(&busy, 1);
	/* One line per request; never the code or a token. */
	char timings[80] = "";
	if (rs.timed)
		snprintf(timings, sizeof(timings), " (queued %.1f, kernel %.1f ms)", rs.queued_ms,
			 rs.kernel_ms);
	log_info("%s %s session %.8s: %d%s%s in %.1f ms%s", ri->request_method,
		 rs.what[0] ? rs.what : "/mcp",
		 rs.session_id[0] ? rs.session_id : (rq.session_id ? rq.session_id : "-"),
		 rs.status, rs.outcome[0] ? " " : "", rs.outcome, now_ms() - start, timings);
	size_t answered = rs.body ? strlen(rs.body) : 0;
	mcp_response_free(&rs);
	free(body);
	/* The result, its JSON and the answer were freed by now; a big one
	 * would stay resident in this thread's arena (memtrim.h). */
	memtrim_after(answered + rq.body_len);
	return rs.status;
}

/*
 * GET /.well-known/oauth-protected-resource (and its /mcp-suffixed form):
 * the RFC 9728 document while auth is on, 404 while it is off.
 */
static int
metadata_handler(struct mg_connection *conn, void *unused)
{
	const struct mg_request_info *ri = mg_get_request_info(conn);
	char denied[64];

	config_read_lock();
	int refused = check_origin_and_host(conn, cfg->listen_host, denied, sizeof(denied));
	config_read_unlock();
	if (refused)
		return send_http_error(conn, 403, denied);
	char *doc = auth_metadata_json();
	if (doc == NULL)
		return send_http_error(conn, 404,
				       auth_enabled() ? "no OAuth here: auth.mode tokens takes a "
							"bearer token from the operator"
						      : "authentication is off (auth.mode none)");
	if (strcmp(ri->request_method, "GET") != 0 && strcmp(ri->request_method, "HEAD") != 0) {
		free(doc);
		send_response(conn, 405, "application/json", NULL, NULL, "GET, HEAD", NULL);
		return 405;
	}
	send_response(conn, 200, "application/json", doc, NULL, NULL,
		      mg_get_header(conn, "Origin"));
	free(doc);
	return 200;
}

/* Whether kernels are confined by Landlock, and at which ABI (kernel_landlock). */
static struct json_object *
landlock_json(int abi)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "enabled", json_object_new_boolean(abi > 0));
	if (abi > 0)
		json_object_object_add(o, "abi", json_object_new_int(abi));
	return o;
}

/*
 * /health takes no lock: it must answer while anything else is slow, and
 * says "degraded" (503, with the reason) while the daemon cannot start
 * kernels or serve its control socket.
 */
static int
health_handler(struct mg_connection *conn, void *unused)
{
	char why[512];
	int ready = pool_ready();
	int degraded = health_degraded(why, sizeof(why));
	struct json_object *o = json_object_new_object();

	/* A sidecar that is down fails the calls that need it: say which. */
	if (!degraded)
		degraded = sidecar_view_down(why, sizeof(why));

	int drain = health_draining();
	json_object_object_add(o, "status", json_object_new_string(degraded ? "degraded"
								    : drain  ? "draining"
								    : ready  ? "ok"
									     : "starting"));
	if (degraded)
		json_object_object_add(o, "reason", json_object_new_string(why));
	json_object_object_add(o, "name", json_object_new_string(cfg->name));
	json_object_object_add(o, "sessions", json_object_new_int(session_count()));
	json_object_object_add(o, "idle_kernels", json_object_new_int(pool_idle_count()));
	json_object_object_add(o, "landlock", landlock_json(cfg->landlock_abi));
	if (cfg->sidecars.n > 0)
		json_object_object_add(o, "sidecars", sidecar_view_json());
	start_failure_add(o);
	/* Draining: a load balancer sends it no new session (contrib/haproxy). */
	int status = ready && !degraded && !drain ? 200 : 503;
	send_response(conn, status, "application/json",
		      json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							    JSON_C_TO_STRING_NOSLASHESCAPE),
		      NULL, NULL, NULL);
	json_object_put(o);
	return status;
}

/*
 * /metrics, in the Prometheus text format: lock-free like /health (the
 * counters are atomics), and behind the same Origin and Host checks as
 * /mcp, so that a page in a browser cannot read it by DNS rebinding.
 * `listener` is the host it listens on (the listen or metrics_listen one).
 */
static int
metrics_handler(struct mg_connection *conn, void *listener)
{
	const struct mg_request_info *ri = mg_get_request_info(conn);
	char denied[64];

	if (strcmp(ri->request_method, "GET") != 0) {
		send_response(conn, 405, "text/plain", "GET /metrics\n", NULL, "GET", NULL);
		return 405;
	}
	/* allowed_origins is swapped by reload under config_lock: a leaf here. */
	config_read_lock();
	int refused = check_origin_and_host(conn, listener, denied, sizeof(denied));
	config_read_unlock();
	if (refused) {
		log_info("GET /metrics from %s refused: %s", ri->remote_addr, denied);
		return send_http_error(conn, 403, denied);
	}
	/* Read unlocked, as /health reads them; the ints of the configuration
	 * too (as pool_ready does): any recent value will do. */
	struct metrics_gauges g = {.sessions = session_count(), .busy = session_busy_count(),
				   .idle = pool_idle_count(), .starting = pool_starting_count(),
				   .queued = pool_queue_length(),
				   .warm = cfg->pool_warm, .max_sessions = cfg->pool_max_sessions,
				   .sidecars = sidecar_view_json()};
	char *text = metrics_render(&g);
	json_object_put(g.sidecars);
	send_response(conn, 200, "text/plain; version=0.0.4; charset=utf-8", text, NULL, NULL,
		      NULL);
	free(text);
	return 200;
}

/* Nonzero if `v` is a Content-Length: digits only, and not absurdly many. */
static int
content_length_valid(const char *v)
{
	size_t n = strspn(v, "0123456789");
	return n > 0 && n <= 18 && v[n] == '\0';
}

/*
 * 0 if the request's framing is unambiguous, else -1 with why in
 * why[why_len]. A proxy in front may read such a request differently from
 * civetweb (which takes Transfer-Encoding over Content-Length and the first
 * of two headers), so something could be smuggled past it.
 */
static int
framing_problem(const struct mg_request_info *ri, char *why, size_t why_len)
{
	const char *length = NULL;
	int hosts = 0, lengths = 0, encodings = 0;

	for (int i = 0; i < ri->num_headers; i++) {
		const char *name = ri->http_headers[i].name;
		const char *value = ri->http_headers[i].value;
		if (strcasecmp(name, "Host") == 0) {
			hosts++;
		} else if (strcasecmp(name, "Content-Length") == 0) {
			if (!content_length_valid(value))
				return err_set(why, why_len, "Content-Length is not a number");
			if (length && strcmp(length, value) != 0)
				return err_set(why, why_len,
					       "two different Content-Length headers");
			length = value;
			lengths++;
		} else if (strcasecmp(name, "Transfer-Encoding") == 0) {
			encodings++;
		}
	}
	if (lengths && encodings)
		return err_set(why, why_len, "both Content-Length and Transfer-Encoding");
	if (encodings > 1)
		return err_set(why, why_len, "more than one Transfer-Encoding header");
	if (encodings && strcmp(ri->http_version, "1.1") != 0)
		return err_set(why, why_len, "Transfer-Encoding in an HTTP/1.0 request");
	if (hosts > 1)
		return err_set(why, why_len, "more than one Host header");
	if (hosts == 0 && strcmp(ri->http_version, "1.1") == 0)
		return err_set(why, why_len, "an HTTP/1.1 request without Host");
	return 0;
}

/* Before any handler: requests of ambiguous framing end here. */
static int
begin_request(struct mg_connection *conn)
{
	const struct mg_request_info *ri = mg_get_request_info(conn);
	char why[64]; /* a fixed complaint of framing_problem */

	front_test_hook(mg_get_header(conn, "X-Codeexecd-Test"));
	if (framing_problem(ri, why, sizeof(why)) == -1) {
		log_info("%s %.100s from %s refused: %s", ri->request_method,
			 ri->local_uri ? ri->local_uri : "-", ri->remote_addr, why);
		return send_http_error_close(conn, 400, why);
	}
	return 0;
}

/* Every response, ours or civetweb's own (a 404), counts by its status. */
static void
end_request(const struct mg_connection *conn, int status)
{
	metrics_http_status(status);
}

static int
log_civetweb(const struct mg_connection *conn, const char *message)
{
	log_warnx("http: %s", message);
	return 1;
}

/* The thread count: http.threads, or enough for every session's streams and calls. */
static int
thread_count(const struct config *c)
{
	long n = c->http_threads;

	if (n == 0) {
		n = (long)c->pool_max_sessions *
			    (c->http_max_streams_per_session + c->http_max_calls_per_session) +
		    HTTP_SPARE_THREADS;
		if (n > 4096)
			n = 4096;
	}
	return (int)n;
}

/*
 * mg_start with small thread stacks: civetweb creates its threads from
 * default attributes unless built with USE_STACK_SIZE, so set the process
 * default around it. Returns the context, or NULL.
 */
static struct mg_context *
start_with_small_stacks(const struct mg_callbacks *cb, const char **options)
{
	pthread_attr_t old, small;
	int saved = pthread_getattr_default_np(&old) == 0;

	pthread_attr_init(&small);
	if (pthread_attr_setstacksize(&small, HTTP_STACK_BYTES) != 0 ||
	    pthread_setattr_default_np(&small) != 0)
		log_warnx("http: cannot set a %d KiB thread stack; using the default",
			  HTTP_STACK_BYTES / 1024);
	pthread_attr_destroy(&small);
	struct mg_context *started = mg_start(cb, NULL, options);
	if (saved) {
		pthread_setattr_default_np(&old);
		pthread_attr_destroy(&old);
	}
	return started;
}

/* HOST:PORT (IPv6 in brackets) of a listener, for civetweb. */
static void
listen_spec(char *out, size_t len, const char *host, int port)
{
	snprintf(out, len, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
}

/*
 * metrics_listen: a civetweb context of its own serving only /metrics, so
 * that a scraper never takes a thread /mcp needs, nor the reverse. Two
 * threads: scrapes are short and few. 0, or -1 with why[why_len].
 */
static int
metrics_start(const struct config *c, char *why, size_t why_len)
{
	struct mg_callbacks cb = {.log_message = log_civetweb,
				  .begin_request = begin_request,
				  .end_request = end_request};
	struct mg_server_port ports[2];
	char listen[300], header_timeout[16];

	listen_spec(listen, sizeof(listen), c->metrics_listen_host, c->metrics_listen_port);
	snprintf(header_timeout, sizeof(header_timeout), "%d", c->http_header_timeout_s * 1000);
	const char *options[] = {
		"listening_ports", listen,
		"num_threads", "2",
		"enable_keep_alive", "yes",
		"request_timeout_ms", header_timeout,
		"tcp_nodelay", "1",
		"access_control_allow_origin", "",
		"access_control_allow_methods", "",
		"access_control_allow_headers", "",
		NULL,
	};
	metrics_ctx = start_with_small_stacks(&cb, options);
	if (metrics_ctx == NULL) {
		char probe[ERR_LEN];
		/* The same words as main.c's check before the fork. */
		if (listen_probe(c->metrics_listen_host, c->metrics_listen_port, 0, probe,
				 sizeof(probe)) == 0)
			snprintf(probe, sizeof(probe), "cannot listen on %s", listen);
		return err_set(why, why_len, "metrics_listen: %s", probe);
	}
	mg_set_request_handler(metrics_ctx, "/metrics$", metrics_handler,
			       c->metrics_listen_host);
	int n = mg_get_server_ports(metrics_ctx, 2, ports);
	log_info("metrics: listening on %s:%d (/metrics)", c->metrics_listen_host,
		 n > 0 ? ports[0].port : c->metrics_listen_port);
	return 0;
}

int
http_start(const struct config *c, char *why, size_t why_len)
{
	struct mg_callbacks cb = {.log_message = log_civetweb,
				  .begin_request = begin_request,
				  .end_request = end_request,
				  .init_connection = http_conn_open,
				  .connection_close = http_conn_close};
	struct mg_server_port ports[4];
	char listen[300], threads[16], keep_alive[16], header_timeout[16];
	int v6 = strchr(c->listen_host, ':') != NULL;
	int nthreads = thread_count(c);
	int per_client = c->http_max_connections_per_client;

	cfg = c;
	if (per_client == 0)
		per_client = nthreads / 2 > 1 ? nthreads / 2 : 1;
	max_busy = nthreads > 2 * HTTP_RESERVED_THREADS ? nthreads - HTTP_RESERVED_THREADS
							: nthreads / 2 + 1;
	http_conn_init(nthreads, per_client);
	listen_spec(listen, sizeof(listen), c->listen_host, c->listen_port);
	snprintf(threads, sizeof(threads), "%d", nthreads);
	snprintf(keep_alive, sizeof(keep_alive), "%d", c->http_keep_alive_s * 1000);
	snprintf(header_timeout, sizeof(header_timeout), "%d", c->http_header_timeout_s * 1000);
	const char *options[] = {
		"listening_ports", listen,
		"num_threads", threads,
		/* Accepted connections waiting for a thread. */
		"connection_queue", threads,
		"enable_keep_alive", "yes",
		"keep_alive_timeout_ms", keep_alive,
		/*
		 * civetweb applies it to reading a first request's headers, to
		 * each read of a body and to each write that makes no progress;
		 * never to the time a handler takes, so long calls are not cut.
		 */
		"request_timeout_ms", header_timeout,
		/* civetweb writes headers and body separately: without this, Nagle
		 * holds each answer's tail ~40 ms for the client's delayed ACK. */
		"tcp_nodelay", "1",
		/* No CORS of civetweb's own: its default answers any origin "*". */
		"access_control_allow_origin", "",
		"access_control_allow_methods", "",
		"access_control_allow_headers", "",
		NULL,
	};
	if (c->metrics_listen_host && strchr(c->metrics_listen_host, ':'))
		v6 = 1;
	mg_init_library(v6 ? MG_FEATURES_IPV6 : 0);
	ctx = start_with_small_stacks(&cb, options);
	if (ctx == NULL) {
		/* The same words as main.c's check before the fork. */
		if (listen_probe(c->listen_host, c->listen_port, 0, why, why_len) == 0)
			snprintf(why, why_len, "cannot listen on %s", listen);
		return -1;
	}
	mg_set_request_handler(ctx, "/mcp$", mcp_handler, NULL);
	mg_set_request_handler(ctx, "/health$", health_handler, NULL);
	mg_set_request_handler(ctx, AUTH_METADATA_PATH "$", metadata_handler, NULL);
	mg_set_request_handler(ctx, AUTH_METADATA_PATH "/mcp$", metadata_handler, NULL);
	if (c->metrics_listen_host == NULL)
		mg_set_request_handler(ctx, "/metrics$", metrics_handler, c->listen_host);
	else if (metrics_start(c, why, why_len) == -1)
		return -1;
	log_info("http: %d threads, %d connections per client address, keep-alive %d s, "
		 "headers within %d s", nthreads, per_client, c->http_keep_alive_s,
		 c->http_header_timeout_s);
	int n = mg_get_server_ports(ctx, 4, ports);
	int port = n > 0 ? ports[0].port : c->listen_port;
	/* Before the first request: /mcp refuses what auth_check refuses. */
	if (auth_init(c, port, why, why_len) == -1)
		return -1;
	auth_prefetch();
	http_conn_listening(port);
	return port;
}

void
http_drain(void)
{
	draining = 1;
}

void
http_stop(void)
{
	if (metrics_ctx) {
		mg_stop(metrics_ctx);
		metrics_ctx = NULL;
	}
	if (ctx) {
		mg_stop(ctx);
		ctx = NULL;
	}
	mg_exit_library();
	auth_shutdown();
}
