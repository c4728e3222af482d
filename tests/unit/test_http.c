/*
 * test_http.c - the HTTP front (http.c, http_conn.c) on a loopback port:
 * routing (/mcp, /health, anything else), the headers it sends (Content-
 * Type, Cache-Control, Mcp-Session-Id, Allow, CORS), the Host and Origin
 * checks against DNS rebinding, the Accept header's event stream, the body
 * size limit, ambiguous framing refused, and 503 once draining. mcp.c is
 * real; fuzz/mcp_stubs.c stands in for sessions and tools, and the few
 * counters /health reads are stubbed below.
 */
#include "autoconf.h"

#include <arpa/inet.h>
#include <check.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "health.h"
#include "http.h"
#include "mcp.h"
#include "mcp_stubs.h"
#include "pool.h"
#include "reload.h"
#include "start_failure.h"

/* What /health reads, stubbed: this test runs no pool. */
static int degraded;

int
health_degraded(char *why, size_t why_len)
{
	if (degraded)
		snprintf(why, why_len, "runtime_dir is gone (stub)");
	return degraded;
}

/* Never draining here: codeexecctl drain is 104-codeexecctl's and 110-cluster's. */
int
health_draining(void)
{
	return 0;
}

void
start_failure_add(struct json_object *health)
{
}

void
config_read_lock(void)
{
}

void
config_read_unlock(void)
{
}

int
pool_ready(void)
{
	return 1;
}

int
pool_idle_count(void)
{
	return 2;
}

int
pool_starting_count(void)
{
	return 0;
}

int
pool_queue_length(void)
{
	return 0;
}

int
session_count(void)
{
	return 1;
}

int
session_busy_count(void)
{
	return 0;
}

static struct config cfg;
static int port;

/* One answer as read off the socket: status, headers and body. */
struct reply {
	int status;
	char head[4096];
	char body[8192];
};

/* Send `req` (whole, "\r\n" line ends) and read the answer until the server closes. */
static void
exchange(const char *req, struct reply *r)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	static char buf[16384];
	size_t used = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	struct timeval tv = {.tv_sec = 30};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (;;) {
		ssize_t n = read(fd, buf + used, sizeof(buf) - 1 - used);
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	buf[used] = '\0';
	memset(r, 0, sizeof(*r));
	ck_assert_msg(sscanf(buf, "HTTP/1.1 %d", &r->status) == 1, "no status line: %s", buf);
	char *end = strstr(buf, "\r\n\r\n");
	ck_assert_ptr_nonnull(end);
	snprintf(r->head, sizeof(r->head), "%.*s", (int)(end - buf), buf);
	snprintf(r->body, sizeof(r->body), "%s", end + 4);
}

/* The value of header `name` in r (case-insensitive), or NULL; static storage. */
static const char *
header(const struct reply *r, const char *name)
{
	static char value[512];
	size_t n = strlen(name);

	for (const char *l = strstr(r->head, "\r\n"); l; l = strstr(l + 2, "\r\n")) {
		if (strncasecmp(l + 2, name, n) == 0 && l[2 + n] == ':') {
			const char *v = l + 3 + n;
			v += strspn(v, " ");
			snprintf(value, sizeof(value), "%.*s", (int)strcspn(v, "\r"), v);
			return value;
		}
	}
	return NULL;
}

/* A request to /mcp with the given extra header lines and JSON body. */
static void
post(const char *extra, const char *body, struct reply *r)
{
	char req[4096];

	snprintf(req, sizeof(req),
		 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n"
		 "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
		 "Mcp-Session-Id: " STUB_SESSION_ID "\r\nContent-Length: %zu\r\n%s\r\n%s",
		 port, strlen(body), extra, body);
	exchange(req, r);
}

static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";

