/* mcp_client.c - see mcp_client.h. */
#include "autoconf.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "b64.h"
#include "buf.h"
#include "clock.h"
#include "log.h"
#include "mcp_client.h"
#include "xmalloc.h"

/* What we ask for; the server answers with the version it speaks. */
#define MCPC_PROTOCOL_VERSION "2025-06-18"
/* The stateless revision, spoken to a server whose server/discover lists it. */
#define MCPC_MODERN_VERSION "2026-07-28"
/* How often opts.stop is asked during an exchange, at most. */
#define MCPC_STOP_EVERY_S 0.2
/* Reaching the daemon is quick or broken; running code may take long. */
#define MCPC_CONNECT_TIMEOUT_S 10L

/* One HTTP exchange: what the server answered. */
struct mcpc_reply {
	long status;
	struct buf body;
	char content_type[128];
	struct mcpc *m;
};

/* Log why a request failed and keep it in m->error (probing: kept only). */
static void __attribute__((format(printf, 2, 3)))
mcpc_fail(struct mcpc *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->error, sizeof(m->error), fmt, ap);
	va_end(ap);
	if (!m->probing)
		log_warnx("%s", m->error);
}

/* Keep the body, up to opts.max_bytes: past it the exchange stops. */
static size_t
mcpc_on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct mcpc_reply *r = arg;
	size_t n = size * nmemb;

	if (r->m->opts.max_bytes && r->body.len + n > r->m->opts.max_bytes) {
		r->m->too_big = 1;
		return 0;
	}
	buf_add(&r->body, data, n);
	return n;
}

/* libcurl's progress callback: nonzero stops the exchange (opts.stop). */
static int
mcpc_on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		 curl_off_t ulnow)
{
	struct mcpc *m = arg;
	double now = clock_mono();

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	if (m->opts.stop == NULL || m->unstoppable || now - m->stop_asked < MCPC_STOP_EVERY_S)
		return 0;
	m->stop_asked = now;
	m->stopped = m->opts.stop(m->opts.stop_arg) != 0;
	return m->stopped;
}

/* Keep the Mcp-Session-Id header of the initialize response. */
static size_t
mcpc_on_header(char *data, size_t size, size_t nmemb, void *arg)
{
	static const char name[] = "Mcp-Session-Id:";
	struct mcpc *m = arg;
	size_t n = size * nmemb;

	if (m->session_id[0] || n <= sizeof(name) - 1 ||
	    strncasecmp(data, name, sizeof(name) - 1) != 0)
		return n;
	const char *v = data + sizeof(name) - 1;
	const char *end = data + n;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && isspace((unsigned char)end[-1]))
		end--;
	if ((size_t)(end - v) < sizeof(m->session_id))
		memcpy(m->session_id, v, (size_t)(end - v));
	return n;
}

/* A 2026-07-28 Mcp-Name value: the name, or its =?base64?...?= form when it
 * is not plain visible ASCII. Caller frees. */
static char *
mcpc_header_value(const char *v)
{
	for (const char *p = v; *p; p++)
		if (*p < 0x21 || *p > 0x7e) {
			char *b = b64_encode(v, strlen(v), B64_STD);
			char *r = xasprintf("=?base64?%s?=", b);
			free(b);
			return r;
		}
	return xstrdup(v);
}

/* 2026-07-28's request headers: the method and, for tools/call, the tool. */
static struct curl_slist *
mcpc_modern_headers(struct curl_slist *h, const char *method, const char *name)
{
	char *line = xasprintf("Mcp-Method: %s", method);

	h = curl_slist_append(h, line);
	free(line);
	if (name) {
		char *v = mcpc_header_value(name);
		line = xasprintf("Mcp-Name: %s", v);
		h = curl_slist_append(h, line);
		free(line);
		free(v);
	}
	return h;
}

/*
 * The headers of a request of `method` (NULL: the DELETE or GET of a
 * session) naming tool `name` (or NULL). Caller frees.
 */
