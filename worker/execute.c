/* execute.c - see execute.h. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "execute.h"
#include "xmalloc.h"

/*
 * Limits that keep a RESULT under IPC_MAX_PAYLOAD (64 MiB) for ordinary
 * output: beyond them output is dropped and the result says so. Text that
 * JSON escaping inflates past the frame limit (control characters) is
 * answered with OutputTooLarge by main.c.
 */
#define TEXT_CAP (12u * 1024 * 1024)
#define RICH_CAP (24u * 1024 * 1024)

#define RESTART_NOTE "[codeexecd] the kernel was restarted; variables from earlier calls are lost\n"
#define TRUNCATED_NOTE "\n[codeexecd] output truncated: the execution produced more than the limit\n"
#define LOST_NOTE "\n[codeexecd] some output was lost: the kernel sent a message over the size limit or its output channel failed\n"

struct exec *
exec_new(uint32_t id, const char *code, double timeout_s)
{
	struct exec *ex = xcalloc(1, sizeof(*ex));

	ex->id = id;
	ex->code = xstrdup(code);
	ex->timeout_s = timeout_s > 0 ? timeout_s : 0;
	buf_init(&ex->out);
	buf_init(&ex->err);
	ex->rich = json_object_new_array();
	return ex;
}

void
exec_free(struct exec **exp)
{
	struct exec *ex = *exp;

	if (ex == NULL)
		return;
	free(ex->code);
	free(ex->reply_status);
	json_object_put(ex->reply_content);
	buf_free(&ex->out);
	buf_free(&ex->err);
	json_object_put(ex->rich);
	json_object_put(ex->error);
	free(ex);
	*exp = NULL;
}

struct json_object *
exec_request_content(const struct exec *ex)
{
	struct json_object *c = json_object_new_object();

	json_object_object_add(c, "code", json_object_new_string(ex->code));
	json_object_object_add(c, "silent", json_object_new_boolean(ex->silent));
	json_object_object_add(c, "store_history", json_object_new_boolean(!ex->silent));
	json_object_object_add(c, "user_expressions", json_object_new_object());
	json_object_object_add(c, "allow_stdin", json_object_new_boolean(0));
	json_object_object_add(c, "stop_on_error", json_object_new_boolean(1));
	return c;
}

void
exec_started(struct exec *ex, const char *msg_id, double now)
{
	snprintf(ex->msg_id, sizeof(ex->msg_id), "%s", msg_id);
	ex->t_start = now;
	ex->deadline = ex->timeout_s > 0 ? now + ex->timeout_s : 0;
}

/* Content member `key` as a string, or "" if absent or not a string. */
static const char *
content_str(const struct jupyter_msg *m, const char *key)
{
	struct json_object *o;

	if (!json_object_object_get_ex(m->content, key, &o) ||
	    !json_object_is_type(o, json_type_string))
		return "";
	return json_object_get_string(o);
}

/* Forget every output collected so far (clear_output); the error stays. */
static void
clear_outputs(struct exec *ex)
{
	buf_free(&ex->out);
	buf_free(&ex->err);
	json_object_put(ex->rich);
	ex->rich = json_object_new_array();
	ex->rich_bytes = 0;
	ex->clear_pending = 0;
}

/* A new output arrives: honour a pending clear_output(wait=True) first. */
static void
before_output(struct exec *ex)
{
	if (ex->clear_pending)
		clear_outputs(ex);
}

static void
add_stream(struct exec *ex, const struct jupyter_msg *m)
{
	const char *name = content_str(m, "name");
	const char *text = content_str(m, "text");
	struct buf *b = strcmp(name, "stderr") == 0 ? &ex->err : &ex->out;
	size_t len = strlen(text);

	if (b->len + len > TEXT_CAP) {
		/* Keep what fits, cut at a character boundary of the UTF-8 text. */
		len = b->len < TEXT_CAP ? TEXT_CAP - b->len : 0;
		while (len > 0 && ((unsigned char)text[len] & 0xc0) == 0x80)
			len--;
		ex->truncated = 1;
	}
	buf_add(b, text, len);
}