START_TEST(routing)
{
	struct reply r;
	char req[512];

	post("", ping, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(header(&r, "Content-Type"), "application/json");
	ck_assert_str_eq(header(&r, "Cache-Control"), "no-store");
	ck_assert_str_eq(r.body, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
	ck_assert_int_eq(atoi(header(&r, "Content-Length")), (int)strlen(r.body));

	snprintf(req, sizeof(req), "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
	exchange(req, &r);
	ck_assert_int_eq(r.status, 200);
	struct json_object *h = json_tokener_parse(r.body);
	ck_assert_ptr_nonnull(h);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(h, "status")), "ok");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(h, "name")), "py");
	ck_assert_int_eq(json_object_get_int(json_object_object_get(h, "idle_kernels")), 2);
	json_object_put(h);
	degraded = 1;
	exchange(req, &r);
	degraded = 0;
	ck_assert_int_eq(r.status, 503);
	ck_assert_ptr_nonnull(strstr(r.body, "\"status\":\"degraded\""));
	ck_assert_ptr_nonnull(strstr(r.body, "runtime_dir is gone"));

	/* Only /mcp and /health exist. */
	exchange("GET /mcp/x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", &r);
	ck_assert_int_eq(r.status, 404);
	exchange("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", &r);
	ck_assert_int_eq(r.status, 404);
}
END_TEST

