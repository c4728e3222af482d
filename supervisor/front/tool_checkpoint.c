/*
 * tool_checkpoint.c - {name}_checkpoint and {name}_restore: a Python
 * kernel's namespace saved by the kernel itself with dill, into its own
 * session directory, and put back.
 *
 * Both run as a silent cell, so nothing shows in In, Out, _, the history
 * or the execution count, and the function they define is deleted again.
 * Each name is saved on its own: one that cannot be (an open file, a
 * socket, a thread, a generator, an object pickling refuses) is skipped
 * with its reason and the rest are kept (checkpoint_cell.h). A session
 * loads only its own directory's checkpoints, which only kernels of its
 * identity wrote.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "checkpoint_cell.h"
#include "config.h"
#include "job.h"
#include "kernelspec.h"
#include "pool.h"
#include "result.h"
#include "session.h"
#include "tools.h"
#include "xmalloc.h"

/* Longest label and checkpoint id accepted. */
#define LABEL_MAX 200
#define ID_MAX 64

/* The line an agent reads of what the cell printed, `o`. Caller owns. */
static char *
answer_text(const char *op, struct json_object *o)
{
	struct json_object *skipped = json_object_object_get(o, "skipped");
	struct buf b;

	buf_init(&b);
	if (strcmp(op, "save") == 0)
		buf_printf(&b, "checkpoint %s: %zu names saved (%lld bytes)",
			   json_object_get_string(json_object_object_get(o, "checkpoint")),
			   json_object_array_length(json_object_object_get(o, "names")),
			   (long long)json_object_get_int64(json_object_object_get(o, "size_bytes")));
	else
		buf_printf(&b, "restored checkpoint %s, taken at %s: %zu names",
			   json_object_get_string(json_object_object_get(o, "checkpoint")),
			   json_object_get_string(json_object_object_get(o, "taken_at")),
			   json_object_array_length(json_object_object_get(o, "names")));
	if (json_object_array_length(skipped)) {
		buf_adds(&b, "; skipped: ");
		result_name_reasons(&b, skipped);
	}
	return buf_release(&b);
}

struct json_object *
tool_checkpoint_cell(struct tool_call *tc, struct session *s, const char *op, const char *arg,
		     struct json_object **r)
{
	struct json_object *failed = NULL, *o, *err;
	char *workdir = tool_session_workdir(tc, s, &failed);

	*r = NULL;
	if (workdir == NULL) {
		*r = result_to_tool(failed, s->id);
		return NULL;
	}
	char *code = checkpoint_cell(tc->cfg, workdir, op, arg);
	struct job *j = job_new(s, tc->session->id, code,
				tc->cfg->checkpoint_max_seconds + CHECKPOINT_CELL_SLACK_S, 1, NULL);
	job_run(j, -1, 0);
	o = j->status == JOB_COMPLETED ? checkpoint_answer(j->call.result, op) : NULL;
	if (o == NULL && j->status != JOB_COMPLETED && j->call.result) {
		/* The cell itself failed (a timeout, a dead kernel): its result says how. */
		*r = result_to_tool(json_object_get(j->call.result), s->id);
	} else if (o == NULL) {
		*r = result_to_tool(result_failed("CheckpointFailed",
						  "the kernel's answer was not understood (did "
						  "code in it replace print or json?)"),
				    s->id);
	} else if (json_object_object_get_ex(o, "error", &err)) {
		*r = result_to_tool(
			result_failed(json_object_get_string(json_object_object_get(err, "type")),
				      json_object_get_string(json_object_object_get(err, "message"))),
			s->id);
		json_object_put(o);
		o = NULL;
	} else if (strcmp(op, "save") == 0) {
		s->checkpoints++; /* a kernel that replaces this one loads it */
	}
	job_unref(j);
	free(code);
	free(workdir);
	return o;
}

/*
 * Run the cell for `op` in the session the call names; its answer, or
 * NULL with the call's error set.
 */
