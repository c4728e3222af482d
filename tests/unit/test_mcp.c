/*
 * test_mcp.c - every JSON-RPC path of mcp.c: parse errors, invalid
 * messages, batches, notifications and responses, initialize and version
 * negotiation, ping, logging/setLevel, tools/list, tools/call and its
 * errors, progress and cancellation, DELETE, GET streams and the methods
 * HTTP may not use. mcp.c and tools.c are real; tests/fuzz/mcp_stubs.c
 * stands in for the pool, sessions, jobs and tools (as for fuzz_mcp), and
 * checks after every request that session references balance.
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "handle.h"
#include "mcp.h"
#include "mcp_stubs.h"
#include "session.h"

extern struct session stub_sessions[2];

static struct config cfg;
/* What send_event saw, and what it and client_gone answer. */
static struct json_object *events;
static int gone;

static int
send_event(void *io, const char *json)
{
	struct json_object *o = json_tokener_parse(json);
	ck_assert_ptr_nonnull(o);
	json_object_array_add(events, o);
	return gone ? -1 : 0;
}

static int
client_gone(void *io)
{
	return gone;
}

static void
setup(void)
{
	cfg.name = "py";
	cfg.server_description = "";
	cfg.default_timeout = 30;
	cfg.max_timeout = 120;
	cfg.max_upload_bytes = 1000;
	cfg.pool_max_sessions = 10;
	cfg.http_max_calls_per_session = 4;
	cfg.http_max_streams_per_session = 2;
	mcp_init(&cfg);
	events = json_object_new_array();
	gone = 0;
}

static void
teardown(void)
{
	json_object_put(events);
}

/* One answer: its HTTP status, headers of interest, and its body parsed. */
struct answer {
	struct mcp_response rs;
	struct json_object *msg; /* NULL when there is no body */
};

static void
request(struct answer *a, const char *method, const char *body, const char *session,
	const char *version, int sse)
{
	struct mcp_request rq = {.method = method, .body = body, .body_len = body ? strlen(body) : 0,
				 .session_id = session, .protocol_version = version,
				 .accepts_sse = sse, .send_event = send_event,
				 .client_gone = client_gone};

	mcp_handle(&rq, &a->rs);
	stub_check_refs();
	a->msg = NULL;
	if (a->rs.body) {
		a->msg = json_tokener_parse(a->rs.body);
		ck_assert_msg(a->msg != NULL, "not JSON: %s", a->rs.body);
		ck_assert_str_eq(json_object_get_string(json_object_object_get(a->msg, "jsonrpc")),
				 "2.0");
	}
}

/* POST in the stub session, with the current protocol version. */
static void
post(struct answer *a, const char *body)
{
	request(a, "POST", body, STUB_SESSION_ID, "2025-11-25", 1);
}

static void
done(struct answer *a)
{
	json_object_put(a->msg);
	mcp_response_free(&a->rs);
}

/* The member at dotted `path` of the answer's message, or NULL. */
static struct json_object *
at(struct answer *a, const char *path)
{
	struct json_object *o = a->msg;
	char buf[200], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = json_object_object_get(o, k);
	return o;
}

/* Assert an error answer: HTTP status, JSON-RPC code, and text in its message. */
static void
assert_error(struct answer *a, int status, int code, const char *text)
{
	ck_assert_msg(a->rs.status == status, "status %d, wanted %d: %s", a->rs.status, status,
		      a->rs.body ? a->rs.body : "(no body)");
	ck_assert_ptr_nonnull(a->msg);
	ck_assert_int_eq(json_object_get_int(at(a, "error.code")), code);
	ck_assert_msg(strstr(json_object_get_string(at(a, "error.message")), text) != NULL,
		      "message %s lacks %s", json_object_get_string(at(a, "error.message")), text);
	ck_assert_ptr_null(at(a, "result"));
}

START_TEST(parse_errors)
{
	static const char *const bodies[] = {
		"{",	       "", "{\"jsonrpc\":\"2.0\",}", "{'jsonrpc':'2.0'}", "NaN",
		"{}garbage",   "{\"a\":\"\xff\"}",
	};
	struct answer a;

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		post(&a, bodies[i]);
		assert_error(&a, 400, -32700, "parse error");
		ck_assert(json_object_is_type(at(&a, "id"), json_type_null));
		done(&a);
	}
}
END_TEST

START_TEST(invalid_messages)
{
	static const struct {
		const char *body;
		const char *text;
		int id_echoed;
	} cases[] = {
		{"null", "not a JSON-RPC 2.0 message", 0},
		{"42", "not a JSON-RPC 2.0 message", 0},
		{"{\"id\":1,\"method\":\"ping\"}", "not a JSON-RPC 2.0 message", 0},
		{"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", "not a JSON-RPC 2.0", 0},
		{"{\"jsonrpc\":2.0,\"id\":1,\"method\":\"ping\"}", "not a JSON-RPC 2.0", 0},
		{"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", "string or an integer", 0},
		{"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", "string or an integer", 0},
		{"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":3}", "method must be a string", 1},
		{"{\"jsonrpc\":\"2.0\",\"id\":7}", "method is required", 1},
		{"{\"jsonrpc\":\"2.0\"}", "method is required", 0},
	};
	struct answer a;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		post(&a, cases[i].body);
		assert_error(&a, 400, -32600, cases[i].text);
		if (cases[i].id_echoed)
			ck_assert_int_eq(json_object_get_int(at(&a, "id")), 7);
		else
			ck_assert(json_object_is_type(at(&a, "id"), json_type_null));
		done(&a);
	}
}
END_TEST

