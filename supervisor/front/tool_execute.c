/*
 * tool_execute.c - execute_{name}_code: run code in the session's kernel,
 * on this HTTP thread while the client waits (sync), backgrounding it at
 * once (async_only), or running it here until promotion_threshold_s and
 * then backgrounding it (adaptive).
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "config.h"
#include "handle.h"
#include "job.h"
#include "kernel_env_rules.h"
#include "kernel_info.h"
#include "kernelspec.h"
#include "mcp_elicit.h"
#include "parent_link.h"
#include "pool.h"
#include "progress.h"
#include "result.h"
#include "session.h"
#include "tasks.h"
#include "tools.h"
#include "xmalloc.h"

/* List the types a call may ask for as allow_mime's items' enum. */
static void
add_mime_enum(const struct config *cfg, struct json_object *schema)
{
	struct json_object *props, *prop, *items;
	struct json_object *choices = json_object_new_array();

	char **allowed = kernel_env_mime(cfg, NULL);
	for (char **p = allowed; *p; p++)
		json_object_array_add(choices, json_object_new_string(*p));
	strv_free(allowed);
	if (json_object_object_get_ex(schema, "properties", &props) &&
	    json_object_object_get_ex(props, "allow_mime", &prop) &&
	    json_object_object_get_ex(prop, "items", &items))
		json_object_object_add(items, "enum", choices);
	else
		json_object_put(choices);
}

static void
execute_describe(const struct config *cfg, struct json_object *tool)
{
	static const char input_schema[] =
		"{\"type\":\"object\",\"properties\":{"
		"\"code\":{\"type\":\"string\",\"description\":"
		"\"Python code to run. Variables persist between calls of this session.\"},"
		"\"description\":{\"type\":\"string\",\"description\":"
		"\"A short note on what the code does, for logs.\"},"
		"\"timeout\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":"
		"\"Seconds before the execution is interrupted (clamped to the server's "
		"max_timeout; null and 0 are refused: nothing runs unbounded).\"},"
		"\"execution_session_id\":{\"type\":\"string\",\"description\":"
		"\"Run in this earlier session's kernel (same identity) instead of this "
		"connection's own. On the 2026-07-28 path (no MCP session) a call without it "
		"starts a new execution session and returns its id as execution_session_id.\"},"
		"\"allow_mime\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
		"\"description\":\"Keep only these MIME types of rich outputs (text/plain "
		"always stays); a subset of the server's list. Types not kept are named in "
		"dropped_mime.\"}},"
		"\"required\":[\"code\"]}";
	struct json_object *schema = tool_schema(input_schema);
	struct json_object *props, *code;

	/* Another kernel's code is in its own language (kernelspec.h). */
	if (!kernelspec_is_ipykernel(cfg) && json_object_object_get_ex(schema, "properties", &props) &&
	    json_object_object_get_ex(props, "code", &code)) {
		char *text = xasprintf("%s code to run (kernel %s). Variables persist between "
				       "calls of this session.",
				       cfg->kernel_language, cfg->kernel);
		json_object_object_add(code, "description", json_object_new_string(text));
		free(text);
	}

	if (!kernelspec_is_ipykernel(cfg)) {
		/* The language and version the kernels report (kernel_info.h). */
		char *lang = kernel_info_text();
		char *text = xasprintf("%s\n\nLanguage: %s (Jupyter kernel %s).", cfg->description,
				       lang ? lang : cfg->kernel_language, cfg->kernel);
		json_object_object_add(tool, "description", json_object_new_string(text));
		free(text);
		free(lang);
	} else if (cfg->tools.n == 0) {
		json_object_object_add(tool, "description", json_object_new_string(cfg->description));
	} else {
		/* Where an agent learns of the domain tools and how to call them. */
		char *text = xasprintf("%s\n\nThis environment has %zu domain tools (Python "
				       "functions). Find them with search_%s_tools, then call them "
				       "here: `from MODULE import NAME`, then `NAME(...)`.",
				       cfg->description, cfg->tools.n, cfg->name);
		json_object_object_add(tool, "description", json_object_new_string(text));
		free(text);
	}
	add_mime_enum(cfg, schema);
	json_object_object_add(tool, "inputSchema", schema);
	json_object_object_add(tool, "outputSchema",
			       result_output_schema(cfg->execution_mode != EXEC_SYNC));
}

