/* tool_parallel_execute.c - {name}_parallel_execute: fan one piece of code out over inputs. */
#include "autoconf.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "config.h"
#include "kernelspec.h"
#include "pool.h"
#include "session.h"
#include "tools.h"

static void
parallel_describe(const struct config *cfg, struct json_object *tool)
{
	json_object_object_add(
		tool, "description",
		json_object_new_string(
			"Run the same code once per input, each in a fresh kernel with the "
			"input's keys bound as variables, several at once (kernels of batches "
			"count against the server's session limit). Returns a batch_id; poll it "
			"with the check_batch tool for each item's result_variable, stop it with "
			"cancel_batch. The batch ends with this session. With from_session, "
			"every item starts from that session's state instead (a fresh "
			"checkpoint of its variables and a copy of its working directory), "
			"the session itself unchanged."));
	json_object_object_add(
		tool, "inputSchema",
		tool_schema("{\"type\":\"object\",\"properties\":{"
			    "\"code\":{\"type\":\"string\"},"
			    "\"inputs\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
			    "\"timeout\":{\"type\":\"number\",\"exclusiveMinimum\":0},"
			    "\"result_variable\":{\"type\":\"string\",\"description\":"
			    "\"Variable whose value (as JSON) is each item's result; "
			    "default 'result'.\"},"
			    "\"from_session\":{\"type\":\"string\",\"description\":"
			    "\"An execution session id of yours: each item starts from its "
			    "state.\"}},"
			    "\"required\":[\"code\",\"inputs\"]}"));
}

/* Nonzero if `s` is a plain Python identifier (the result is read by name). */
static int
is_identifier(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

/* Nonzero if every input is an object whose keys are identifiers. */
static int
inputs_valid(struct json_object *inputs)
{
	for (size_t i = 0; i < json_object_array_length(inputs); i++) {
		struct json_object *o = json_object_array_get_idx(inputs, i);
		if (!json_object_is_type(o, json_type_object))
			return 0;
		json_object_object_foreach(o, key, val) {
			(void)val;
			if (!is_identifier(key))
				return 0;
		}
	}
	return 1;
}

/*
 * from_session's directory, its state checkpointed now (a hibernated one
 * has its latest): 1 with *dir and *cp (its checkpoint's answer, or NULL;
 * caller owns), 0 when the call names none, -1 with the call's answer in
 * *failed or its error set.
 */
static int
from_session(struct tool_call *tc, uint32_t *dir, struct json_object **cp,
	     struct json_object **failed)
{
	struct json_object *v;

	*dir = 0;
	*cp = *failed = NULL;
	if (!json_object_object_get_ex(tc->args, "from_session", &v))
		return 0;
	if (tool_arg_string(tc, "from_session") == NULL) {
		tool_bad_params(tc, "argument 'from_session' must be an execution session id");
		return -1;
	}
	const char *why = !kernelspec_is_ipykernel(tc->cfg)
				  ? "from_session needs a checkpoint of the session's variables, "
				    "which only ipykernel's sessions have"
			  : tc->cfg->fork_max_bytes == 0
				  ? "from_session copies the session's directory, and "
				    "fork_max_bytes is 0: forks are off"
				  : NULL;
	if (why) {
		tool_refuse(tc, "%s", why);
		return -1;
	}
	struct session *src = tool_session_arg(tc, "from_session");
	if (src == NULL)
		return -1;
	if (src->worker != NULL || src->kept_dir == 0)
		*cp = tool_checkpoint_cell(tc, src, "save", "from_session", failed);
	if (*failed == NULL)
		*dir = src->worker ? src->worker->dir_id : src->kept_dir;
	session_put(src);
	return *failed ? -1 : 1;
}

/*
 * The call's code, inputs (borrowed from its arguments), result_variable
 * (default "result") and timeout: 0, or -1 with the call's error set.
 */
static int
parallel_args(struct tool_call *tc, const char **code, struct json_object **inputs,
	      const char **var, double *seconds)
{
	*code = tool_arg_string(tc, "code");
	*var = tool_arg_string(tc, "result_variable");
	if (*code == NULL) {
		tool_bad_params(tc, "argument 'code' (a string) is required");
		return -1;
	}
	if (!json_object_object_get_ex(tc->args, "inputs", inputs) ||
	    !json_object_is_type(*inputs, json_type_array) || !inputs_valid(*inputs)) {
		tool_bad_params(tc, "argument 'inputs' must be an array of objects whose keys are "
				    "Python identifiers");
		return -1;
	}
	size_t n = json_object_array_length(*inputs);
	if (n > (size_t)tc->cfg->parallel_max_inputs) {
		char msg[200];
		snprintf(msg, sizeof(msg),
			 "argument 'inputs' has %zu inputs; a batch may have at most %d "
			 "(parallel_max_inputs): split it into smaller batches",
			 n, tc->cfg->parallel_max_inputs);
		tool_bad_params(tc, msg);
		return -1;
	}
	if (*var == NULL)
		*var = "result";
	if (!is_identifier(*var)) {
		tool_bad_params(tc, "argument 'result_variable' must be a Python identifier");
		return -1;
	}
	return (*seconds = tool_arg_timeout(tc)) < 0 ? -1 : 0;
}

static struct json_object *
parallel_call(struct tool_call *tc)
{
	const char *code, *var;
	struct json_object *inputs;
	double seconds;

	if (parallel_args(tc, &code, &inputs, &var, &seconds) == -1)
		return NULL;
	size_t n = json_object_array_length(inputs);
	int limit = tc->cfg->parallel_max_concurrency;
	if (limit == 0 || limit > tc->cfg->pool_max_sessions)
		limit = tc->cfg->pool_max_sessions;

	/* Once for the batch: every item runs the same code, from the same state. */
	char *preprocessed;
	struct json_object *failed, *cp;
	uint32_t dir;
	if (tool_preprocess(tc, tc->session, code, &preprocessed, &failed) == -1)
		return failed;
	int from = from_session(tc, &dir, &cp, &failed);
	if (from == -1) {
		free(preprocessed);
		return failed;
	}
	const char *run = preprocessed ? preprocessed : code;
	/* Every item loads the checkpoint the answer names, whatever the
	 * source does meanwhile (a hibernated source's: its latest). */
	struct json_object *cid = from && cp ? json_object_object_get(cp, "checkpoint") : NULL;
	const char *id = batch_start(tc->cfg, tc->session->id, tc->session->identity, run,
				     inputs, seconds, var, limit, dir,
				     cid ? json_object_get_string(cid) : NULL);
	free(preprocessed);
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "batch_id", json_object_new_string(id));
	json_object_object_add(o, "total", json_object_new_int64((int64_t)n));
	json_object_object_add(o, "concurrency", json_object_new_int(limit));
	if (from) {
		const char *from_id = tool_arg_string(tc, "from_session");
		json_object_object_add(o, "from_session", json_object_new_string(from_id));
		json_object_object_add(o, "checkpoint", json_object_get(cid));
		json_object_put(cp);
	}
	return tool_result(o, NULL, 0);
}

const struct tool tool_parallel_execute = {
	.name_format = "{name}_parallel_execute",
	.describe = parallel_describe,
	.in_session = 1,
	.call = parallel_call,
};