START_TEST(batches_refused)
{
	struct answer a;

	post(&a, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
	assert_error(&a, 400, -32600, "batch requests are not supported");
	done(&a);
	post(&a, "[]");
	assert_error(&a, 400, -32600, "batch");
	done(&a);
}
END_TEST

START_TEST(nul_refused)
{
	struct answer a;

	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
		 "{\"name\":\"execute_py_code\",\"arguments\":{\"code\":\"1\\u0000rm\"}}}");
	assert_error(&a, 400, -32602, "params.arguments.code contains a NUL");
	ck_assert_int_eq(json_object_get_int(at(&a, "id")), 3);
	done(&a);
	/* An id holding the NUL is never echoed. */
	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u0000b\",\"method\":\"ping\"}");
	assert_error(&a, 400, -32602, "id contains a NUL");
	ck_assert(json_object_is_type(at(&a, "id"), json_type_null));
	done(&a);
}
END_TEST

START_TEST(notifications_and_responses)
{
	struct answer a;

	post(&a, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	ck_assert_int_eq(a.rs.status, 202);
	ck_assert_ptr_null(a.rs.body);
	done(&a);
	/* A client's answer to a server request: accepted, nothing said. */
	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
	ck_assert_int_eq(a.rs.status, 202);
	ck_assert_ptr_null(a.rs.body);
	done(&a);
	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":1,\"message\":\"x\"}}");
	ck_assert_int_eq(a.rs.status, 202);
	done(&a);
	/* Cancelling a request that runs no job changes nothing. */
	post(&a, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
		 "\"params\":{\"requestId\":9}}");
	ck_assert_int_eq(a.rs.status, 202);
	done(&a);
	post(&a, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":[]}");
	ck_assert_int_eq(a.rs.status, 202);
	done(&a);
}
END_TEST