/* Fail `tc` with -32602: `mime` is not in allow_mime; name it and the list. */
static void
refuse_mime(struct tool_call *tc, const char *mime)
{
	struct buf list;

	buf_init(&list);
	char **allowed = kernel_env_mime(tc->cfg, NULL);
	for (char **p = allowed; *p; p++) {
		buf_adds(&list, p == allowed ? "" : ", ");
		buf_adds(&list, *p);
	}
	buf_add(&list, "", 1);
	snprintf(tc->error_message, sizeof(tc->error_message),
		 "argument 'allow_mime': \"%.64s\" is not allowed by this server; a call may "
		 "only narrow its list: %s",
		 mime, list.data);
	tc->error_code = -32602;
	strv_free(allowed);
	buf_free(&list);
}

/*
 * The allow_mime argument into *out: the MIME types asked for (owned,
 * NULL-terminated; NULL when absent). 0, or -1 after tool_bad_params when
 * it is not an array of strings or names a type allow_mime does not hold
 * (a call narrows the configured list, never widens it).
 */
static int
arg_allow_mime(struct tool_call *tc, char ***out)
{
	struct json_object *v;

	*out = NULL;
	if (!json_object_object_get_ex(tc->args, "allow_mime", &v))
		return 0;
	if (!json_object_is_type(v, json_type_array)) {
		tool_bad_params(tc, "argument 'allow_mime' must be an array of MIME types");
		return -1;
	}
	size_t n = json_object_array_length(v);
	char **asked = xcalloc(n + 1, sizeof(*asked));
	for (size_t i = 0; i < n; i++) {
		struct json_object *item = json_object_array_get_idx(v, i);
		const char *s = json_object_get_string(item);
		if (!json_object_is_type(item, json_type_string) ||
		    strlen(s) != (size_t)json_object_get_string_len(item)) {
			tool_bad_params(tc, "argument 'allow_mime' must be an array of MIME types");
			strv_free(asked);
			return -1;
		}
		if (!kernel_env_mime_allowed(tc->cfg, s)) {
			refuse_mime(tc, s);
			strv_free(asked);
			return -1;
		}
		asked[i] = xstrdup(s);
	}
	*out = asked;
	return 0;
}

/* The answer for a job that runs on in the background. Caller owns. */
static struct json_object *
job_handle(const struct config *cfg, struct job *j, int promoted)
{
	struct json_object *o = json_object_new_object();
	char poll_tool[128], msg[300];

	j->kept = 1; /* the client will poll it: keep it for job_retention_s */
	snprintf(poll_tool, sizeof(poll_tool), "%s_check_job", cfg->name);
	snprintf(msg, sizeof(msg),
		 "The code %s in the background. Call %s with this job_id for its output and "
		 "result.",
		 promoted ? "is still running, now" : "runs", poll_tool);
	json_object_object_add(o, "job_id", json_object_new_string(j->id));
	json_object_object_add(o, "session_id", json_object_new_string(j->session_id));
	json_object_object_add(o, "poll_tool", json_object_new_string(poll_tool));
	json_object_object_add(o, "message", json_object_new_string(msg));
	if (promoted)
		json_object_object_add(o, "promoted", json_object_new_boolean(1));
	return tool_result(o, NULL, 0);
}

/* The timings of ended job `j`, answered now, into `r` (a CallToolResult)
 * and for the request's log line. */
static void
add_timings(struct tool_call *tc, struct json_object *r, const struct job *j)
{
	struct json_object *t = job_timings(j, clock_mono());

	tc->timed = 1;
	tc->queued_ms = json_object_get_double(json_object_object_get(t, "queued_ms"));
	tc->kernel_ms = json_object_get_double(json_object_object_get(t, "kernel_ms"));
	json_object_object_add(json_object_object_get(r, "structuredContent"), "timings", t);
}

int
tool_preprocess(struct tool_call *tc, struct session *target, const char *code, char **out,
		struct json_object **failed)
{
	char why[4096], id[SESSION_ID_LEN + 1], identity[sizeof(target->identity)];
	int timeout_s = tc->cfg->preprocess_timeout_s;
	long max_bytes = tc->cfg->preprocess_max_bytes;