START_TEST(initialize_sets_session_header)
{
	struct reply r;
	char req[1024];
	const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
			   "{\"protocolVersion\":\"2025-11-25\"}}";

	snprintf(req, sizeof(req),
		 "POST /mcp HTTP/1.1\r\nHost: localhost:%d\r\nConnection: close\r\n"
		 "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
		 port, strlen(body), body);
	exchange(req, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(header(&r, "Mcp-Session-Id"), STUB_SESSION_ID);
	ck_assert_ptr_nonnull(strstr(r.body, "\"protocolVersion\":\"2025-11-25\""));
}
END_TEST

START_TEST(methods_and_accept)
{
	struct reply r;
	char req[512];

	snprintf(req, sizeof(req), "PUT /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
		 "Content-Length: 0\r\n\r\n");
	exchange(req, &r);
	ck_assert_int_eq(r.status, 405);
	ck_assert_str_eq(header(&r, "Allow"), "GET, POST, DELETE");
	/* GET is the event stream: without Accept: text/event-stream, 406. */
	exchange("GET /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
		 "Accept: application/json\r\nMcp-Session-Id: " STUB_SESSION_ID "\r\n\r\n", &r);
	ck_assert_int_eq(r.status, 406);
	ck_assert_ptr_nonnull(strstr(r.body, "text/event-stream"));
	exchange("DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
		 "Mcp-Session-Id: " STUB_SESSION_ID "\r\n\r\n", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_null(header(&r, "Content-Type")); /* no body */
	exchange("DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", &r);
	ck_assert_int_eq(r.status, 400);
	post("", "{\"jsonrpc\":", &r);
	ck_assert_int_eq(r.status, 400);
	ck_assert_ptr_nonnull(strstr(r.body, "-32700"));
}
END_TEST

START_TEST(progress_as_event_stream)
{
	struct reply r;
	const char *body = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":"
			   "{\"name\":\"execute_py_code\",\"arguments\":{\"code\":\"x\"},"
			   "\"_meta\":{\"progressToken\":\"t\"}}}";

	post("", body, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(header(&r, "Content-Type"), "text/event-stream");
	ck_assert_str_eq(header(&r, "Transfer-Encoding"), "chunked");
	char *progress = strstr(r.body, "notifications/progress");
	char *result = strstr(r.body, "\"id\":9");
	ck_assert_ptr_nonnull(progress);
	ck_assert_ptr_nonnull(result);
	ck_assert(progress < result); /* progress first, then the answer ends the stream */
	ck_assert_ptr_nonnull(strstr(r.body, "event: message\ndata: {"));
	/* Without Accept: text/event-stream the same call answers plain JSON. */
	char req[1024];
	snprintf(req, sizeof(req),
		 "POST /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
		 "Content-Type: application/json\r\nAccept: application/json\r\n"
		 "Mcp-Session-Id: " STUB_SESSION_ID "\r\nContent-Length: %zu\r\n\r\n%s",
		 strlen(body), body);
	exchange(req, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(header(&r, "Content-Type"), "application/json");
	ck_assert_ptr_null(strstr(r.body, "notifications/progress"));
}
END_TEST

/* POST ping with Host `host` (NULL: none) and Origin `origin` (NULL: none). */
static void
from(const char *host, const char *origin, struct reply *r)
{
	char req[1024];

	snprintf(req, sizeof(req),
		 "POST /mcp HTTP/1.1\r\n%s%s%s%s%s%sConnection: close\r\n"
		 "Content-Type: application/json\r\nMcp-Session-Id: " STUB_SESSION_ID "\r\n"
		 "Content-Length: %zu\r\n\r\n%s",
		 host ? "Host: " : "", host ? host : "", host ? "\r\n" : "",
		 origin ? "Origin: " : "", origin ? origin : "", origin ? "\r\n" : "",
		 strlen(ping), ping);
	exchange(req, r);
}

START_TEST(host_checked)
{
	static const struct {
		const char *host;
		int status;
	} cases[] = {
		{"127.0.0.1", 200},	    {"localhost", 200},	  {"localhost:8000", 200},
		{"[::1]:80", 200},	    {"127.1.2.3", 200},	  {"app.example.com", 200},
		{"evil.example", 403},	    {"localhost.evil.example", 403},
		{"127.0.0.1.nip.io", 403},  {"app.example.com.evil", 403},
		{"local host", 403},	    {"", 403},
	};
	struct reply r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		from(cases[i].host, NULL, &r);
		ck_assert_msg(r.status == cases[i].status, "Host %s: %d, wanted %d", cases[i].host,
			      r.status, cases[i].status);
		if (r.status == 403)
			ck_assert_ptr_nonnull(strstr(r.body, "Host not allowed"));
	}
}
END_TEST

START_TEST(origin_checked)
{
	static const struct {
		const char *origin;
		int status;
	} cases[] = {
		{"http://localhost:3000", 200},	 {"http://127.0.0.1", 200},
		{"https://app.example.com", 200}, {"http://app.example.com", 403},
		{"https://evil.example", 403},	 {"null", 403},
		{"http://localhost.evil.example", 403}, {"https://app.example.com:444", 403},
	};
	struct reply r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		from("localhost", cases[i].origin, &r);
		ck_assert_msg(r.status == cases[i].status, "Origin %s: %d, wanted %d",
			      cases[i].origin, r.status, cases[i].status);
		if (r.status == 403) {
			ck_assert_ptr_nonnull(strstr(r.body, "Origin not allowed"));
			ck_assert_ptr_null(header(&r, "Access-Control-Allow-Origin"));
		} else {
			/* The one origin, never "*", and Vary so caches keep them apart. */
			ck_assert_str_eq(header(&r, "Access-Control-Allow-Origin"), cases[i].origin);
			ck_assert_str_eq(header(&r, "Vary"), "Origin");
			ck_assert_str_eq(header(&r, "Access-Control-Expose-Headers"),
					 "Mcp-Session-Id, WWW-Authenticate");
		}
	}
	/* Without Origin, no CORS headers at all. */
	from("localhost", NULL, &r);
	ck_assert_ptr_null(header(&r, "Access-Control-Allow-Origin"));
}
END_TEST

START_TEST(cors_preflight)
{
	struct reply r;

	exchange("OPTIONS /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
		 "Origin: https://app.example.com\r\nAccess-Control-Request-Method: POST\r\n\r\n", &r);
	ck_assert_int_eq(r.status, 204);
	ck_assert_str_eq(header(&r, "Access-Control-Allow-Origin"), "https://app.example.com");
	ck_assert_str_eq(header(&r, "Access-Control-Allow-Methods"), "GET, POST, DELETE");
	ck_assert_ptr_nonnull(strstr(header(&r, "Access-Control-Allow-Headers"), "Mcp-Session-Id"));
	exchange("OPTIONS /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
		 "Origin: https://evil.example\r\n\r\n", &r);
	ck_assert_int_eq(r.status, 403);
	/* No Origin: not a preflight, and OPTIONS is no MCP method. */
	exchange("OPTIONS /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", &r);
	ck_assert_int_eq(r.status, 405);
}
END_TEST

START_TEST(body_limit)
{
	struct reply r;
	char req[512];

	snprintf(req, sizeof(req),
		 "POST /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
		 "Content-Type: application/json\r\nContent-Length: %ld\r\n\r\n{",
		 cfg.max_request_bytes + 1);
	exchange(req, &r);
	ck_assert_int_eq(r.status, 413);
	ck_assert_ptr_nonnull(strstr(r.body, "max_request_bytes"));
	ck_assert_str_eq(header(&r, "Connection"), "close");
	/* At the limit it is read (and here refused as JSON, not for its size). */
	char *body = malloc((size_t)cfg.max_request_bytes + 1);
	memset(body, ' ', (size_t)cfg.max_request_bytes);
	body[cfg.max_request_bytes] = '\0';
	memcpy(body, ping, strlen(ping));
	post("", body, &r);
	free(body);
	ck_assert_int_eq(r.status, 200);
}
END_TEST

START_TEST(framing_refused)
{
	static const struct {
		const char *headers;
		const char *why;
	} cases[] = {
		{"Host: localhost\r\nContent-Length: 5\r\nContent-Length: 6\r\n",
		 "two different Content-Length headers"},
		{"Host: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n",
		 "both Content-Length and Transfer-Encoding"},
		{"Host: localhost\r\nContent-Length: +5\r\n", "Content-Length is not a number"},
		{"Host: localhost\r\nHost: evil.example\r\nContent-Length: 0\r\n",
		 "more than one Host header"},
		{"Content-Length: 0\r\n", "an HTTP/1.1 request without Host"},
	};
	struct reply r;
	char req[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(req, sizeof(req), "POST /mcp HTTP/1.1\r\n%sConnection: close\r\n\r\n{}}}}}",
			 cases[i].headers);
		exchange(req, &r);
		ck_assert_msg(r.status == 400, "%s: %d", cases[i].why, r.status);
		ck_assert_msg(strstr(r.body, cases[i].why) != NULL, "%s: %s", cases[i].why, r.body);
	}
}
END_TEST

START_TEST(draining)
{
	struct reply r;

	http_drain();
	post("", ping, &r);
	ck_assert_int_eq(r.status, 503);
	ck_assert_ptr_nonnull(strstr(r.body, "shutting down"));
	/* /health still answers while the daemon stops. */
	exchange("GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", &r);
	ck_assert_int_eq(r.status, 200);
}
END_TEST

static Suite *
http_suite(void)
{
	Suite *s = suite_create("http");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, routing);
	tcase_add_test(tc, initialize_sets_session_header);
	tcase_add_test(tc, methods_and_accept);
	tcase_add_test(tc, progress_as_event_stream);
	tcase_add_test(tc, host_checked);
	tcase_add_test(tc, origin_checked);
	tcase_add_test(tc, cors_preflight);
	tcase_add_test(tc, body_limit);
	tcase_add_test(tc, framing_refused);
	tcase_add_test(tc, draining); /* last: nothing after it is served */
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static char *origins[] = {"https://app.example.com"};
	char err[300];

	cfg.name = "py";
	cfg.server_description = "";
	cfg.default_timeout = 30;
	cfg.max_timeout = 120;
	cfg.pool_max_sessions = 4;
	cfg.listen_host = "127.0.0.1";
	cfg.listen_port = 0;
	cfg.allowed_origins.v = origins;
	cfg.allowed_origins.n = 1;
	cfg.max_request_bytes = 4096;
	cfg.http_threads = 8;
	cfg.http_keep_alive_s = 5;
	cfg.http_header_timeout_s = 10;
	cfg.http_max_streams_per_session = 2;
	cfg.http_max_calls_per_session = 4;
	mcp_init(&cfg);
	port = http_start(&cfg, err, sizeof(err));
	if (port <= 0) {
		fprintf(stderr, "test_http: %s\n", err);
		return EXIT_FAILURE;
	}
	/* civetweb's threads do not survive a fork: run the cases in this process. */
	SRunner *sr = srunner_create(http_suite());
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	http_stop();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