START_TEST(session_required)
{
	struct answer a;

	request(&a, "POST", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", NULL, NULL, 0);
	assert_error(&a, 400, -32000, "Mcp-Session-Id header is required");
	ck_assert_int_eq(json_object_get_int(at(&a, "id")), 1);
	done(&a);
	request(&a, "POST", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", NULL,
		NULL, 0);
	assert_error(&a, 400, -32000, "Mcp-Session-Id");
	done(&a);
	request(&a, "POST", "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\"}",
		"00000000000000000000000000000000", NULL, 0);
	assert_error(&a, 404, -32001, "session not found");
	ck_assert_str_eq(json_object_get_string(at(&a, "id")), "x");
	done(&a);
	/* A closed session is gone. */
	stub_sessions[1].closed = 1;
	request(&a, "POST", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", STUB_OTHER_ID,
		NULL, 0);
	assert_error(&a, 404, -32001, "session not found");
	done(&a);
	stub_sessions[1].closed = 0;
}
END_TEST

START_TEST(protocol_version_header)
{
	struct answer a;

	ck_assert(mcp_version_supported("2025-11-25"));
	ck_assert(mcp_version_supported("2025-06-18"));
	ck_assert(mcp_version_supported("2025-03-26"));
	ck_assert(!mcp_version_supported("2024-11-05"));
	ck_assert(!mcp_version_supported(""));
	request(&a, "POST", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", STUB_SESSION_ID,
		"1999-01-01", 0);
	assert_error(&a, 400, -32600, "unsupported MCP-Protocol-Version");
	done(&a);
	/* Without the header the session's version holds. */
	request(&a, "POST", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", STUB_SESSION_ID,
		NULL, 0);
	ck_assert_int_eq(a.rs.status, 200);
	done(&a);
}
END_TEST

/* A 2026-07-28 POST: headers MCP-Protocol-Version, Mcp-Method and Mcp-Name. */
static void
modern(struct answer *a, const char *body, const char *version, const char *method,
       const char *name)
{
	struct mcp_request rq = {.method = "POST", .body = body, .body_len = strlen(body),
				 .protocol_version = version, .mcp_method = method,
				 .mcp_name = name, .send_event = send_event,
				 .client_gone = client_gone};

	mcp_handle(&rq, &a->rs);
	stub_check_refs();
	a->msg = a->rs.body ? json_tokener_parse(a->rs.body) : NULL;
	ck_assert_str_eq(a->rs.session_id, "");
}

#define META "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
	     "\"io.modelcontextprotocol/clientCapabilities\":{}}"
#define CALL "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{" \
	     "\"name\":\"py_list_sessions\",\"arguments\":{}," META "}}"

START_TEST(modern_headers)
{
	struct answer a;

	/* Mcp-Name: plain with whitespace around it, and the base64 sentinel. */
	modern(&a, CALL, "2026-07-28", "tools/call", "  py_list_sessions ");
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_str_eq(json_object_get_string(at(&a, "result.resultType")), "complete");
	done(&a);
	modern(&a, CALL, "2026-07-28", "tools/call", "=?base64?cHlfbGlzdF9zZXNzaW9ucw==?=");
	ck_assert_int_eq(a.rs.status, 200);
	done(&a);
	/* Bad padding, bad digits, another name, none. */
	modern(&a, CALL, "2026-07-28", "tools/call", "=?base64?cHlfbGlzdF9zZXNzaW9ucw?=");
	assert_error(&a, 400, -32020, "Mcp-Name");
	done(&a);
	modern(&a, CALL, "2026-07-28", "tools/call", "=?base64?cHlf!!!zZXNzaW9ucw==?=");
	assert_error(&a, 400, -32020, "Mcp-Name");
	done(&a);
	modern(&a, CALL, "2026-07-28", "tools/call", "execute_py_code");
	assert_error(&a, 400, -32020, "Mcp-Name");
	done(&a);
	modern(&a, CALL, "2026-07-28", "tools/call", NULL);
	assert_error(&a, 400, -32020, "Mcp-Name");
	done(&a);
	/* Values are case-sensitive. */
	modern(&a, CALL, "2026-07-28", "TOOLS/CALL", "py_list_sessions");
	assert_error(&a, 400, -32020, "Mcp-Method");
	done(&a);
	modern(&a, CALL, NULL, "tools/call", "py_list_sessions");
	assert_error(&a, 400, -32020, "MCP-Protocol-Version");
	done(&a);
	/* A long name is compared whole: it passes the headers, then is unknown. */
	char name[600], body[1000];
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(body, sizeof(body),
		 "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{"
		 "\"name\":\"%s\",\"arguments\":{}," META "}}", name);
	modern(&a, body, "2026-07-28", "tools/call", name);
	assert_error(&a, 200, -32602, "unknown tool");
	done(&a);
	name[599 - 1] = 'x';
	modern(&a, body, "2026-07-28", "tools/call", name);
	assert_error(&a, 400, -32020, "Mcp-Name");
	done(&a);
}
END_TEST

/* A 2026-07-28 tools/call of `tool` with Mcp-Name right and Mcp-Param-Session `param`. */
static void
modern_param(struct answer *a, const char *tool, const char *args, const char *param)
{
	char body[600];
	snprintf(body, sizeof(body),
		 "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{"
		 "\"name\":\"%s\",\"arguments\":%s," META "}}", tool, args);
	struct mcp_request rq = {.method = "POST", .body = body, .body_len = strlen(body),
				 .protocol_version = "2026-07-28", .mcp_method = "tools/call",
				 .mcp_name = tool, .mcp_param_session = param,
				 .send_event = send_event, .client_gone = client_gone};

	mcp_handle(&rq, &a->rs);
	stub_check_refs();
	a->msg = a->rs.body ? json_tokener_parse(a->rs.body) : NULL;
}

#define WITH_SID "{\"code\":\"1\",\"execution_session_id\":\"" STUB_SESSION_ID "\"}"

START_TEST(modern_param_session)
{
	struct answer a;

	/* Equal, with OWS, and in the base64 sentinel: the call runs. */
	modern_param(&a, "execute_py_code", WITH_SID, STUB_SESSION_ID);
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_str_eq(json_object_get_string(at(&a, "result.structuredContent.stdout")), "1");
	done(&a);
	modern_param(&a, "execute_py_code", WITH_SID, " " STUB_SESSION_ID "\t");
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_ptr_nonnull(at(&a, "result"));
	done(&a);
	modern_param(&a, "execute_py_code", WITH_SID,
		     "=?base64?MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=?=");
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_ptr_nonnull(at(&a, "result"));
	done(&a);
	/* Another session, bad base64, case differs: refused, naming the header. */
	modern_param(&a, "execute_py_code", WITH_SID, STUB_OTHER_ID);
	assert_error(&a, 400, -32020, "Mcp-Param-Session header value");
	done(&a);
	modern_param(&a, "execute_py_code", WITH_SID,
		     "=?base64?MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY?=");
	assert_error(&a, 400, -32020, "Mcp-Param-Session");
	done(&a);
	modern_param(&a, "execute_py_code", WITH_SID, "0123456789ABCDEF0123456789ABCDEF");
	assert_error(&a, 400, -32020, "Mcp-Param-Session");
	done(&a);
	/* The argument without the header. */
	modern_param(&a, "execute_py_code", WITH_SID, NULL);
	assert_error(&a, 400, -32020, "the Mcp-Param-Session header is required");
	done(&a);
	/* The header without the argument: absent, null, or a tool that takes none. */
	modern_param(&a, "execute_py_code", "{\"code\":\"1\"}", STUB_SESSION_ID);
	assert_error(&a, 400, -32020, "body has no execution_session_id");
	done(&a);
	modern_param(&a, "execute_py_code", "{\"code\":\"1\",\"execution_session_id\":null}",
		     STUB_SESSION_ID);
	assert_error(&a, 400, -32020, "Mcp-Param-Session");
	done(&a);
	modern_param(&a, "py_list_sessions", "{}", STUB_SESSION_ID);
	assert_error(&a, 400, -32020, "Mcp-Param-Session");
	done(&a);
	/* Neither: a new execution session, as before. */
	modern_param(&a, "execute_py_code", "{\"code\":\"1\"}", NULL);
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_ptr_nonnull(at(&a, "result"));
	done(&a);
	/* The session-era path does not look at it. */
	request(&a, "POST",
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"execute_py_code\",\"arguments\":{\"code\":\"1\"}}}",
		STUB_SESSION_ID, "2025-11-25", 0);
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_ptr_nonnull(at(&a, "result"));
	done(&a);
}
END_TEST

/* tasks/get, tasks/update and tasks/cancel: Mcp-Name mirrors params.taskId. */
START_TEST(modern_task_name)
{
	static const char *const methods[] = {"tasks/get", "tasks/update", "tasks/cancel"};
	struct answer a;
	char body[400];

	for (size_t i = 0; i < 3; i++) {
		snprintf(body, sizeof(body),
			 "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"%s\",\"params\":{"
			 "\"taskId\":\"t1\"," META "}}", methods[i]);
		/* Equal: it reaches the tasks (the stubs know none). */
		modern(&a, body, "2026-07-28", methods[i], "t1");
		assert_error(&a, 200, -32602, "unknown taskId");
		done(&a);
		modern(&a, body, "2026-07-28", methods[i], "=?base64?dDE=?=");
		assert_error(&a, 200, -32602, "unknown taskId");
		done(&a);
		modern(&a, body, "2026-07-28", methods[i], "t2");
		assert_error(&a, 400, -32020, "Mcp-Name");
		done(&a);
		modern(&a, body, "2026-07-28", methods[i], NULL);
		assert_error(&a, 400, -32020, "the Mcp-Name header is required");
		done(&a);
	}
}
END_TEST

/* Another node's handle is answered at once with 421, naming that node. */
START_TEST(misdirected)
{
	struct answer a;
	char body[600];

	handle_init("a");
	request(&a, "POST", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
		"b.0123456789abcdef0123456789abcdef", "2025-11-25", 0);
	assert_error(&a, 421, -32050, "node 'b'");
	ck_assert_str_eq(json_object_get_string(at(&a, "error.data.node")), "b");
	ck_assert_ptr_nonnull(strstr(json_object_get_string(at(&a, "error.message")),
				     "Mcp-Session-Id"));
	done(&a);
	request(&a, "DELETE", NULL, "b.0123456789abcdef0123456789abcdef", "2025-11-25", 0);
	ck_assert_int_eq(a.rs.status, 421);
	done(&a);
	/* An untagged unknown id stays unknown. */
	request(&a, "POST", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", "nosuch",
		"2025-11-25", 0);
	assert_error(&a, 404, -32001, "session not found");
	done(&a);
	/* Arguments, on both paths. */
	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"execute_py_code\",\"arguments\":{\"code\":\"1\",\"execution_session_id\":"
		 "\"c.1\"}}}");
	assert_error(&a, 421, -32050, "argument execution_session_id");
	done(&a);
	modern_param(&a, "execute_py_code", "{\"code\":\"1\",\"execution_session_id\":\"c.1\"}",
		     "c.1");
	assert_error(&a, 421, -32050, "node 'c'");
	done(&a);
	snprintf(body, sizeof(body),
		 "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tasks/get\",\"params\":{"
		 "\"taskId\":\"d.1\"," META "}}");
	modern(&a, body, "2026-07-28", "tasks/get", "d.1");
	assert_error(&a, 421, -32050, "params.taskId");
	done(&a);
	handle_init("");
}
END_TEST

