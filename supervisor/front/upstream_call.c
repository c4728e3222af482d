/*
 * upstream_call.c - a kernel's request of code mode (upstream.h): checked,
 * made and answered on a thread of its own, so that neither the pool's
 * loop nor another session waits for an upstream server.
 */
#include "autoconf.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "config.h"
#include "ipc_msg.h"
#include "json_member.h"
#include "json_strict.h"
#include "log.h"
#include "mcp_client.h"
#include "pool.h"
#include "pool_exec.h"
#include "pool_send.h"
#include "pool_state.h"
#include "session.h"
#include "upstream.h"
#include "xmalloc.h"

/* A session's requests answered at once, at most: each holds a thread. The
 * kernel's package asks one at a time; more is a kernel writing its own. */
#define INFLIGHT_MAX 4

/* Nesting of a kernel's request: arguments are documents, not traps. */
#define REQUEST_DEPTH_MAX 64
/* How long an approval may wait for the agent's client, at most. */
#define APPROVE_WAIT_S 300
/* The arguments an approval's question shows, at most (bytes of JSON). */
#define APPROVE_ARGS_MAX 400

/* One request in flight: what it needs once the pool lock is let go. */
struct upreq {
	uint32_t worker_id; /* the parent's id of the worker (priv_id) */
	uint32_t exec_id;   /* the execution it came from */
	int seq;
	struct session *session; /* referenced */
	char identity[128];
	char session_id[SESSION_ID_LEN + 1];
	char *text;	    /* the kernel's JSON */
	size_t len;
	int elicit;	    /* the session's client can be asked (approve) */
	/* An approval asked of the agent's client, under the pool lock. */
	pthread_cond_t cond;
	int answered;
	int approved;
};

/* {"seq": N, "ok": false, "error": {"type": TYPE, "message": TEXT}}. */
static struct json_object *
failure(int seq, const char *type, const char *message)
{
	struct json_object *r = json_object_new_object(), *e = json_object_new_object();

	json_object_object_add(e, "type", json_object_new_string(type));
	json_object_object_add(e, "message", json_object_new_string(message));
	json_object_object_add(r, "seq", json_object_new_int(seq));
	json_object_object_add(r, "ok", json_object_new_boolean(0));
	json_object_object_add(r, "error", e);
	return r;
}

/* {"seq": N, "ok": true, KEY: value (consumed)}. */
static struct json_object *
success(int seq, const char *key, struct json_object *value)
{
	struct json_object *r = json_object_new_object();

	json_object_object_add(r, "seq", json_object_new_int(seq));
	json_object_object_add(r, "ok", json_object_new_boolean(1));
	json_object_object_add(r, key, value);
	return r;
}

/* Remove from `tools` those whose calls need an approval no one can give. */
static void
drop_unapprovable(size_t i, struct json_object *tools)
{
	for (size_t k = json_object_array_length(tools); k-- > 0;) {
		const char *name = json_member_str(json_object_array_get_idx(tools, k), "name");
		if (upstream_needs_approval(i, name))
			json_object_array_del_idx(tools, k, 1);
	}
}

/* The list op: each upstream `q`'s identity may call, with its tools. */
static struct json_object *
op_list(const struct upreq *q)
{
	struct json_object *all = json_object_new_object();
	char why[512];

	for (size_t i = 0; i < upstream_count(); i++) {
		if (!upstream_allowed(i, q->identity))
			continue;
		struct json_object *u = json_object_new_object();
		struct json_object *tools = upstream_tools(i, 1, why, sizeof(why));
		if (tools && !q->elicit)
			drop_unapprovable(i, tools);
		if (tools)
			json_object_object_add(u, "tools", tools);
		else
			json_object_object_add(u, "error", json_object_new_string(why));
		json_object_object_add(all, upstream_name(i), u);
	}
	return success(q->seq, "upstreams", all);
}

/*
 * Take one of the session's calls of upstream i: 0, or why not: -1 past
 * max_calls, -2 with its bucket of max_calls_per_minute empty. Pool lock taken.
 */