	*out = NULL;
	if (tc->cfg->preprocess_command[0] == '\0')
		return 0;
	memcpy(id, target->id, sizeof(id));
	memcpy(identity, target->identity, sizeof(identity));
	/* The main loop reads the parent's answer under pool_lock: let it. Our
	 * reference keeps `target`, and `code` is the request's. */
	pool_unlock();
	/* The parent knows the session by its digits (PRIV_SESSION_LEN), not its tag. */
	*out = parent_link_preprocess(handle_random(id), identity, code, timeout_s, max_bytes, why,
				      sizeof(why));
	pool_lock();
	if (*out)
		return 0;
	*failed = result_to_tool(result_failed("PreprocessError", why), id);
	return -1;
}

/*
 * The handle a later call passes back, beside session_id: on the
 * 2026-07-28 path it is the only name of the kernel's session, so there
 * the text says it too.
 */
static void
add_execution_session_id(struct tool_call *tc, struct json_object *r)
{
	struct json_object *sc, *id;

	if (r == NULL || !json_object_object_get_ex(r, "structuredContent", &sc) ||
	    !json_object_object_get_ex(sc, "session_id", &id))
		return;
	json_object_object_add(sc, "execution_session_id", json_object_get(id));
	if (tc->session->transient)
		tool_note_session(r, json_object_get_string(id), tc->new_session);
}

/*
 * Tell the first result of session `s` which of the caller's sessions
 * session_create closed to make room for it, once.
 */
static void
add_reclaimed(struct session *s, struct json_object *r)
{
	struct json_object *sc;
	char line[300];

	if (s->reclaimed[0] == '\0' || r == NULL ||
	    !json_object_object_get_ex(r, "structuredContent", &sc))
		return;
	json_object_object_add(sc, "reclaimed_session_id", json_object_new_string(s->reclaimed));
	snprintf(line, sizeof(line),
		 "[codeexecd: your least recently used idle session %s was closed to make room "
		 "for this one (%s)]",
		 s->reclaimed, s->reclaimed_by);
	tool_note(r, line);
	s->reclaimed[0] = '\0';
}

/*
 * 2026-07-28: the InputRequiredResult of job j's prompt (named by its
 * call's input_id): one elicitation, and the requestState a retry names
 * the job by ("<owner>:<job id>"). Caller owns it.
 */
static struct json_object *
input_required(struct job *j)
{
	struct json_object *r = json_object_new_object();
	struct json_object *reqs = json_object_new_object();
	struct json_object *req = json_object_new_object();
	char state[2 * SESSION_ID_LEN + 2];

	json_object_object_add(req, "method", json_object_new_string("elicitation/create"));
	json_object_object_add(req, "params", mcp_elicit_params(j->call.input_prompt));
	json_object_object_add(reqs, j->call.input_id, req);
	snprintf(state, sizeof(state), "%s:%s", j->owner, j->id);
	json_object_object_add(r, "resultType", json_object_new_string("input_required"));
	json_object_object_add(r, "inputRequests", reqs);
	json_object_object_add(r, "requestState", json_object_new_string(state));
	return r;
}

/*
 * What running job j answers now: its next prompt as an InputRequiredResult
 * (the one asked already, if the retry did not answer it), or its result
 * once it ends. Waits for one of them. Lock held.
 */
static struct json_object *
input_round(struct tool_call *tc, struct job *j)
{
	for (;;) {
		if (j->status != JOB_RUNNING) {
			struct json_object *r =
				result_to_tool(json_object_get(j->call.result), j->session_id);
			add_timings(tc, r, j);
			return r;
		}
		if (j->call.input_prompt) {
			if (j->call.input_id[0] == '\0')
				progress_input_id(&j->call);
			return input_required(j);
		}
		job_wait(j, -1, 1);
	}
}

/*
 * A 2026-07-28 retry of a call that asked for input: its requestState
 * names the job, its inputResponses answer the prompt it was given; then
 * the next round.
 */