static struct curl_slist *
mcpc_headers(const struct mcpc *m, const char *method, const char *name, const char *accept)
{
	struct curl_slist *h = NULL;
	char line[320];

	if (method)
		h = curl_slist_append(h, "Content-Type: application/json");
	snprintf(line, sizeof(line), "Accept: %s", accept);
	h = curl_slist_append(h, line);
	if (m->modern && method)
		h = mcpc_modern_headers(h, method, name);
	if (m->session_id[0]) {
		snprintf(line, sizeof(line), "Mcp-Session-Id: %s", m->session_id);
		h = curl_slist_append(h, line);
	}
	if (m->modern || m->protocol_version[0]) {
		snprintf(line, sizeof(line), "MCP-Protocol-Version: %s",
			 m->modern ? MCPC_MODERN_VERSION : m->protocol_version);
		h = curl_slist_append(h, line);
	}
	const char *token = m->opts.token;
	if (token != NULL && token[0] != '\0') {
		char *auth = xasprintf("Authorization: Bearer %s", token);
		h = curl_slist_append(h, auth);
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	return h;
}

/* Set up m->curl for one exchange with `headers` (borrowed). */
static void
mcpc_setup(struct mcpc *m, struct curl_slist *headers, struct mcpc_reply *reply, long timeout_s)
{
	buf_init(&reply->body);
	reply->content_type[0] = '\0';
	reply->m = m;
	m->too_big = m->timed_out = m->unreachable = m->stopped = 0;
	/* reset keeps the connection cache, so the session's requests reuse one. */
	curl_easy_reset(m->curl);
	curl_easy_setopt(m->curl, CURLOPT_URL, m->url);
	curl_easy_setopt(m->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(m->curl, CURLOPT_CONNECTTIMEOUT, MCPC_CONNECT_TIMEOUT_S);
	curl_easy_setopt(m->curl, CURLOPT_ERRORBUFFER, m->errbuf);
	curl_easy_setopt(m->curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(m->curl, CURLOPT_WRITEFUNCTION, mcpc_on_body);
	curl_easy_setopt(m->curl, CURLOPT_WRITEDATA, reply);
	curl_easy_setopt(m->curl, CURLOPT_TIMEOUT, timeout_s);
	curl_easy_setopt(m->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(m->curl, CURLOPT_XFERINFOFUNCTION, mcpc_on_progress);
	curl_easy_setopt(m->curl, CURLOPT_XFERINFODATA, m);
	curl_easy_setopt(m->curl, CURLOPT_HEADERFUNCTION, mcpc_on_header);
	curl_easy_setopt(m->curl, CURLOPT_HEADERDATA, m);
	m->errbuf[0] = '\0';
}

/* Run the exchange set up; 0 with reply's status and type, or -1 (logged). */
static int
mcpc_perform(struct mcpc *m, const char *verb, struct mcpc_reply *reply)
{
	char *ctype = NULL;
	CURLcode rc = curl_easy_perform(m->curl);

	if (rc != CURLE_OK) {
		m->timed_out = rc == CURLE_OPERATION_TIMEDOUT;
		m->unreachable = rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST;
		if (m->too_big)
			mcpc_fail(m, "%s %s: the answer is larger than %zu bytes", verb, m->url,
				  m->opts.max_bytes);
		else if (rc == CURLE_ABORTED_BY_CALLBACK)
			mcpc_fail(m, "%s %s: cancelled", verb, m->url);
		else
			mcpc_fail(m, "%s %s: %s", verb, m->url,
				  m->errbuf[0] ? m->errbuf : curl_easy_strerror(rc));
		buf_free(&reply->body);
		return -1;
	}
	curl_easy_getinfo(m->curl, CURLINFO_RESPONSE_CODE, &reply->status);
	if (curl_easy_getinfo(m->curl, CURLINFO_CONTENT_TYPE, &ctype) == CURLE_OK && ctype)
		snprintf(reply->content_type, sizeof(reply->content_type), "%s", ctype);
	return 0;
}

/*
 * Send one request: POST of `method` (naming tool `name`, or NULL) with
 * `body`, or DELETE when body is NULL. Returns 0 with `reply` filled
 * (caller frees reply->body), or -1 (logged).
 */
static int
mcpc_send(struct mcpc *m, const char *method, const char *name, const char *body,
	  struct mcpc_reply *reply)
{
	struct curl_slist *headers =
		mcpc_headers(m, body ? method : NULL, name, "application/json, text/event-stream");

	mcpc_setup(m, headers, reply, m->opts.timeout_s);
	if (body)
		curl_easy_setopt(m->curl, CURLOPT_POSTFIELDS, body);
	else
		curl_easy_setopt(m->curl, CURLOPT_CUSTOMREQUEST, "DELETE");
	int rc = mcpc_perform(m, body ? "POST" : "DELETE", reply);
	curl_slist_free_all(headers);
	return rc;
}

/* Whether `msg` is the JSON-RPC response to request `id`. */
static int
mcpc_is_response(struct json_object *msg, long long id)
{
	struct json_object *v;

	return json_object_is_type(msg, json_type_object) &&
	       json_object_object_get_ex(msg, "id", &v) && json_object_is_type(v, json_type_int) &&
	       json_object_get_int64(v) == id &&
	       (json_object_object_get_ex(msg, "result", NULL) ||
		json_object_object_get_ex(msg, "error", NULL));
}

/* Parse one SSE event's data; keep it if it answers `id`. */
static struct json_object *
mcpc_sse_event(struct buf *data, long long id)
{
	struct json_object *msg = data->len ? json_tokener_parse(data->data) : NULL;

	data->len = 0;
	if (data->data)
		data->data[0] = '\0';
	if (msg && mcpc_is_response(msg, id))
		return msg;
	json_object_put(msg);
	return NULL;
}

/*
 * Find the response to `id` in an event stream: events end at a blank
 * line, and an event's data is its "data:" lines joined by newlines.
 * Progress notifications and other events are skipped.
 */
static struct json_object *
mcpc_from_sse(const char *text, long long id)
{
	struct json_object *found = NULL;
	struct buf data;
	const char *p = text;

	buf_init(&data);
	while (*p && found == NULL) {
		size_t n = strcspn(p, "\n");
		size_t len = n > 0 && p[n - 1] == '\r' ? n - 1 : n;
		if (len == 0) {
			found = mcpc_sse_event(&data, id);
		} else if (len >= 5 && strncmp(p, "data:", 5) == 0) {
			size_t skip = len > 5 && p[5] == ' ' ? 6 : 5;
			if (data.len)
				buf_adds(&data, "\n");
			buf_add(&data, p + skip, len - skip);
		}
		p += n + (p[n] == '\n');
	}
	if (found == NULL)
		found = mcpc_sse_event(&data, id);
	buf_free(&data);
	return found;
}

/* The JSON-RPC message answering `id` in `reply`, or NULL. Caller owns. */
static struct json_object *
mcpc_message(const struct mcpc_reply *reply, long long id)
{
	if (strncasecmp(reply->content_type, "text/event-stream", 17) == 0)
		return mcpc_from_sse(reply->body.data, id);
	struct json_object *msg = json_tokener_parse(reply->body.data ? reply->body.data : "");
	if (msg && (mcpc_is_response(msg, id) || json_object_object_get_ex(msg, "error", NULL)))
		return msg;
	json_object_put(msg);
	return NULL;
}

/* Say why a request failed, with the server's own message when it sent one. */
static void
mcpc_report(struct mcpc *m, const char *method, long status, struct json_object *msg)
{
	struct json_object *err, *text;

	if (msg && json_object_object_get_ex(msg, "error", &err) &&
	    json_object_object_get_ex(err, "message", &text))
		mcpc_fail(m, "%s at %s: %s (HTTP %ld)", method, m->url,
			  json_object_get_string(text), status);
	else
		mcpc_fail(m, "%s at %s: HTTP %ld with no JSON-RPC answer", method, m->url, status);
}

/* 2026-07-28's params._meta: the version and our (empty) capabilities. */
static void
mcpc_add_meta(struct json_object *params)
{
	struct json_object *meta;

	if (!json_object_object_get_ex(params, "_meta", &meta) ||
	    !json_object_is_type(meta, json_type_object)) {
		meta = json_object_new_object();
		json_object_object_add(params, "_meta", meta);
	}
	json_object_object_add(meta, "io.modelcontextprotocol/protocolVersion",
			       json_object_new_string(MCPC_MODERN_VERSION));
	json_object_object_add(meta, "io.modelcontextprotocol/clientCapabilities",
			       json_object_new_object());
}

/* POST one JSON-RPC message; 0 with `reply`, or -1 (logged). */
static int
mcpc_post(struct mcpc *m, const char *method, long long id, int notify,
	  struct json_object *params, struct mcpc_reply *reply)
{
	struct json_object *req = json_object_new_object(), *v;
	const char *name = NULL;

	json_object_object_add(req, "jsonrpc", json_object_new_string("2.0"));
	if (!notify)
		json_object_object_add(req, "id", json_object_new_int64(id));
	json_object_object_add(req, "method", json_object_new_string(method));
	if (m->modern && params == NULL)
		params = json_object_new_object();
	if (params) {
		if (m->modern)
			mcpc_add_meta(params);
		if (strcmp(method, "tools/call") == 0 &&
		    json_object_object_get_ex(params, "name", &v))
			name = json_object_get_string(v);
		json_object_object_add(req, "params", params);
	}
	int rc = mcpc_send(m, method, name,
			   json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN), reply);
	json_object_put(req);
	return rc;
}

/* Tell the server we no longer wait for request `id` (opts.stop said so). */
static void
mcpc_cancelled(struct mcpc *m, long long id)
{
	struct json_object *p = json_object_new_object();
	struct mcpc_reply reply;

	json_object_object_add(p, "requestId", json_object_new_int64(id));
	json_object_object_add(p, "reason", json_object_new_string("the caller cancelled"));
	m->unstoppable = 1;
	if (mcpc_post(m, "notifications/cancelled", 0, 1, p, &reply) == 0)
		buf_free(&reply.body);
	m->unstoppable = 0;
	m->stopped = 1;
}

/* Build and send one request; returns its response message (caller owns) or NULL. */
static struct json_object *
mcpc_request(struct mcpc *m, const char *method, struct json_object *params, int notify)
{
	struct json_object *msg = NULL;
	struct mcpc_reply reply;
	long long id = m->next_id++;

	m->status = 0;
	if (mcpc_post(m, method, id, notify, params, &reply) == -1) {
		if (m->stopped && !notify)
			mcpc_cancelled(m, id);
		return NULL;
	}
	m->status = reply.status;
	if (notify) {
		if (reply.status != 200 && reply.status != 202 && reply.status != 204)
			mcpc_fail(m, "%s at %s: HTTP %ld", method, m->url, reply.status);
		buf_free(&reply.body);
		/* Any non-NULL value: a notification has no answer to return. */
		return reply.status / 100 == 2 ? json_object_new_object() : NULL;
	}
	msg = mcpc_message(&reply, id);
	if (reply.status != 200 || msg == NULL || !mcpc_is_response(msg, id) ||
	    json_object_object_get_ex(msg, "error", NULL)) {
		mcpc_report(m, method, reply.status, msg);
		json_object_put(msg);
		msg = NULL;
	}
	buf_free(&reply.body);
	return msg;
}

struct json_object *
mcpc_call(struct mcpc *m, const char *method, struct json_object *params)
{
	struct json_object *msg = mcpc_request(m, method, params, 0);
	struct json_object *result = NULL;

	if (msg && json_object_object_get_ex(msg, "result", &result))
		json_object_get(result);
	json_object_put(msg);
	return result;
}

/* Whether server capabilities `caps` offer tools' listChanged. */
static int
mcpc_list_changes(struct json_object *caps)
{
	struct json_object *tools, *v;

	return json_object_object_get_ex(caps, "tools", &tools) &&
	       json_object_object_get_ex(tools, "listChanged", &v) && json_object_get_boolean(v);
}

/*
 * Ask server/discover as 2026-07-28 does: 1 if the server lists that
 * revision (m->modern stays set), 0 if not (nothing logged), -1 if no
 * server answered at all.
 */
static int
mcpc_discover(struct mcpc *m)
{
	struct json_object *r, *versions, *caps;
	int found = 0;

	m->modern = m->probing = 1;
	r = mcpc_call(m, "server/discover", NULL);
	m->probing = 0;
	if (r && json_object_object_get_ex(r, "supportedVersions", &versions) &&
	    json_object_is_type(versions, json_type_array))
		for (size_t k = 0; k < json_object_array_length(versions); k++)
			if (strcmp(json_object_get_string(json_object_array_get_idx(versions, k)),
				   MCPC_MODERN_VERSION) == 0)
				found = 1;
	if (found && json_object_object_get_ex(r, "capabilities", &caps))
		m->tools_list_changed = mcpc_list_changes(caps);
	json_object_put(r);
	m->modern = found;
	if (!found && (m->unreachable || m->timed_out || m->stopped)) {
		log_warnx("%s", m->error);
		return -1;
	}
	return found;
}

/* initialize's params: who we are and the protocol we speak. */
static struct json_object *
mcpc_initialize_params(const struct mcpc *m)
{
	struct json_object *p = json_object_new_object();
	struct json_object *info = json_object_new_object();

	json_object_object_add(p, "protocolVersion", json_object_new_string(MCPC_PROTOCOL_VERSION));
	json_object_object_add(p, "capabilities", json_object_new_object());
	json_object_object_add(info, "name", json_object_new_string(m->opts.client_name ? m->opts.client_name : "codeexecctl"));
	json_object_object_add(info, "version", json_object_new_string(PACKAGE_VERSION));
	json_object_object_add(p, "clientInfo", info);
	return p;
}

/* initialize and notifications/initialized: a 2025 session. 0 or -1 (logged). */
static int
mcpc_initialize(struct mcpc *m)
{
	struct json_object *result, *v;

	if ((result = mcpc_call(m, "initialize", mcpc_initialize_params(m))) == NULL)
		return -1;
	if (json_object_object_get_ex(result, "protocolVersion", &v))
		snprintf(m->protocol_version, sizeof(m->protocol_version), "%s",
			 json_object_get_string(v));
	if (json_object_object_get_ex(result, "capabilities", &v))
		m->tools_list_changed = mcpc_list_changes(v);
	json_object_put(result);
	if (m->session_id[0] == '\0' && !m->opts.session_optional) {
		mcpc_fail(m, "initialize at %s: the answer has no Mcp-Session-Id header", m->url);
		return -1;
	}
	struct json_object *ack = mcpc_request(m, "notifications/initialized", NULL, 1);
	if (ack == NULL)
		return -1;
	json_object_put(ack);
	return 0;
}

/* mcpc_open's work; 0 or -1. */
static int
mcpc_start(struct mcpc *m, const char *url, const struct mcpc_opts *opts)
{
	memset(m, 0, sizeof(*m));
	if (opts)
		m->opts = *opts;
	m->url = xstrdup(url);
	m->next_id = 1;
	if ((m->curl = curl_easy_init()) == NULL) {
		mcpc_fail(m, "%s: libcurl could not be initialized", url);
		return -1;
	}
	if (m->opts.revision == MCPC_MODERN) {
		m->modern = 1;
		return 0;
	}
	if (m->opts.revision == MCPC_PROBE) {
		int found = mcpc_discover(m);
		if (found != 0)
			return found == 1 ? 0 : -1;
	}
	return mcpc_initialize(m);
}

int
mcpc_open(struct mcpc *m, const char *url, const struct mcpc_opts *opts)
{
	int rc = mcpc_start(m, url, opts);

	m->ready = rc == 0;
	return rc;
}

/* What a GET stream holds so far, and whom to tell of each message. */
struct mcpc_stream {
	struct buf pending; /* bytes not yet ending an event */
	void (*on_message)(struct json_object *msg, void *arg);
	void *arg;
};

/* Hand each complete event of st->pending to its callback. */
static void
mcpc_stream_events(struct mcpc_stream *st)
{
	char *p = st->pending.data, *end;

	while ((end = strstr(p, "\n\n")) != NULL) {
		struct buf data;
		buf_init(&data);
		for (char *line = p; line < end;) {
			size_t n = strcspn(line, "\n");
			size_t len = n > 0 && line[n - 1] == '\r' ? n - 1 : n;
			if (len >= 5 && strncmp(line, "data:", 5) == 0) {
				size_t skip = len > 5 && line[5] == ' ' ? 6 : 5;
				if (data.len)
					buf_adds(&data, "\n");
				buf_add(&data, line + skip, len - skip);
			}
			line += n + 1;
		}
		struct json_object *msg = data.len ? json_tokener_parse(data.data) : NULL;
		if (msg)
			st->on_message(msg, st->arg);
		json_object_put(msg);
		buf_free(&data);
		p = end + 2;
	}
	size_t left = strlen(p);
	memmove(st->pending.data, p, left + 1);
	st->pending.len = left;
}

static size_t
mcpc_on_stream(char *data, size_t size, size_t nmemb, void *arg)
{
	struct mcpc_stream *st = arg;
	size_t n = size * nmemb;

	for (size_t k = 0; k < n; k++)
		if (data[k] != '\r') /* events end at a blank line, whichever line ends */
			buf_add(&st->pending, data + k, 1);
	/* An event larger than the answers we take is not one we follow. */
	if (st->pending.len > (size_t)1 << 20)
		return 0;
	mcpc_stream_events(st);
	return n;
}

int
mcpc_listen(struct mcpc *m, void (*on_message)(struct json_object *msg, void *arg), void *arg)
{
	struct mcpc_stream st = {.on_message = on_message, .arg = arg};
	struct mcpc_reply reply;
	struct curl_slist *headers = mcpc_headers(m, NULL, NULL, "text/event-stream");
	long status = 0;

	buf_init(&st.pending);
	buf_adds(&st.pending, "");
	mcpc_setup(m, headers, &reply, 0);
	curl_easy_setopt(m->curl, CURLOPT_WRITEFUNCTION, mcpc_on_stream);
	curl_easy_setopt(m->curl, CURLOPT_WRITEDATA, &st);
	curl_easy_setopt(m->curl, CURLOPT_HTTPGET, 1L);
	int rc = mcpc_perform(m, "GET", &reply);
	curl_slist_free_all(headers);
	buf_free(&st.pending);
	if (rc == 0) {
		status = reply.status;
		buf_free(&reply.body);
		if (status != 200) {
			mcpc_fail(m, "GET %s: HTTP %ld: no stream of server messages", m->url, status);
			rc = -1;
		}
	}
	return rc;
}

void
mcpc_close(struct mcpc *m)
{
	struct mcpc_reply reply;

	if (m->curl && m->session_id[0] && mcpc_send(m, NULL, NULL, NULL, &reply) == 0) {
		/* A session the daemon already dropped is gone either way. */
		if (reply.status != 200 && reply.status != 204 && reply.status != 404)
			log_warnx("DELETE %s: session %.8s: HTTP %ld", m->url, m->session_id,
				  reply.status);
		buf_free(&reply.body);
	}
	if (m->curl)
		curl_easy_cleanup(m->curl);
	m->curl = NULL;
	free(m->url);
	m->url = NULL;
}
