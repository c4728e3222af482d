/*
 * fuzz_mcp.c - the JSON-RPC request handler (mcp_handle) on arbitrary
 * requests, without a pool: mcp_stubs.c stands in for sessions, jobs and
 * the tools that run code.
 *
 * An input is a request as HTTP would hand it over:
 *
 *	METHOD\n
 *	Name: value\n		(any number of header lines)
 *	\n
 *	body
 *
 * An input that does not start with an upper-case word and a newline is
 * all body, POSTed in the stub session with the usual headers. Besides
 * crashes it checks that every answer is strict JSON-RPC, that session
 * references balance, and that log_escape leaves no line break.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "authority.h"
#include "config.h"
#include "fuzz.h"
#include "json_strict.h"
#include "log.h"
#include "mcp.h"
#include "mcp_stubs.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_mcp: %s failed\n", #cond);                           \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static struct config cfg;

/* Every answer is one strict JSON-RPC 2.0 message: a result or an error. */
static void
check_message(const char *json)
{
	struct json_strict js;

	CHECK(json_strict_check(json, strlen(json), 64, &js) == 0);
	struct json_object *o = json_tokener_parse(json);
	struct json_object *v;
	CHECK(json_object_is_type(o, json_type_object));
	CHECK(json_object_object_get_ex(o, "jsonrpc", &v) &&
	      strcmp(json_object_get_string(v), "2.0") == 0);
	if (json_object_object_get_ex(o, "error", &v)) {
		struct json_object *code;
		CHECK(json_object_object_get_ex(v, "code", &code) &&
		      json_object_is_type(code, json_type_int));
		CHECK(!json_object_object_get_ex(o, "result", NULL));
	} else {
		CHECK(json_object_object_get_ex(o, "result", NULL) ||
		      json_object_object_get_ex(o, "method", NULL));
	}
	json_object_put(o);
}

static int
send_event(void *io, const char *json)
{
	check_message(json);
	return *(int *)io; /* -1 plays a client that has gone */
}

static int
client_gone(void *io)
{
	return *(int *)io != 0;
}

static void
log_nowhere(int priority, const char *line)
{
}

/* Split `text` into the request's method, headers and body (all pointing into text). */
static void
split_request(char *text, size_t size, struct mcp_request *rq)
{
	size_t word = strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");

	rq->method = "POST";
	rq->session_id = STUB_SESSION_ID;
	rq->protocol_version = "2025-11-25";
	rq->accepts_sse = 1;
	rq->body = text;
	rq->body_len = size;
	if (word == 0 || text[word] != '\n')
		return;
	text[word] = '\0';
	rq->method = text;
	rq->session_id = rq->protocol_version = NULL;
	rq->accepts_sse = 0;
	char *line = text + word + 1;
	while (line < text + size) {
		char *end = memchr(line, '\n', (size_t)(text + size - line));
		if (end == NULL)
			end = text + size;
		*end = '\0';
		if (line == end) {
			line = end + 1;
			break;
		}
		char *colon = strchr(line, ':');
		if (colon) {
			*colon = '\0';
			char *value = colon + 1 + strspn(colon + 1, " ");
			if (strcasecmp(line, "Mcp-Session-Id") == 0)
				rq->session_id = value;
			else if (strcasecmp(line, "MCP-Protocol-Version") == 0)
				rq->protocol_version = value;
			else if (strcasecmp(line, "Mcp-Method") == 0)
				rq->mcp_method = value;
			else if (strcasecmp(line, "Mcp-Name") == 0)
				rq->mcp_name = value;
			else if (strcasecmp(line, "Accept") == 0)
				rq->accepts_sse = strstr(value, "text/event-stream") != NULL;
			else if (strcasecmp(line, "Origin") == 0) {
				struct origin o;
				origin_parse(value, &o, NULL, 0);
			} else if (strcasecmp(line, "Host") == 0) {
				struct authority a;
				authority_parse(value, &a, NULL, 0);
			}
		}
		line = end + 1;
	}
	if (line > text + size)
		line = text + size;
	rq->body = line;
	rq->body_len = (size_t)(text + size - line);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct mcp_request rq;
	struct mcp_response rs;
	int gone = size > 0 && data[size - 1] == '!' ? -1 : 0;

	if (!ready) {
		cfg.name = "py";
		cfg.server_description = "fuzz";
		cfg.default_timeout = 30;
		cfg.max_timeout = 120;
		cfg.pool_max_sessions = 10;
		mcp_init(&cfg);
		log_set_sink(log_nowhere);
		ready = 1;
	}
	char *text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	/* The one escaping function: nothing it returns can end a log line. */
	char escaped[512];
	log_escape(text, escaped, sizeof(escaped));
	CHECK(strpbrk(escaped, "\n\r") == NULL);

	memset(&rq, 0, sizeof(rq));
	split_request(text, size, &rq);
	rq.send_event = send_event;
	rq.client_gone = client_gone;
	rq.io = &gone;
	mcp_handle(&rq, &rs);
	/* 413 and the rest belong to http.c: mcp.c answers only these. */
	CHECK(rs.status == 200 || rs.status == 202 || rs.status == 204 || rs.status == 400 ||
	      rs.status == 404 || rs.status == 405 || rs.status == 406 || rs.status == 429 ||
	      rs.status == 503);
	/* Errors, and a POST's 200, carry a JSON-RPC body; DELETE's 200 does not. */
	CHECK(rs.body != NULL || rs.status == 202 || rs.status == 204 || rs.status == 405 ||
	      (rs.status == 200 && strcmp(rq.method, "POST") != 0));
	CHECK(strnlen(rs.what, sizeof(rs.what)) < sizeof(rs.what));
	CHECK(strnlen(rs.outcome, sizeof(rs.outcome)) < sizeof(rs.outcome));
	if (rs.body)
		check_message(rs.body);
	mcp_response_free(&rs);
	stub_check_refs();
	free(text);
	return 0;
}