static struct json_object *
input_retry(struct tool_call *tc)
{
	char owner[SESSION_ID_LEN + 1];
	const char *st = tc->request_state, *colon = strchr(st, ':');
	struct job *j = NULL;

	if (colon && (size_t)(colon - st) <= SESSION_ID_LEN) {
		memcpy(owner, st, (size_t)(colon - st));
		owner[colon - st] = '\0';
		j = job_get(colon + 1, owner);
	}
	if (j && strcmp(j->identity, tc->session->identity) != 0) {
		job_unref(j);
		j = NULL;
	}
	if (j == NULL)
		return tool_bad_params(tc, "requestState names no execution of yours");
	if (tc->input_key && j->call.input_prompt && j->call.input_id[0] &&
	    strcmp(tc->input_key, j->call.input_id) == 0)
		pool_input_answer(tc->input_key, tc->input_how, tc->input_text);
	struct json_object *r = input_round(tc, j);
	job_unref(j);
	add_execution_session_id(tc, r);
	return r;
}

static struct json_object *
execute_call(struct tool_call *tc)
{
	const char *code = tool_arg_string(tc, "code");
	double seconds;
	double wait_s = -1;
	struct json_object *r;

	if (code == NULL)
		return tool_bad_params(tc, "argument 'code' (a string) is required");
	if (tc->request_state)
		return input_retry(tc);
	if ((seconds = tool_arg_timeout(tc)) < 0)
		return NULL;
	char **allow_mime;
	if (arg_allow_mime(tc, &allow_mime) == -1)
		return NULL;
	struct session *target = tool_session_or_new(tc, "execution_session_id");
	if (target == NULL) {
		strv_free(allow_mime);
		return NULL;
	}
	/* Without pool_lock (tool_preprocess lets it go): the command may take
	 * preprocess_timeout_s. */
	char *preprocessed;
	if (tool_preprocess(tc, target, code, &preprocessed, &r) == -1) {
		session_put(target);
		strv_free(allow_mime);
		return r;
	}
	if (preprocessed)
		code = preprocessed;
	/* This thread runs it (`code` is borrowed from the request, or ours,
	 * meanwhile: a job backgrounded copies it). */
	/* Without an MCP session, the execution session is what sees its jobs. */
	const char *owner = tc->session->transient ? target->id : tc->session->id;
	struct job *j = job_new(target, owner, code, seconds, 0, tc->request_id);
	j->call.allow_mime = allow_mime; /* the call's now: sent with its EXECUTE */
	j->arrived = tc->arrived;
	if (tc->progress)
		j->call.stream = CALL_STREAM_ON; /* progress shows output as it comes */

	switch (tc->cfg->execution_mode) {
	case EXEC_ASYNC_ONLY: wait_s = 0; break;
	case EXEC_ADAPTIVE: wait_s = tc->cfg->promotion_threshold_s; break;
	case EXEC_SYNC: wait_s = -1; break;
	}
	/* A job has no client to ask: its input() fails as without one. */
	j->call.allow_stdin = (tc->elicit || tc->input_required) && wait_s != 0 && !tc->tasks;
	int done = wait_s == 0 ? 0 : progress_wait(tc, j, wait_s);
	if (!done || done == PROGRESS_INPUT)
		job_background(j); /* a thread of its own only now */
	if (done == PROGRESS_INPUT) {
		j->kept = 1; /* the retry finds it by requestState, even once it ended */
		r = input_required(j); /* its kernel waits for the retry */
	} else if (j->cancel_requested) {
		tc->no_response = 1;
		r = NULL;
	} else if (!done && tc->tasks) {
		r = tasks_created(tc->cfg, j); /* tasks/get reaches it */
	} else if (!done) {
		r = job_handle(tc->cfg, j, wait_s > 0);
	} else {
		r = result_to_tool(json_object_get(j->call.result), j->session_id);
		add_timings(tc, r, j);
	}
	job_unref(j);
	free(preprocessed);
	add_reclaimed(target, r); /* our reference kept target */
	add_execution_session_id(tc, r);
	session_put(target);
	return r;
}

/* Seed 003's run_cell(code_str, timeout_s=...) names. */
static const struct tool_alias execute_aliases[] = {
	{"code_str", "code"},
	{"timeout_s", "timeout"},
	{NULL, NULL},
};

const struct tool tool_execute = {
	.name_format = "execute_{name}_code",
	.describe = execute_describe,
	.aliases = execute_aliases,
	.call = execute_call,
	.session_arg = "execution_session_id",
};
