/* http.c - see http.h. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "authority.h"
#include "config.h"
#include "health.h"
#include "http.h"
#include "log.h"
#include "mcp.h"
#include "pool.h"
#include "reload.h"
#include "session.h"
#include "xmalloc.h"

/* Handler threads: each running execution holds one. */
#define HTTP_THREADS "64"

static struct mg_context *ctx;
static atomic_int draining;
static const struct config *cfg;

/* Nonzero if origin `o` is listed in allowed_origins. */
static int
origin_listed(const struct origin *o)
{
	struct origin allowed;

	for (size_t i = 0; i < cfg->allowed_origins.n; i++)
		if (origin_parse(cfg->allowed_origins.v[i], &allowed, NULL) == 0 &&
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
		if (origin_parse(cfg->allowed_origins.v[i], &allowed, NULL) == 0 &&
		    origin_serves(&allowed, a))
			return 1;
	return 0;
}

/*
 * The defence against DNS rebinding: a browser page may only reach us from
 * a loopback or listed origin, and on a loopback listener only under a
 * loopback or listed Host. Both headers go through the one strict parser
 * (authority.h): what it cannot read is refused, never guessed at.
 * Returns NULL if allowed, else why not.
 */
static const char *
check_origin_and_host(struct mg_connection *conn)
{
	const char *origin = mg_get_header(conn, "Origin");
	const char *host_hdr = mg_get_header(conn, "Host");
	struct origin o;
	struct authority a;

	if (origin && (origin_parse(origin, &o, NULL) == -1 ||
		       (!authority_is_loopback(&o.auth) && !origin_listed(&o))))
		return "Origin not allowed";
	if (host_hdr && authority_host_is_loopback(cfg->listen_host) &&
	    (authority_parse(host_hdr, &a, NULL) == -1 ||
	     (!authority_is_loopback(&a) && !authority_listed(&a))))
		return "Host not allowed";
	return NULL;
}

/* Send a complete response. */
static void
send_response(struct mg_connection *conn, int status, const char *type, const char *body,
	      const char *session_id, const char *allow)
{
	char len[32];
	size_t n = body ? strlen(body) : 0;

	snprintf(len, sizeof(len), "%zu", n);
	mg_response_header_start(conn, status);
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
	send_response(conn, status, "application/json", body, NULL, NULL);
	return status;
}

/*
 * Read the request body, refusing (with 413) one larger than `max` bytes
 * before reading it. Returns the body (caller frees) or
 * NULL after answering.
 */
static char *
read_body(struct mg_connection *conn, size_t max, size_t *len)
{
	const struct mg_request_info *ri = mg_get_request_info(conn);
	size_t cap = ri->content_length >= 0 ? (size_t)ri->content_length : 65536;
	size_t used = 0;

	if (ri->content_length > (long long)max) {
		send_http_error(conn, 413, "request body exceeds max_request_bytes");
		return NULL;
	}
	char *body = xmalloc(cap + 1);
	for (;;) {
		if (used == cap) {
			if (cap >= max + 1)
				break;
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			body = xreallocarray(body, cap + 1, 1);
		}
		int n = mg_read(conn, body + used, cap - used);
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	if (used > max) {
		free(body);
		send_http_error(conn, 413, "request body exceeds max_request_bytes");
		return NULL;
	}
	body[used] = '\0';
	*len = used;
	return body;
}

/* One request's side of streaming: whether its SSE response has begun. */
struct http_io {
	struct mg_connection *conn;
	int sse_started;
	int fd;			/* the client's socket, once looked up; -1 unknown */
	const char *session_id; /* to send as Mcp-Session-Id, or NULL */
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
	mg_response_header_send(io->conn);
	io->sse_started = 1;
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
 * The socket of this connection. civetweb does not expose it, so find the
 * descriptor whose peer is this request's client.
 */
static int
conn_socket(const struct mg_request_info *ri)
{
	struct sockaddr_storage peer;
	char host[INET6_ADDRSTRLEN];

	for (int fd = 3; fd < 65536; fd++) {
		socklen_t len = sizeof(peer);
		if (getpeername(fd, (struct sockaddr *)&peer, &len) == -1) {
			if (errno == EBADF && fd > 1024)
				break;
			continue;
		}
		int port;
		if (peer.ss_family == AF_INET) {
			struct sockaddr_in *in = (struct sockaddr_in *)&peer;
			inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
			port = ntohs(in->sin_port);
		} else if (peer.ss_family == AF_INET6) {
			struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&peer;
			inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
			port = ntohs(in6->sin6_port);
		} else {
			continue;
		}
		if (port == ri->remote_port && strcmp(host, ri->remote_addr) == 0)
			return fd;
	}
	return -1;
}

/* Nonzero once the client closed its side (it sends nothing while it waits). */
static int
http_client_gone(void *arg)
{
	struct http_io *io = arg;
	if (io->fd == -1)
		io->fd = conn_socket(mg_get_request_info(io->conn));
	if (io->fd < 0)
		return 0;
	struct pollfd p = {.fd = io->fd, .events = POLLRDHUP};
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* GET /mcp: keep the session's stream open until it, the client or we end. */
static void
serve_session_stream(struct http_io *io, const char *session_id)
{
	sse_begin(io);
	for (int tick = 0; !draining && mcp_session_alive(session_id); tick++) {
		if (http_client_gone(io))
			return;
		/* A comment line every 15 s keeps proxies from closing the stream. */
		if (tick % 15 == 14 && sse_write(io, ": keepalive\n\n", 14) == -1)
			return;
		sleep(1);
	}
}

static double
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int
mcp_handler(struct mg_connection *conn, void *unused)
{
	const struct mg_request_info *ri = mg_get_request_info(conn);
	struct mcp_request rq = {.method = ri->request_method};
	struct mcp_response rs;
	char *body = NULL;
	const char *denied;
	double start = now_ms();

	if (draining)
		return send_http_error(conn, 503, "the server is shutting down");
	/* Reload swaps allowed_origins under config_lock. */
	config_read_lock();
	denied = check_origin_and_host(conn);
	size_t max_body = (size_t)cfg->max_request_bytes;
	config_read_unlock();
	if (denied != NULL) {
		log_info("%s /mcp from %s refused: %s", ri->request_method, ri->remote_addr, denied);
		return send_http_error(conn, 403, denied);
	}
	rq.session_id = mg_get_header(conn, "Mcp-Session-Id");
	rq.protocol_version = mg_get_header(conn, "MCP-Protocol-Version");
	const char *accept = mg_get_header(conn, "Accept");
	rq.accepts_sse = accept && strstr(accept, "text/event-stream") != NULL;
	struct http_io io = {.conn = conn, .fd = -1, .session_id = rq.session_id};
	rq.send_event = sse_send_event;
	rq.client_gone = http_client_gone;
	rq.io = &io;
	if (strcmp(ri->request_method, "POST") == 0) {
		if ((body = read_body(conn, max_body, &rq.body_len)) == NULL)
			return 413;
		rq.body = body;
	}
	mcp_handle(&rq, &rs);
	if (rs.open_stream) {
		serve_session_stream(&io, rq.session_id);
		sse_end(&io);
	} else if (io.sse_started) {
		if (rs.body)
			sse_send_event(&io, rs.body); /* the answer ends the stream it began */
		sse_end(&io);
	} else {
		send_response(conn, rs.status, "application/json", rs.body, rs.session_id,
			      rs.allow);
	}
	/* One line per request; never the code or a token. */
	log_info("%s %s session %.8s: %d%s%s in %.1f ms", ri->request_method,
		 rs.what[0] ? rs.what : "/mcp",
		 rs.session_id[0] ? rs.session_id : (rq.session_id ? rq.session_id : "-"),
		 rs.status, rs.outcome[0] ? " " : "", rs.outcome, now_ms() - start);
	mcp_response_free(&rs);
	free(body);
	return rs.status;
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

	json_object_object_add(o, "status", json_object_new_string(degraded ? "degraded"
								    : ready  ? "ok"
									     : "starting"));
	if (degraded)
		json_object_object_add(o, "reason", json_object_new_string(why));
	json_object_object_add(o, "name", json_object_new_string(cfg->name));
	json_object_object_add(o, "sessions", json_object_new_int(session_count()));
	json_object_object_add(o, "idle_kernels", json_object_new_int(pool_idle_count()));
	int status = ready && !degraded ? 200 : 503;
	send_response(conn, status, "application/json",
		      json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							    JSON_C_TO_STRING_NOSLASHESCAPE),
		      NULL, NULL);
	json_object_put(o);
	return status;
}

static int
log_civetweb(const struct mg_connection *conn, const char *message)
{
	log_warnx("http: %s", message);
	return 1;
}

int
http_start(const struct config *c, char *err, size_t errlen)
{
	struct mg_callbacks cb = {.log_message = log_civetweb};
	struct mg_server_port ports[4];
	char listen[300];
	int v6 = strchr(c->listen_host, ':') != NULL;

	cfg = c;
	snprintf(listen, sizeof(listen), v6 ? "[%s]:%d" : "%s:%d", c->listen_host,
		 c->listen_port);
	const char *options[] = {
		"listening_ports", listen,
		"num_threads", HTTP_THREADS,
		"enable_keep_alive", "yes",
		/* civetweb writes headers and body separately: without this, Nagle
		 * holds each answer's tail ~40 ms for the client's delayed ACK. */
		"tcp_nodelay", "1",
		"request_timeout_ms", "60000",
		NULL,
	};
	mg_init_library(v6 ? MG_FEATURES_IPV6 : 0);
	ctx = mg_start(&cb, NULL, options);
	if (ctx == NULL) {
		snprintf(err, errlen, "cannot listen on %s (in use, or not a local address?)",
			 listen);
		return -1;
	}
	mg_set_request_handler(ctx, "/mcp$", mcp_handler, NULL);
	mg_set_request_handler(ctx, "/health$", health_handler, NULL);
	int n = mg_get_server_ports(ctx, 4, ports);
	return n > 0 ? ports[0].port : c->listen_port;
}

void
http_drain(void)
{
	draining = 1;
}

void
http_stop(void)
{
	if (ctx) {
		mg_stop(ctx);
		ctx = NULL;
	}
	mg_exit_library();
}