static int
count_call(const struct upreq *q, size_t i)
{
	const struct config_upstream *c = upstream_config(i);
	double now = clock_mono();
	int rc = 0;

	pool_lock();
	struct session *s = q->session;
	if (s->upstream_use == NULL)
		s->upstream_use = xcalloc(upstream_count(), sizeof(*s->upstream_use));
	struct upstream_use *u = &s->upstream_use[i];
	double cap = c->max_calls_per_minute;
	if (cap > 0) {
		u->tokens = u->at == 0 ? cap : u->tokens + (now - u->at) * cap / 60;
		if (u->tokens > cap)
			u->tokens = cap;
		u->at = now;
	}
	if (u->calls >= (unsigned)c->max_calls)
		rc = -1;
	else if (cap > 0 && u->tokens < 1)
		rc = -2;
	else {
		u->calls++;
		u->tokens -= cap > 0;
	}
	pool_unlock();
	return rc;
}

/* q's worker, if it still runs q's execution and nobody cancelled it. Pool lock held. */
static struct call *
live_call(const struct upreq *q)
{
	for (struct worker *w = pool.workers; w; w = w->next)
		if (w->priv_id == q->worker_id)
			return w->call && w->call->id == q->exec_id && !w->call->cancelled
				       ? w->call
				       : NULL;
	return NULL;
}

/* mcpc's stop: the agent's call ended or was cancelled. */
static int
call_gone(void *arg)
{
	pool_lock();
	int gone = live_call(arg) == NULL;
	pool_unlock();
	return gone;
}

/* Tell whoever follows q's call that upstream `name`'s `tool` runs now ("": ended). */
static void
note_call(const struct upreq *q, const char *name, const char *tool)
{
	pool_lock();
	struct call *c = live_call(q);
	if (c) {
		if (tool[0])
			snprintf(c->upstream_note, sizeof(c->upstream_note), "%s.%s", name, tool);
		else
			c->upstream_note[0] = '\0';
		c->upstream_notes++;
		c->changes++;
		pthread_cond_broadcast(&c->cond);
	}
	pool_unlock();
}

/* The agent's client answered q's approval (pool lock held: pool_input_reply). */
static void
approval_answer(void *arg, int how, const char *value)
{
	struct upreq *q = arg;

	q->answered = 1;
	q->approved = how == INPUT_VALUE && value &&
		      (strcasecmp(value, "yes") == 0 || strcasecmp(value, "y") == 0);
	pthread_cond_broadcast(&q->cond);
}

/* The question an approval asks. Caller frees. */
static char *
approval_question(const struct upreq *q, const char *name, const char *tool,
		  struct json_object *args)
{
	const char *a = args ? json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN) : "{}";
	size_t n = strlen(a);

	return xasprintf("The code of session %.8s asks to call tool %s of upstream %s with "
			 "%.*s%s. Answer yes to allow this call.",
			 q->session_id, tool, name, (int)(n > APPROVE_ARGS_MAX ? APPROVE_ARGS_MAX : n), a,
			 n > APPROVE_ARGS_MAX ? "..." : "");
}

/*
 * Ask the agent's client, on the call it waits for, whether q may call
 * `tool` (the driver elicits: progress.c). 0 if it said yes; -1 with why.
 */
static int
approve(struct upreq *q, const char *name, const char *tool, struct json_object *args,
	char *why, size_t why_len)
{
	double until = clock_mono() + APPROVE_WAIT_S;
	char *question = approval_question(q, name, tool, args);

	pool_lock();
	struct call *c = live_call(q);
	if (c == NULL || !c->asker || c->input_prompt) {
		pool_unlock();
		free(question);
		snprintf(why, why_len, "tool %s of upstream %s needs the agent's approval, and no "
			 "client that can give it waits for this call", tool, name);
		return -1;
	}
	c->input_prompt = question;
	c->input_id[0] = '\0';
	c->input_to = approval_answer;
	c->input_to_arg = q;
	c->changes++;
	pthread_cond_broadcast(&c->cond);
	while (!q->answered) {
		struct timespec d = clock_deadline(0.25);
		pthread_cond_timedwait(&q->cond, pool_mutex(), &d);
		if (!q->answered && (live_call(q) != c || clock_mono() > until)) {
			if (live_call(q) == c)
				pool_input_reply(c, INPUT_EOF, NULL);
			break;
		}
	}
	int ok = q->answered && q->approved;
	pool_unlock();
	if (!ok)
		snprintf(why, why_len, "the agent's client did not approve the call of tool %s of "
			 "upstream %s", tool, name);
	return ok ? 0 : -1;
}

/* The failure of an exchange that `m` met, as an outcome and a reply. */
static struct json_object *
exchange_failed(const struct upreq *q, const struct mcpc *m, int opened,
		enum upstream_outcome *o)
{
	const char *type = "upstream";