START_TEST(modern_versions)
{
	struct answer a;
	const char *other = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{"
			    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2030-01-01\","
			    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";

	modern(&a, other, "2030-01-01", "tools/list", NULL);
	assert_error(&a, 400, -32022, "Unsupported protocol version");
	ck_assert_str_eq(json_object_to_json_string(at(&a, "error.data.supported")),
			 "[ \"2026-07-28\", \"2025-11-25\" ]");
	ck_assert_str_eq(json_object_get_string(at(&a, "error.data.requested")), "2030-01-01");
	ck_assert_int_eq(json_object_get_int(at(&a, "id")), 3);
	done(&a);
	/* The header says 2026-07-28, the body something else. */
	modern(&a, other, "2026-07-28", "tools/list", NULL);
	assert_error(&a, 400, -32020, "MCP-Protocol-Version");
	done(&a);
	/* No _meta: invalid params; an unknown method: 404. */
	modern(&a, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}", "2026-07-28",
	       "tools/list", NULL);
	assert_error(&a, 400, -32602, "_meta");
	done(&a);
	modern(&a, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{" META "}}",
	       "2026-07-28", "ping", NULL);
	assert_error(&a, 404, -32601, "Method not found");
	done(&a);
	/* The list: cacheable, stamped with serverInfo. */
	modern(&a, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\",\"params\":{" META "}}",
	       "2026-07-28", "tools/list", NULL);
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_int_eq(json_object_get_int(at(&a, "result.ttlMs")), 60000);
	ck_assert_str_eq(json_object_get_string(at(&a, "result.cacheScope")), "public");
	ck_assert_ptr_nonnull(json_object_object_get(at(&a, "result._meta"),
						     "io.modelcontextprotocol/serverInfo"));
	done(&a);
	/* GET with the 2026-07-28 header: 405. */
	struct mcp_request rq = {.method = "GET", .protocol_version = "2026-07-28"};
	mcp_handle(&rq, &a.rs);
	ck_assert_int_eq(a.rs.status, 405);
	ck_assert_str_eq(a.rs.allow, "POST");
	mcp_response_free(&a.rs);
}
END_TEST