/* Bytes `v` will take in the result, roughly. */
static size_t
value_size(struct json_object *v)
{
	if (json_object_is_type(v, json_type_string))
		return (size_t)json_object_get_string_len(v);
	return strlen(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

/* 1 for MIME types whose data Jupyter carries as base64 text. */
static int
is_base64_mime(const char *mime)
{
	return strncmp(mime, "image/", 6) == 0 && strcmp(mime, "image/svg+xml") != 0;
}

/*
 * Base64 `v` without the line breaks IPython puts in (b2a_base64 ends with
 * "\n"): strict decoders refuse whitespace. Caller owns the result.
 */
static struct json_object *
base64_clean(struct json_object *v)
{
	const char *s = json_object_get_string(v);
	size_t len = (size_t)json_object_get_string_len(v);

	if (strcspn(s, " \t\r\n") == len)
		return json_object_get(v);
	char *out = xmalloc(len + 1);
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		if (!strchr(" \t\r\n", s[i]))
			out[n++] = s[i];
	struct json_object *o = json_object_new_string_len(out, (int)n);
	free(out);
	return o;
}

/* Append {mime_type, data} for `mime` if `data` has it and it fits. */
static void
add_mime(struct exec *ex, struct json_object *data, const char *mime)
{
	struct json_object *v, *entry;

	if (!json_object_object_get_ex(data, mime, &v))
		return;
	size_t size = value_size(v);
	if (ex->rich_bytes + size > RICH_CAP) {
		ex->truncated = 1;
		return;
	}
	ex->rich_bytes += size;
	entry = json_object_new_object();
	json_object_object_add(entry, "mime_type", json_object_new_string(mime));
	if (is_base64_mime(mime) && json_object_is_type(v, json_type_string))
		v = base64_clean(v);
	else
		v = json_object_get(v);
	json_object_object_add(entry, "data", v);
	json_object_array_add(ex->rich, entry);
}

/* execute_result and display_data: every allowed MIME type, in allow_mime order. */
static void
add_rich(struct exec *ex, const struct jupyter_msg *m, struct json_object *allow_mime)
{
	struct json_object *data;

	if (!json_object_object_get_ex(m->content, "data", &data) ||
	    !json_object_is_type(data, json_type_object))
		return;
	if (allow_mime == NULL) {
		json_object_object_foreach(data, mime, v)
		{
			(void)v;
			add_mime(ex, data, mime);
		}
		return;
	}
	for (size_t i = 0; i < json_object_array_length(allow_mime); i++) {
		struct json_object *s = json_object_array_get_idx(allow_mime, i);
		if (json_object_is_type(s, json_type_string))
			add_mime(ex, data, json_object_get_string(s));
	}
}

/* The traceback lines joined with "\n", without ANSI escapes. Caller owns it. */
static struct json_object *
traceback_text(struct json_object *content)
{
	struct json_object *lines;
	struct buf b;

	buf_init(&b);
	if (json_object_object_get_ex(content, "traceback", &lines) &&
	    json_object_is_type(lines, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(lines); i++) {
			if (i > 0)
				buf_add(&b, "\n", 1);
			buf_adds(&b, json_object_get_string(json_object_array_get_idx(lines, i)));
		}
	}
	char *text = buf_release(&b);
	size_t len = jupyter_strip_ansi(text);
	struct json_object *o = json_object_new_string_len(text, (int)len);
	free(text);
	return o;
}

/* Set the error from an error message's (or error reply's) content. */
static void
set_error_from(struct exec *ex, struct json_object *content)
{
	struct json_object *e = json_object_new_object();
	struct jupyter_msg m = {.content = content};

	json_object_object_add(e, "type", json_object_new_string(content_str(&m, "ename")));
	json_object_object_add(e, "message", json_object_new_string(content_str(&m, "evalue")));
	json_object_object_add(e, "traceback", traceback_text(content));
	json_object_put(ex->error);
	ex->error = e;
}

enum exec_event
exec_on_iopub(struct exec *ex, const struct jupyter_msg *m, struct json_object *allow_mime)
{
	const char *t = m->msg_type;

	if (ex->msg_id[0] == '\0' || m->parent_msg_id == NULL ||
	    strcmp(m->parent_msg_id, ex->msg_id) != 0)
		return EXEC_IGNORED;
	ex->quiet_since = clock_mono();
	if (strcmp(t, "status") == 0) {
		if (strcmp(content_str(m, "execution_state"), "idle") == 0)
			ex->got_idle = 1;
		return EXEC_COLLECTED;
	}
	if (strcmp(t, "clear_output") == 0) {
		struct json_object *w;
		if (json_object_object_get_ex(m->content, "wait", &w) && json_object_get_boolean(w))
			ex->clear_pending = 1;
		else
			clear_outputs(ex);
		return EXEC_COLLECTED;
	}
	if (strcmp(t, "stream") == 0) {
		before_output(ex);
		add_stream(ex, m);
		return EXEC_STREAM;
	}
	if (strcmp(t, "execute_result") == 0 || strcmp(t, "display_data") == 0) {
		before_output(ex);
		add_rich(ex, m, allow_mime);
		return EXEC_COLLECTED;
	}
	if (strcmp(t, "error") == 0) {
		before_output(ex);
		set_error_from(ex, m->content);
		return EXEC_COLLECTED;
	}
	return EXEC_IGNORED;
}

int
exec_on_shell(struct exec *ex, const struct jupyter_msg *m)
{
	if (strcmp(m->msg_type, "execute_reply") != 0 || ex->msg_id[0] == '\0' ||
	    m->parent_msg_id == NULL || strcmp(m->parent_msg_id, ex->msg_id) != 0)
		return 0;
	ex->got_reply = 1;
	ex->quiet_since = clock_mono();
	free(ex->reply_status);
	ex->reply_status = xstrdup(content_str(m, "status"));
	json_object_put(ex->reply_content);
	ex->reply_content = json_object_get(m->content);
	return 1;
}

int
exec_done(const struct exec *ex)
{
	return ex->got_reply && ex->got_idle;
}

double
exec_idle_deadline(const struct exec *ex)
{
	if (!ex->got_reply || ex->got_idle)
		return 0;
	return ex->quiet_since + EXEC_IDLE_WAIT_S;
}

void
exec_set_error(struct exec *ex, const char *type, const char *message)
{
	struct json_object *tb = NULL;

	if (ex->error)
		json_object_object_get_ex(ex->error, "traceback", &tb);
	struct json_object *e = json_object_new_object();
	json_object_object_add(e, "type", json_object_new_string(type));
	json_object_object_add(e, "message", json_object_new_string(message));
	tb = tb ? json_object_get(tb) : json_object_new_string("");
	json_object_object_add(e, "traceback", tb);
	json_object_put(ex->error);
	ex->error = e;
}

/* An error the reply reports but iopub did not (or an aborted run). */
static void
error_from_reply(struct exec *ex)
{
	if (ex->error || ex->reply_status == NULL)
		return;
	if (strcmp(ex->reply_status, "error") == 0)
		set_error_from(ex, ex->reply_content);
	else if (strcmp(ex->reply_status, "aborted") == 0)
		exec_set_error(ex, "Aborted", "the kernel aborted the execution");
}

/* The result's stderr: restart note, collected text, truncation note. */
static struct json_object *
stderr_text(struct exec *ex)
{
	struct buf b;

	buf_init(&b);
	if (ex->kernel_restarted)
		buf_adds(&b, RESTART_NOTE);
	buf_add(&b, ex->err.data ? ex->err.data : "", ex->err.len);
	if (ex->truncated)
		buf_adds(&b, TRUNCATED_NOTE);
	if (ex->output_lost)
		buf_adds(&b, LOST_NOTE);
	struct json_object *o = json_object_new_string_len(b.data ? b.data : "", (int)b.len);
	buf_free(&b);
	return o;
}

struct json_object *
exec_result(struct exec *ex, double now)
{
	struct json_object *r = json_object_new_object();

	error_from_reply(ex);
	int ok = ex->got_reply && ex->reply_status && strcmp(ex->reply_status, "ok") == 0 &&
		 ex->error == NULL;
	json_object_object_add(r, "success", json_object_new_boolean(ok));
	json_object_object_add(r, "stdout", json_object_new_string_len(
						    ex->out.data ? ex->out.data : "", (int)ex->out.len));
	json_object_object_add(r, "stderr", stderr_text(ex));
	json_object_object_add(r, "rich_outputs", ex->rich);
	ex->rich = json_object_new_array();
	json_object_object_add(r, "error", ex->error);
	ex->error = NULL;
	json_object_object_add(r, "execution_time",
			       json_object_new_double(ex->t_start > 0 ? now - ex->t_start : 0));
	json_object_object_add(r, "kernel_restarted",
			       json_object_new_boolean(ex->kernel_restarted));
	return r;
}

struct json_object *
exec_error_result(const char *type, const char *message)
{
	struct exec *ex = exec_new(0, "", 0);

	exec_set_error(ex, type, message);
	struct json_object *r = exec_result(ex, 0);
	exec_free(&ex);
	return r;
}