	*o = UPSTREAM_FAILED;
	if (m->stopped) {
		*o = UPSTREAM_CANCELLED;
		type = "cancelled";
	} else if (m->too_big) {
		*o = UPSTREAM_TOO_LARGE;
		type = "too_large";
	} else if (m->timed_out) {
		*o = UPSTREAM_TIMEOUT;
		type = "timeout";
	} else if (!opened || m->unreachable) {
		*o = UPSTREAM_UNAVAILABLE;
		type = "unavailable";
	}
	return failure(q->seq, type, m->error[0] ? m->error : "the upstream gave no answer");
}

/* tools/call of upstream i's `tool` with `args` (borrowed); the reply, and *o. */
static struct json_object *
call_tool(const struct upreq *q, size_t i, const char *tool, struct json_object *args,
	  enum upstream_outcome *o)
{
	const struct config_upstream *c = upstream_config(i);
	struct json_object *params = json_object_new_object(), *r = NULL, *err;
	struct mcpc *m = NULL;
	int reused = 1;

	json_object_object_add(params, "name", json_object_new_string(tool));
	json_object_object_add(params, "arguments",
			       args ? json_object_get(args) : json_object_new_object());
	note_call(q, c->name, tool);
	/* A kept session the server has forgotten (404) never ran the call:
	 * try the next, down to a new one. */
	for (int k = 0; r == NULL && reused && k <= UPSTREAM_IDLE_MAX; k++) {
		if (m)
			upstream_session_end(i, m, 0);
		m = upstream_session(i, &reused);
		if (!m->ready)
			break;
		m->opts.stop = call_gone;
		m->opts.stop_arg = (void *)q;
		r = mcpc_call(m, "tools/call", json_object_get(params));
		if (m->status != 404)
			break;
	}
	json_object_put(params);
	struct json_object *reply = r ? NULL : exchange_failed(q, m, m->ready, o);
	upstream_session_end(i, m, r != NULL);
	note_call(q, c->name, "");
	if (reply)
		return reply;
	*o = json_object_object_get_ex(r, "isError", &err) && json_object_get_boolean(err)
		     ? UPSTREAM_TOOL_ERROR
		     : UPSTREAM_OK;
	return success(q->seq, "result", r);
}

/* The call op: allowed, exposed, within max_calls, then made. */
static struct json_object *
op_call(struct upreq *q, struct json_object *req, size_t *reply_upstream,
	enum upstream_outcome *o)
{
	const char *name = json_member_str(req, "upstream");
	const char *tool = json_member_str(req, "tool");
	struct json_object *args = NULL;
	char msg[512];

	*o = UPSTREAM_DENIED;
	if (name[0] == '\0' || tool[0] == '\0' ||
	    (json_object_object_get_ex(req, "arguments", &args) &&
	     !json_object_is_type(args, json_type_object)))
		return failure(q->seq, "bad_request",
			       "a call names upstream and tool (strings), arguments an object");
	int i = upstream_find(name);
	if (i < 0 || !upstream_allowed((size_t)i, q->identity)) {
		snprintf(msg, sizeof(msg), "no upstream %s for identity %s", name, q->identity);
		return i < 0 ? failure(q->seq, "bad_request", msg) : failure(q->seq, "denied", msg);
	}
	*reply_upstream = (size_t)i;
	if (!upstream_exposes((size_t)i, tool)) {
		snprintf(msg, sizeof(msg), "upstream %s: tool %s is not exposed", name, tool);
		return failure(q->seq, "denied", msg);
	}
	int counted = count_call(q, (size_t)i);
	if (counted < 0) {
		*o = UPSTREAM_LIMIT;
		if (counted == -1)
			snprintf(msg, sizeof(msg),
				 "upstream %s: this session made its %d calls (max_calls)", name,
				 upstream_config((size_t)i)->max_calls);
		else
			snprintf(msg, sizeof(msg),
				 "upstream %s: this session called it %d times in the last minute "
				 "(max_calls_per_minute); try again in a few seconds",
				 name, upstream_config((size_t)i)->max_calls_per_minute);
		return failure(q->seq, "limit", msg);
	}
	if (upstream_needs_approval((size_t)i, tool) &&
	    approve(q, name, tool, args, msg, sizeof(msg)) == -1)
		return failure(q->seq, "denied", msg);
	return call_tool(q, (size_t)i, tool, args, o);
}