static void
initialize(struct answer *a, const char *params)
{
	char body[400];

	snprintf(body, sizeof(body),
		 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":%s}", params);
	request(a, "POST", body, NULL, NULL, 0);
}

START_TEST(initialize_negotiates)
{
	struct answer a;

	initialize(&a, "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}}");
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_str_eq(a.rs.session_id, STUB_SESSION_ID);
	ck_assert_str_eq(json_object_get_string(at(&a, "result.protocolVersion")), "2025-06-18");
	ck_assert_str_eq(json_object_get_string(at(&a, "result.serverInfo.name")), "codeexecd");
	ck_assert_str_eq(json_object_get_string(at(&a, "result.serverInfo.version")),
			 PACKAGE_VERSION);
	ck_assert(!json_object_get_boolean(at(&a, "result.capabilities.tools.listChanged")));
	ck_assert_ptr_nonnull(at(&a, "result.capabilities.logging"));
	ck_assert_ptr_nonnull(at(&a, "result.capabilities.resources"));
	ck_assert_ptr_null(at(&a, "result.instructions")); /* server_description is empty */
	done(&a);
	/* A version this server does not speak: it offers its newest. */
	cfg.server_description = "runs Python";
	initialize(&a, "{\"protocolVersion\":\"2024-11-05\"}");
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_str_eq(json_object_get_string(at(&a, "result.protocolVersion")), "2025-11-25");
	ck_assert_str_eq(json_object_get_string(at(&a, "result.instructions")), "runs Python");
	done(&a);
}
END_TEST

START_TEST(initialize_errors)
{
	struct answer a;

	initialize(&a, "{}");
	assert_error(&a, 400, -32602, "params.protocolVersion");
	ck_assert_str_eq(a.rs.session_id, "");
	done(&a);
	initialize(&a, "{\"protocolVersion\":20250618}");
	assert_error(&a, 400, -32602, "params.protocolVersion");
	done(&a);
	initialize(&a, "[]");
	assert_error(&a, 400, -32602, "params.protocolVersion");
	done(&a);
	/* Without an id it is a notification in no session. */
	request(&a, "POST", "{\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"params\":"
		"{\"protocolVersion\":\"2025-11-25\"}}", NULL, NULL, 0);
	assert_error(&a, 400, -32000, "Mcp-Session-Id");
	done(&a);
	/* In a session it is refused: a new one starts without the header. */
	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":"
		 "{\"protocolVersion\":\"2025-11-25\"}}");
	assert_error(&a, 400, -32600, "already initialized");
	done(&a);
	/* The stubs refuse every seventh session: pool.max_sessions reached. */
	int refused = 0;
	for (int i = 0; i < 7 && !refused; i++) {
		initialize(&a, "{\"protocolVersion\":\"2025-11-25\"}");
		if (a.rs.status == 503) {
			assert_error(&a, 503, -32000, "too many sessions");
			ck_assert_str_eq(a.rs.session_id, "");
			refused = 1;
		} else {
			ck_assert_int_eq(a.rs.status, 200);
		}
		done(&a);
	}
	ck_assert(refused);
}
END_TEST

START_TEST(ping_and_unknown_methods)
{
	struct answer a;

	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}");
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_str_eq(json_object_get_string(at(&a, "id")), "p");
	ck_assert(json_object_is_type(at(&a, "result"), json_type_object));
	ck_assert_int_eq(json_object_object_length(at(&a, "result")), 0);
	ck_assert_ptr_null(at(&a, "error"));
	ck_assert_str_eq(a.rs.what, "ping");
	done(&a);
	/* resources/... are answered (resources.c); an unknown one is not. */
	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/list\"}");
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert(json_object_is_type(at(&a, "result.resources"), json_type_array));
	done(&a);
	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/list\"}");
	assert_error(&a, 200, -32601, "method not found");
	ck_assert_int_eq(json_object_get_int(at(&a, "id")), 4);
	ck_assert_str_eq(a.rs.outcome, "error -32601");
	done(&a);
	/* A notification of an unknown method is still just accepted. */
	post(&a, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}");
	ck_assert_int_eq(a.rs.status, 202);
	done(&a);
}
END_TEST

START_TEST(set_level)
{
	struct answer a;

	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\","
		 "\"params\":{\"level\":\"debug\"}}");
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_ptr_nonnull(at(&a, "result"));
	done(&a);
	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\","
		 "\"params\":{\"level\":\"loud\"}}");
	assert_error(&a, 200, -32602, "params.level must be one of");
	done(&a);
	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\"}");
	assert_error(&a, 200, -32602, "params.level");
	done(&a);
}
END_TEST

/* tools.h's, declared here: that header's tools_list is this file's test name. */
struct tool;
const struct tool *tools_find(const struct config *cfg, const char *name);

/* search_{name}_tools: listed and callable only while tools are configured. */
START_TEST(search_tool_follows_the_registry)
{
	struct tool_def one = {.name = "f"};
	struct answer a;

	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		 "\"params\":{\"name\":\"search_py_tools\",\"arguments\":{\"query\":\"x\"}}}");
	ck_assert_ptr_nonnull(at(&a, "error"));
	done(&a);
	ck_assert_ptr_null(tools_find(&cfg, "search_py_tools"));
	cfg.tools.v = &one;
	cfg.tools.n = 1;
	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	struct json_object *tools = at(&a, "result.tools");
	size_t n = json_object_array_length(tools);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(
				 json_object_array_get_idx(tools, n - 1), "name")),
			 "search_py_tools");
	done(&a);
	ck_assert_ptr_nonnull(tools_find(&cfg, "search_py_tools"));
	cfg.tools.v = NULL;
	cfg.tools.n = 0;
}
END_TEST