static struct json_object *
checkpoint_run(struct tool_call *tc, const char *op, const char *arg)
{
	struct json_object *r, *o;
	struct session *s = tool_session_arg(tc, "session_id");

	if (s == NULL)
		return NULL;
	o = tool_checkpoint_cell(tc, s, op, arg, &r);
	if (o != NULL) {
		char *text = answer_text(op, o);
		json_object_object_add(o, "success", json_object_new_boolean(1));
		r = tool_result(o, text, 0);
		free(text);
	}
	session_put(s);
	return r;
}

/* A string argument of at most `max` bytes, each allowed by `ok`; "" if absent. */
static const char *
checked_arg(struct tool_call *tc, const char *key, size_t max, int (*ok)(int c), int *bad)
{
	struct json_object *v;
	const char *s = tool_arg_string(tc, key);

	*bad = 0;
	if (s == NULL) {
		*bad = json_object_object_get_ex(tc->args, key, &v) && v != NULL;
		return NULL;
	}
	*bad = strlen(s) == 0 || strlen(s) > max;
	for (const char *p = s; !*bad && *p; p++)
		*bad = !ok((unsigned char)*p);
	return s;
}

static int
label_char(int c)
{
	return c >= 0x20 && c != 0x7f;
}

const char *
tool_label_arg(struct tool_call *tc, int *bad)
{
	const char *label = checked_arg(tc, "label", LABEL_MAX, label_char, bad);

	if (*bad)
		tool_bad_params(tc, "argument 'label': a string of 1 to 200 printable characters");
	return label;
}

static int
id_char(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '-';
}

static void
checkpoint_describe(const struct config *cfg, struct json_object *tool)
{
	(void)cfg;
	json_object_object_add(
		tool, "description",
		json_object_new_string("Save the session's Python variables, functions and "
				       "classes (imported modules by reference) as a checkpoint "
				       "in its working directory, to go back to with restore. "
				       "Names that cannot be saved (open files, sockets, threads, "
				       "generators) are skipped and listed with the reason."));
	json_object_object_add(
		tool, "inputSchema",
		tool_schema("{\"type\":\"object\",\"properties\":{"
			    "\"label\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200,"
			    "\"description\":\"A note kept with the checkpoint.\"},"
			    "\"session_id\":{\"type\":\"string\",\"description\":"
			    "\"Defaults to this connection's own session.\"}}}"));
}

static struct json_object *
checkpoint_call(struct tool_call *tc)
{
	int bad;
	const char *label = tool_label_arg(tc, &bad);

	return bad ? NULL : checkpoint_run(tc, "save", label);
}

static void
restore_describe(const struct config *cfg, struct json_object *tool)
{
	(void)cfg;
	json_object_object_add(
		tool, "description",
		json_object_new_string("Replace the session's Python namespace with a checkpoint "
				       "taken by checkpoint: the given one, or the latest. Names "
				       "defined since are gone; names the checkpoint skipped are "
				       "listed."));
	json_object_object_add(
		tool, "inputSchema",
		tool_schema("{\"type\":\"object\",\"properties\":{"
			    "\"checkpoint_id\":{\"type\":\"string\",\"pattern\":\"^[0-9A-Za-z-]{1,64}$\","
			    "\"description\":\"A checkpoint id; the latest when absent.\"},"
			    "\"session_id\":{\"type\":\"string\",\"description\":"
			    "\"Defaults to this connection's own session.\"}}}"));
}

static struct json_object *
restore_call(struct tool_call *tc)
{
	int bad;
	const char *id = checked_arg(tc, "checkpoint_id", ID_MAX, id_char, &bad);

	if (bad)
		return tool_bad_params(tc, "argument 'checkpoint_id': a checkpoint id (letters, "
					   "digits and '-', at most 64)");
	return checkpoint_run(tc, "load", id);
}

const struct tool tool_checkpoint = {
	.name_format = "{name}_checkpoint",
	.describe = checkpoint_describe,
	/* pip, and dill of a Python namespace: ipykernel only (kernelspec.h). */
	.listed = kernelspec_is_ipykernel,
	.call = checkpoint_call,
	.session_arg = "session_id",
};

const struct tool tool_restore = {
	.name_format = "{name}_restore",
	.describe = restore_describe,
	/* pip, and dill of a Python namespace: ipykernel only (kernelspec.h). */
	.listed = kernelspec_is_ipykernel,
	.call = restore_call,
	.session_arg = "session_id",
};