/* Send `reply` to q's worker if it still runs q's execution. Pool lock taken. */
static void
send_reply(const struct upreq *q, const char *reply)
{
	struct ipc_upstream_reply r = {.seq = q->seq, .reply = ipc_text_of(reply)};

	pool_lock();
	for (struct worker *w = pool.workers; w; w = w->next)
		if (w->priv_id == q->worker_id && w->call && w->call->id == q->exec_id &&
		    w->fd != -1) {
			if (worker_send(w, IPC_UPSTREAM_REPLY, q->exec_id, &r) == -1)
				log_warn("worker %d: the reply to its upstream call", (int)w->pid);
			break;
		}
	q->session->upstream_inflight--;
	session_put(q->session);
	pool_unlock();
}

/* The audit line of one call. */
static void
audit(const struct upreq *q, struct json_object *req, int upstream, enum upstream_outcome o,
      double started, size_t reply_len)
{
	if (upstream < 0) {
		log_info("upstream request of session %.8s (%s) refused: %s", q->session_id,
			 q->identity, upstream_outcome_name(o));
		return;
	}
	upstream_count_call((size_t)upstream, o);
	const char *tool = json_member_str(req, "tool");
	log_info("upstream call: identity %s session %.8s upstream %s tool %s: %s in %.0f ms, "
		 "%zu bytes sent, %zu received",
		 q->identity, q->session_id, upstream_name((size_t)upstream), tool ? tool : "?",
		 upstream_outcome_name(o), (clock_mono() - started) * 1000, q->len, reply_len);
}

static void *
request_thread(void *arg)
{
	struct upreq *q = arg;
	struct json_strict js;
	struct json_object *req = NULL, *reply;
	const char *op = NULL;
	size_t upstream = (size_t)-1;
	enum upstream_outcome o = UPSTREAM_FAILED;
	double started = clock_mono();

	if (json_strict_check(q->text, q->len, REQUEST_DEPTH_MAX, &js) == 0)
		req = json_tokener_parse(q->text);
	if (req && json_object_is_type(req, json_type_object))
		op = json_member_str(req, "op");
	if (op && strcmp(op, "list") == 0)
		reply = op_list(q);
	else if (op && strcmp(op, "call") == 0)
		reply = op_call(q, req, &upstream, &o);
	else
		reply = failure(q->seq, "bad_request", "a request is a JSON object with op list or call");
	const char *text = json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN);
	if (op && strcmp(op, "call") == 0)
		audit(q, req, upstream == (size_t)-1 ? -1 : (int)upstream, o, started, strlen(text));
	send_reply(q, text);
	json_object_put(reply);
	json_object_put(req);
	pthread_cond_destroy(&q->cond);
	free(q->text);
	free(q);
	return NULL;
}

void
upstream_kernel_request(struct worker *w, uint32_t exec_id, const struct ipc_upstream_call *m)
{
	struct session *s = w->session ? session_get(w->session) : NULL;
	struct upreq *q;
	pthread_t t;
	pthread_attr_t attr;

	if (s == NULL)
		return; /* a worker nobody holds: no one to answer for */
	if (s->upstream_inflight >= INFLIGHT_MAX) {
		struct json_object *f = failure(m->seq, "limit",
						"too many requests of this session at once");
		struct ipc_upstream_reply r = {
			.seq = m->seq,
			.reply = ipc_text_of(json_object_to_json_string_ext(f, JSON_C_TO_STRING_PLAIN))};
		if (worker_send(w, IPC_UPSTREAM_REPLY, exec_id, &r) == -1)
			log_warn("worker %d: the refusal of its upstream request", (int)w->pid);
		json_object_put(f);
		session_put(s);
		return;
	}
	s->upstream_inflight++;
	q = xcalloc(1, sizeof(*q));
	*q = (struct upreq){.worker_id = w->priv_id, .exec_id = exec_id, .seq = m->seq,
			    .session = s, .text = xmalloc(m->request.len + 1), .len = m->request.len};
	pthread_cond_init(&q->cond, NULL);
	q->elicit = s->elicitation;
	memcpy(q->text, m->request.s, m->request.len);
	q->text[m->request.len] = '\0';
	snprintf(q->identity, sizeof(q->identity), "%s", s->identity);
	snprintf(q->session_id, sizeof(q->session_id), "%s", s->id);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, request_thread, q) != 0)
		fatalx("pthread_create for an upstream call");
	pthread_attr_destroy(&attr);
}