START_TEST(tools_list)
{
	static const char *const names[] = {
		"execute_py_code",   "py_check_job",	   "py_cancel_job",
		"py_list_sessions",  "py_inspect_session", "py_close_session",
		"py_parallel_execute", "py_check_batch",   "py_cancel_batch",
		"py_install_packages", "py_checkpoint",	   "py_restore",
		"py_fork_session",   "py_upload_file",
	};
	struct answer a;

	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	ck_assert_int_eq(a.rs.status, 200);
	struct json_object *tools = at(&a, "result.tools");
	ck_assert_uint_eq(json_object_array_length(tools), sizeof(names) / sizeof(names[0]));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct json_object *t = json_object_array_get_idx(tools, i);
		ck_assert_str_eq(json_object_get_string(json_object_object_get(t, "name")), names[i]);
		struct json_object *schema = json_object_object_get(t, "inputSchema");
		ck_assert_ptr_nonnull(schema);
		ck_assert_ptr_nonnull(json_object_object_get(t, "description"));
		/* Closed: tools_args refuses what it does not list. */
		struct json_object *more = json_object_object_get(schema, "additionalProperties");
		ck_assert(json_object_is_type(more, json_type_boolean) &&
			  !json_object_get_boolean(more));
		/* Aliases are listed, with their name's type. */
		struct json_object *props = json_object_object_get(schema, "properties");
		struct json_object *alias = json_object_object_get(props, "timeout_s");
		if (i == 0)
			ck_assert_str_eq(json_object_get_string(json_object_object_get(alias, "type")),
					 "number");
		else
			ck_assert_ptr_null(alias);
		/* The session era routes on Mcp-Session-Id: no x-mcp-header. */
		ck_assert_ptr_null(strstr(json_object_to_json_string(t), "x-mcp-header"));
	}
	done(&a);
	/* On the 2026-07-28 path the argument naming a kernel session carries one. */
	modern(&a, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\",\"params\":{" META "}}",
	       "2026-07-28", "tools/list", NULL);
	tools = at(&a, "result.tools");
	for (size_t i = 0; i < json_object_array_length(tools); i++) {
		struct json_object *t = json_object_array_get_idx(tools, i);
		struct json_object *props = json_object_object_get(
			json_object_object_get(t, "inputSchema"), "properties");
		struct json_object *h = json_object_object_get(
			json_object_object_get(props, "execution_session_id"), "x-mcp-header");
		if (i == 0)
			ck_assert_str_eq(json_object_get_string(h), "Session");
		else
			ck_assert_ptr_null(h); /* the stubs name it only in execute */
	}
	done(&a);
}
END_TEST

/* tools/call of execute_py_code with `args` (JSON text, or NULL for none). */
static void
call(struct answer *a, const char *args, const char *meta)
{
	char body[1200];

	snprintf(body, sizeof(body),
		 "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":"
		 "{\"name\":\"execute_py_code\"%s%s%s%s}}",
		 args ? ",\"arguments\":" : "", args ? args : "", meta ? ",\"_meta\":" : "",
		 meta ? meta : "");
	post(a, body);
}

START_TEST(tools_call_ok)
{
	struct answer a;

	call(&a, "{\"code\":\"print(1)\",\"timeout\":500}", NULL);
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_int_eq(json_object_get_int(at(&a, "id")), 11);
	ck_assert_str_eq(json_object_get_string(at(&a, "result.structuredContent.stdout")),
			 "print(1)");
	/* Clamped to max_timeout. */
	ck_assert_double_eq(json_object_get_double(at(&a, "result.structuredContent.timeout")),
			    120);
	ck_assert(!json_object_get_boolean(at(&a, "result.isError")));
	ck_assert_str_eq(a.rs.what, "tools/call execute_py_code");
	ck_assert_str_eq(a.rs.outcome, "ok");
	done(&a);
	/* No arguments at all: an empty object, and the default timeout. */
	call(&a, NULL, NULL);
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_double_eq(json_object_get_double(at(&a, "result.structuredContent.timeout")),
			    30);
	done(&a);
	/* Code that raised: a result, with isError. */
	call(&a, "{\"code\":\"raise\"}", NULL);
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert(json_object_get_boolean(at(&a, "result.isError")));
	ck_assert_str_eq(a.rs.outcome, "isError");
	done(&a);
	/* timeout_s stands for timeout; both, if equal (5 and 5.0 are). */
	call(&a, "{\"code\":\"1\",\"timeout_s\":5}", NULL);
	ck_assert_double_eq(json_object_get_double(at(&a, "result.structuredContent.timeout")), 5);
	done(&a);
	call(&a, "{\"code\":\"1\",\"timeout_s\":5,\"timeout\":5.0}", NULL);
	ck_assert_double_eq(json_object_get_double(at(&a, "result.structuredContent.timeout")), 5);
	done(&a);
	/* In another session of the same identity: allowed. */
	call(&a, "{\"code\":\"1\",\"execution_session_id\":\"" STUB_SESSION_ID "\"}", NULL);
	ck_assert_int_eq(a.rs.status, 200);
	done(&a);
	ck_assert_int_eq(stub_sessions[0].requests, 0);
}
END_TEST

START_TEST(tools_call_errors)
{
	struct answer a;

	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}");
	assert_error(&a, 200, -32602, "tools/call needs params.name");
	done(&a);
	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":5}}");
	assert_error(&a, 200, -32602, "tools/call needs params.name");
	done(&a);
	post(&a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		 "\"params\":{\"name\":\"execute_other_code\"}}");
	assert_error(&a, 200, -32602, "unknown tool: execute_other_code");
	ck_assert_str_eq(a.rs.what, "tools/call execute_other_code");
	done(&a);
	call(&a, "[1]", NULL);
	assert_error(&a, 200, -32602, "params.arguments must be an object");
	done(&a);
	/* A tool's own refusal reaches the client as invalid params. */
	call(&a, "{\"code\":\"1\",\"timeout\":-1}", NULL);
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_int_eq(json_object_get_int(at(&a, "error.code")), -32602);
	done(&a);
	/* Null and 0 ("unbounded" in seed 003) are refused naming max_timeout. */
	call(&a, "{\"code\":\"1\",\"timeout\":null}", NULL);
	ck_assert_int_eq(json_object_get_int(at(&a, "error.code")), -32602);
	ck_assert_ptr_nonnull(strstr(json_object_get_string(at(&a, "error.message")),
				     "max_timeout, 120 seconds"));
	done(&a);
	call(&a, "{\"code\":\"1\",\"timeout\":0}", NULL);
	ck_assert_ptr_nonnull(strstr(json_object_get_string(at(&a, "error.message")),
				     "never runs code unbounded"));
	done(&a);
	/* An argument the schema does not list: refused, named, the list given. */
	call(&a, "{\"code\":\"1\",\"timeout_ms\":5}", NULL);
	assert_error(&a, 200, -32602,
		     "unknown argument 'timeout_ms' to execute_py_code; it accepts: code, "
		     "timeout, execution_session_id, timeout_s");
	done(&a);
	/* Long names cut whole characters; past five names, a count. */
	call(&a, "{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,"
		 "\"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
		 "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
		 "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
		 "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
		 "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
		 "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
		 "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
		 "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\":7}",
		 NULL);
	assert_error(&a, 200, -32602,
		     "unknown arguments 'a', 'b', 'c', 'd', 'e' and 2 more to execute_py_code");
	done(&a);
	call(&a, "{\"code\":\"1\",\"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
		 "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
		 "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
		 "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\":1}", NULL);
	/* 64 bytes: 32 characters of two, then the quote. */
	assert_error(&a, 200, -32602,
		     "unknown argument '\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		     "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		     "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		     "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		     "\xc3\xa9\xc3\xa9' to");
	done(&a);
	/* An alias and its name that disagree. */
	call(&a, "{\"code\":\"1\",\"timeout\":5,\"timeout_s\":6}", NULL);
	assert_error(&a, 200, -32602,
		     "arguments 'timeout' and 'timeout_s' are two names for the same argument "
		     "but their values differ: give one of them");
	done(&a);
	/* A session of another identity is as unknown as one that is not. */
	call(&a, "{\"code\":\"1\",\"execution_session_id\":\"" STUB_OTHER_ID "\"}", NULL);
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_int_eq(json_object_get_int(at(&a, "error.code")), -32602);
	done(&a);
}
END_TEST

START_TEST(tools_call_limit)
{
	struct answer a;

	stub_sessions[0].requests = cfg.http_max_calls_per_session;
	call(&a, "{\"code\":\"1\"}", NULL);
	assert_error(&a, 429, -32000, "requests in flight");
	ck_assert(a.rs.close);
	done(&a);
	/* Notifications are not calls: they pass. */
	post(&a, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	ck_assert_int_eq(a.rs.status, 202);
	done(&a);
	stub_sessions[0].requests = 0;
}
END_TEST

START_TEST(tools_call_progress)
{
	struct answer a;

	call(&a, "{\"code\":\"step\"}", "{\"progressToken\":\"tok\"}");
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_uint_eq(json_object_array_length(events), 1);
	struct json_object *ev = json_object_array_get_idx(events, 0);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(ev, "method")),
			 "notifications/progress");
	struct json_object *p = json_object_object_get(ev, "params");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(p, "progressToken")), "tok");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(p, "message")), "step");
	ck_assert_ptr_null(json_object_object_get(ev, "id"));
	done(&a);
	/* No progress without a token, or for a client that takes no event stream. */
	call(&a, "{\"code\":\"step\"}", NULL);
	ck_assert_int_eq(a.rs.status, 200);
	done(&a);
	request(&a, "POST",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"execute_py_code\",\"_meta\":{\"progressToken\":1}}}",
		STUB_SESSION_ID, NULL, 0);
	ck_assert_int_eq(a.rs.status, 200);
	done(&a);
	/* A token that is neither a string nor an integer is no token. */
	call(&a, "{\"code\":\"step\"}", "{\"progressToken\":[1]}");
	ck_assert_int_eq(a.rs.status, 200);
	done(&a);
	ck_assert_uint_eq(json_object_array_length(events), 1);
}
END_TEST

START_TEST(tools_call_client_gone)
{
	struct answer a;

	/* Gone before the call started: it never runs, and nothing is answered. */
	gone = 1;
	call(&a, "{\"code\":\"1\"}", "{\"progressToken\":\"t\"}");
	ck_assert_int_eq(a.rs.status, 204);
	ck_assert_ptr_null(a.rs.body);
	ck_assert_str_eq(a.rs.outcome, "client gone before it started");
	ck_assert_uint_eq(json_object_array_length(events), 0);
	done(&a);
	gone = 0;
	/* Cancelled while it ran: nothing is answered either. */
	call(&a, "{\"code\":\"cancel\"}", NULL);
	ck_assert_int_eq(a.rs.status, 204);
	ck_assert_ptr_null(a.rs.body);
	ck_assert_str_eq(a.rs.outcome, "cancelled");
	done(&a);
}
END_TEST

START_TEST(delete_ends_session)
{
	struct answer a;

	request(&a, "DELETE", NULL, STUB_SESSION_ID, NULL, 0);
	ck_assert_int_eq(a.rs.status, 200);
	ck_assert_ptr_null(a.rs.body);
	done(&a);
	request(&a, "DELETE", NULL, NULL, NULL, 0);
	assert_error(&a, 400, -32000, "Mcp-Session-Id header is required");
	done(&a);
	request(&a, "DELETE", NULL, "ffffffffffffffffffffffffffffffff", NULL, 0);
	assert_error(&a, 404, -32001, "session not found");
	done(&a);
}
END_TEST

START_TEST(get_streams)
{
	struct answer a;

	request(&a, "GET", NULL, STUB_SESSION_ID, NULL, 0);
	assert_error(&a, 406, -32000, "Accept: text/event-stream");
	ck_assert(!a.rs.open_stream);
	done(&a);
	/* No session, no stream: 405 (a client takes it as "none offered"). */
	for (int sse = 0; sse < 2; sse++) {
		request(&a, "GET", NULL, NULL, NULL, sse);
		ck_assert_int_eq(a.rs.status, 405);
		ck_assert_str_eq(a.rs.allow, "POST, DELETE");
		ck_assert(!a.rs.open_stream);
		done(&a);
	}
	request(&a, "GET", NULL, "ffffffffffffffffffffffffffffffff", NULL, 1);
	assert_error(&a, 404, -32001, "session not found");
	done(&a);
	/* Streams are numbered; beyond max_streams_per_session the oldest ends. */
	unsigned first = 0;
	for (int i = 0; i < 3; i++) {
		request(&a, "GET", NULL, STUB_SESSION_ID, NULL, 1);
		ck_assert_int_eq(a.rs.status, 200);
		ck_assert(a.rs.open_stream);
		ck_assert_ptr_null(a.rs.body);
		if (i == 0)
			first = a.rs.stream;
		ck_assert_uint_eq(a.rs.stream, first + (unsigned)i);
		done(&a);
	}
	ck_assert(!mcp_stream_current(STUB_SESSION_ID, first));
	ck_assert(mcp_stream_current(STUB_SESSION_ID, first + 1));
	ck_assert(mcp_stream_current(STUB_SESSION_ID, first + 2));
	ck_assert(!mcp_stream_current("ffffffffffffffffffffffffffffffff", first + 2));
	stub_check_refs();
}
END_TEST

START_TEST(other_methods)
{
	static const char *const methods[] = {"PUT", "PATCH", "HEAD", "OPTIONS", "post"};
	struct answer a;

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		request(&a, methods[i], "{}", STUB_SESSION_ID, NULL, 0);
		ck_assert_int_eq(a.rs.status, 405);
		ck_assert_str_eq(a.rs.allow, "GET, POST, DELETE");
		ck_assert_ptr_null(a.rs.body);
		done(&a);
	}
}
END_TEST

static Suite *
mcp_suite(void)
{
	Suite *s = suite_create("mcp");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, parse_errors);
	tcase_add_test(tc, invalid_messages);
	tcase_add_test(tc, batches_refused);
	tcase_add_test(tc, nul_refused);
	tcase_add_test(tc, notifications_and_responses);
	tcase_add_test(tc, session_required);
	tcase_add_test(tc, protocol_version_header);
	tcase_add_test(tc, modern_headers);
	tcase_add_test(tc, modern_versions);
	tcase_add_test(tc, modern_param_session);
	tcase_add_test(tc, modern_task_name);
	tcase_add_test(tc, misdirected);
	tcase_add_test(tc, initialize_negotiates);
	tcase_add_test(tc, initialize_errors);
	tcase_add_test(tc, ping_and_unknown_methods);
	tcase_add_test(tc, set_level);
	tcase_add_test(tc, tools_list);
	tcase_add_test(tc, search_tool_follows_the_registry);
	tcase_add_test(tc, tools_call_ok);
	tcase_add_test(tc, tools_call_errors);
	tcase_add_test(tc, tools_call_limit);
	tcase_add_test(tc, tools_call_progress);
	tcase_add_test(tc, tools_call_client_gone);
	tcase_add_test(tc, delete_ends_session);
	tcase_add_test(tc, get_streams);
	tcase_add_test(tc, other_methods);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(mcp_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
