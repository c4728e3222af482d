/* execute.c - see execute.h. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "execute.h"
#include "json_member.h"
#include "xmalloc.h"

/* Why messages numbered in sequence went missing. */
#define HWM_WHY                                                                          \
	"the kernel's iopub socket dropped them: its queue (ZeroMQ's high-water mark, 1000 " \
	"messages) overflowed while the kernel or the host was too busy to send them"
#define RESTART_NOTE "[codeexecd] the kernel was restarted; variables from earlier calls are lost\n"

struct exec *
exec_new(uint32_t id, const char *code, double timeout_s, const struct exec_limits *lim)
{
	struct exec *ex = xcalloc(1, sizeof(*ex));

	ex->id = id;
	ex->code = xstrdup(code);
	ex->timeout_s = timeout_s > 0 ? timeout_s : 0;
	if (lim)
		ex->lim = *lim;
	if (ex->lim.output_chars == 0)
		ex->lim.output_chars = EXEC_OUTPUT_LIMIT;
	if (ex->lim.rich_bytes == 0)
		ex->lim.rich_bytes = EXEC_RICH_LIMIT;
	exec_stream_init(&ex->out, "stdout");
	exec_stream_init(&ex->err, "stderr");
	exec_rich_init(&ex->rich);
	ex->rich.inline_max = ex->lim.inline_bytes;
	ex->rich.binary_files = ex->lim.binary_files;
	return ex;
}

void
exec_free(struct exec **exp)
{
	struct exec *ex = *exp;

	if (ex == NULL)
		return;
	free(ex->code);
	strv_free(ex->allow_mime);
	free(ex->reply_status);
	json_object_put(ex->reply_content);
	exec_stream_free(&ex->out);
	exec_stream_free(&ex->err);
	free(ex->lost_reason);
	free(ex->seq_prefix);
	free(ex->seq);
	exec_rich_free(&ex->rich);
	json_object_put(ex->error);
	free(ex);
	*exp = NULL;
}

struct json_object *
exec_request_build(const char *code, int silent, int stop_on_error)
{
	struct json_object *c = json_object_new_object();

	json_object_object_add(c, "code", json_object_new_string(code));
	json_object_object_add(c, "silent", json_object_new_boolean(silent));
	json_object_object_add(c, "store_history", json_object_new_boolean(!silent));
	json_object_object_add(c, "user_expressions", json_object_new_object());
	json_object_object_add(c, "allow_stdin", json_object_new_boolean(0));
	json_object_object_add(c, "stop_on_error", json_object_new_boolean(stop_on_error));
	return c;
}

struct json_object *
exec_request_content(const struct exec *ex)
{
	/*
	 * A session runs one execution at a time, so there is no queue to
	 * abort; with stop_on_error ipykernel would reject the next request
	 * for a moment after an error, and the call waiting its turn would
	 * fail with "Aborted" without running.
	 */
	struct json_object *c = exec_request_build(ex->code, ex->silent, 0);

	json_object_object_add(c, "allow_stdin", json_object_new_boolean(ex->allow_stdin));
	return c;
}

void
exec_started(struct exec *ex, const char *msg_id, double now)
{
	snprintf(ex->msg_id, sizeof(ex->msg_id), "%s", msg_id);
	ex->t_start = now;
	if (ex->timeout_s > 0) {
		ex->deadline = now + ex->timeout_s;
		ex->answer_by = ex->deadline + IPC_EXEC_GRACE_S;
	}
}

/* Forget every output collected so far (clear_output); the error stays. */
static void
clear_outputs(struct exec *ex)
{
	/* Spill files keep what they hold: the next overflow starts a new one. */
	for (struct exec_stream *st = &ex->out; st; st = st == &ex->out ? &ex->err : NULL) {
		exec_stream_free(st);
		exec_stream_init(st, st == &ex->out ? "stdout" : "stderr");
	}
	exec_rich_clear(&ex->rich);
	ex->clear_pending = 0;
}

/* A new output arrives: honour a pending clear_output(wait=True) first. */
static void
before_output(struct exec *ex)
{
	if (ex->clear_pending)
		clear_outputs(ex);
}

/* A stream message: its text goes to stdout or stderr. */
static void
add_stream(struct exec *ex, const struct jupyter_msg *m)
{
	const char *name = json_member_str(m->content, "name");
	const char *text = json_member_str(m->content, "text");

	exec_stream_add(strcmp(name, "stderr") == 0 ? &ex->err : &ex->out, text, strlen(text),
			ex->lim.output_chars, &ex->lim.place, ex->id);
}

void
exec_output_chunk(const struct exec *ex, const struct jupyter_msg *m, struct ipc_output *o)
{
	exec_stream_chunk(json_member_str(m->content, "name"), json_member_str(m->content, "text"),
			  ex->lim.output_chars, o);
}

void
exec_watch(struct exec *ex)
{
	ex->stream = 1;
	ex->out.mirrored = 1;
	ex->err.mirrored = 1;
}

void
exec_streaming(const struct exec *ex, struct ipc_streaming *s)
{
	s->out = exec_stream_so_far(&ex->out);
	s->err = exec_stream_so_far(&ex->err);
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

/*
 * The error's type as ename gives it, but the class name alone where the
 * kernel sends the class's repr (xeus-python: "<class 'ZeroDivisionError'>").
 */
static struct json_object *
error_type(struct json_object *content)
{
	const char *en = json_member_str(content, "ename");
	size_t n = strlen(en);

	if (n > 10 && strncmp(en, "<class '", 8) == 0 && strcmp(en + n - 2, "'>") == 0)
		return json_object_new_string_len(en + 8, (int)(n - 10));
	return json_object_new_string(en);
}

/* Set the error from an error message's (or error reply's) content. */
static void
set_error_from(struct exec *ex, struct json_object *content)
{
	struct json_object *e = json_object_new_object();

	json_object_object_add(e, "type", error_type(content));
	json_object_object_add(e, "message",
			       json_object_new_string(json_member_str(content, "evalue")));
	json_object_object_add(e, "traceback", traceback_text(content));
	json_object_put(ex->error);
	ex->error = e;
}

/*
 * Note the number of message m of the kernel; `ours` if its parent is our
 * request. Messages before our first one, or of another numbering (a
 * subprocess, a kernel that does not number), are not counted.
 */
static void
note_seq(struct exec *ex, const struct jupyter_msg *m, int ours)
{
	struct json_object *id;

	if (!json_object_object_get_ex(m->header, "msg_id", &id))
		return;
	const char *s = json_object_get_string(id);
	const char *us = strrchr(s, '_');
	char *end;
	if (us == NULL || us[1] < '0' || us[1] > '9')
		return;
	unsigned long long n = strtoull(us + 1, &end, 10);
	size_t plen = (size_t)(us + 1 - s);
	if (*end != '\0')
		return;
	if (ex->seq_prefix == NULL) {
		if (!ours)
			return;
		ex->seq_prefix = xstrndup(s, plen);
		ex->seq_min = ex->seq_max = n;
	}
	if (strlen(ex->seq_prefix) != plen || strncmp(ex->seq_prefix, s, plen) != 0)
		return;
	if (ours && n < ex->seq_min)
		ex->seq_min = n;
	if (ours && n > ex->seq_max)
		ex->seq_max = n;
	if (ex->nseq == ex->seq_cap) {
		ex->seq_cap = ex->seq_cap ? ex->seq_cap * 2 : 64;
		ex->seq = xreallocarray(ex->seq, ex->seq_cap, sizeof(*ex->seq));
	}
	ex->seq[ex->nseq++] = n;
}

static int
cmp_seq(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
	return x < y ? -1 : x > y;
}

/*
 * Messages numbered between our status busy and status idle that never
 * came: ZeroMQ's PUB socket in the kernel drops what does not fit its
 * queue (1000 messages) when we read too slowly, without a trace.
 */
static void
check_seq(struct exec *ex)
{
	size_t seen = 0;

	/* An interrupt by message adds a reply on control, which we do not count. */
	if (!ex->got_idle || !ex->got_reply || ex->seq_prefix == NULL || ex->timed_out ||
	    ex->cancelled)
		return;
	qsort(ex->seq, ex->nseq, sizeof(*ex->seq), cmp_seq);
	for (size_t i = 0; i < ex->nseq; i++)
		seen += ex->seq[i] >= ex->seq_min && ex->seq[i] <= ex->seq_max &&
			(i == 0 || ex->seq[i] != ex->seq[i - 1]);
	unsigned long long span = ex->seq_max - ex->seq_min + 1;
	if (span > seen)
		exec_lose_output(ex, (unsigned long)(span - seen), HWM_WHY);
}

enum exec_event
exec_on_iopub(struct exec *ex, const struct jupyter_msg *m, char *const *allow_mime)
{
	const char *t = m->msg_type;
	int ours = ex->msg_id[0] != '\0' && m->parent_msg_id != NULL &&
		   strcmp(m->parent_msg_id, ex->msg_id) == 0;

	if (ex->msg_id[0] != '\0')
		note_seq(ex, m, ours);
	if (!ours && ex->probe_id[0] && m->parent_msg_id &&
	    strcmp(m->parent_msg_id, ex->probe_id) == 0 && !ex->got_idle) {
		ex->got_idle = 1; /* it will not come: what came before is all there is */
		exec_lose_output(ex, 1, HWM_WHY);
		return EXEC_COLLECTED;
	}
	if (!ours)
		return EXEC_IGNORED;
	ex->quiet_since = clock_mono();
	if (strcmp(t, "status") == 0) {
		if (strcmp(json_member_str(m->content, "execution_state"), "idle") == 0)
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
		exec_rich_add(&ex->rich, m->content, allow_mime, ex->lim.rich_bytes, &ex->lim.place,
			      ex->id);
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
	note_seq(ex, m, 1);
	free(ex->reply_status);
	ex->reply_status = xstrdup(json_member_str(m->content, "status"));
	json_object_put(ex->reply_content);
	ex->reply_content = json_object_get(m->content);
	return 1;
}

void
exec_lose_output(struct exec *ex, unsigned long messages, const char *reason)
{
	ex->lost_messages += messages;
	if (ex->lost_reason == NULL)
		ex->lost_reason = xstrdup(reason);
}

int
exec_done(const struct exec *ex)
{
	return ex->got_reply && ex->got_idle;
}

int
exec_ended_unanswered(const struct exec *ex, double now)
{
	/* quiet_since: the idle, the last message of ours */
	return ex->reinterrupt_at > 0 && ex->got_idle && !ex->got_reply &&
	       now >= ex->quiet_since + EXEC_REINTERRUPT_S;
}

double
exec_idle_deadline(const struct exec *ex)
{
	if (!ex->got_reply || ex->got_idle)
		return 0;
	double d = ex->quiet_since + (ex->probe_id[0] ? EXEC_IDLE_WAIT_S : EXEC_PROBE_AFTER_S);
	return ex->answer_by > 0 && ex->answer_by < d ? ex->answer_by : d;
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


/* Hand the text in *b to *t (owned) and reset b. */
static void
text_take(struct ipc_text *t, struct buf *b)
{
	t->len = b->len;
	t->s = buf_release(b);
}

/* The result's stdout: kept text the supervisor was not streamed, and its marker. */
static void
stdout_text(struct exec *ex, struct ipc_result *r)
{
	struct buf b;
	size_t from = exec_stream_streamed(&ex->out);

	buf_init(&b);
	buf_add(&b, ex->out.kept.data ? ex->out.kept.data + from : "", ex->out.kept.len - from);
	exec_stream_marker(&b, &ex->out, ex->lim.output_chars);
	text_take(&r->out, &b);
	r->out_streamed = from;
}

/*
 * output_lost {messages, bytes, reason} when anything was lost, else NULL
 * (caller owns it); *note is the line stderr gets (caller frees).
 */
static struct ipc_output_lost *
lost_report(struct exec *ex, char **note)
{
	unsigned long long bytes = ex->out.lost_bytes + ex->err.lost_bytes;
	const char *why = ex->lost_reason;

	*note = NULL;
	if (ex->lost_messages == 0 && bytes == 0)
		return NULL;
	if (why == NULL) /* only spill files failed: their markers say how */
		why = ex->out.lost_bytes ? ex->out.spill_error : ex->err.spill_error;
	if (why == NULL)
		why = "unknown";
	struct ipc_output_lost *o = xcalloc(1, sizeof(*o));
	o->messages = ex->lost_messages;
	o->bytes = bytes;
	o->reason.s = xstrdup(why);
	o->reason.len = strlen(why);
	if (ex->lost_messages)
		*note = xasprintf("\n[codeexecd] output was lost: at least %lu message(s) of the kernel never arrived: %s\n",
				  ex->lost_messages, why);
	else
		*note = xasprintf("\n[codeexecd] output was lost: %llu bytes could not be saved: %s\n",
				  bytes, why);
	return o;
}

/*
 * The result's stderr: restart note, kept text the supervisor was not
 * streamed, its marker, loss note. Streamed text is left out only where
 * it starts the stderr, so not after a restart note.
 */
static void
stderr_text(struct exec *ex, struct ipc_result *r, const char *lost_note)
{
	struct buf b;
	size_t from = ex->kernel_restarted ? 0 : exec_stream_streamed(&ex->err);

	buf_init(&b);
	if (ex->kernel_restarted)
		buf_adds(&b, RESTART_NOTE);
	buf_add(&b, ex->err.kept.data ? ex->err.kept.data + from : "", ex->err.kept.len - from);
	exec_stream_marker(&b, &ex->err, ex->lim.output_chars);
	if (lost_note)
		buf_adds(&b, lost_note);
	text_take(&r->err, &b);
	r->err_streamed = from;
}

/* String member `key` of o as owned text ("" if absent). */
static struct ipc_text
member_text(struct json_object *o, const char *key)
{
	struct json_object *v;
	struct ipc_text t = {NULL, 0};

	if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)) {
		t.len = (size_t)json_object_get_string_len(v);
		t.s = xmalloc(t.len + 1);
		memcpy(t.s, json_object_get_string(v), t.len + 1);
	}
	return t;
}

/* The strings of `a` as RESULT's dropped_mime: NULL when none. Caller frees. */
static char **
dropped_strv(struct json_object *a)
{
	size_t n = json_object_array_length(a);
	if (n == 0)
		return NULL;
	char **v = xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = xstrdup(json_object_get_string(json_object_array_get_idx(a, i)));
	return v;
}

void
exec_result(struct exec *ex, double now, struct ipc_result *r)
{
	memset(r, 0, sizeof(*r));
	error_from_reply(ex);
	check_seq(ex);
	r->success = ex->got_reply && ex->reply_status && strcmp(ex->reply_status, "ok") == 0 &&
		     ex->error == NULL;
	stdout_text(ex, r);
	/* Both spill files closed first: a failed close is a loss too. */
	exec_stream_close(&ex->err);
	char *note;
	r->output_lost = lost_report(ex, &note);
	r->spill_files = (ex->out.file != NULL) + (ex->err.file != NULL) + ex->rich.spilled;
	stderr_text(ex, r, note);
	free(note);
	if (ex->rich.has_value) {
		r->value = ex->rich.value; /* NULL (JSON null) is left out */
		ex->rich.value = NULL;
	}
	r->n_rich = json_object_array_length(ex->rich.list);
	r->rich = xcalloc(r->n_rich ? r->n_rich : 1, sizeof(*r->rich));
	for (size_t i = 0; i < r->n_rich; i++) {
		struct json_object *e = json_object_array_get_idx(ex->rich.list, i);
		r->rich[i].mime_type =
			xstrdup(json_object_get_string(json_object_object_get(e, "mime_type")));
		r->rich[i].data = json_object_get(json_object_object_get(e, "data"));
		if (json_object_object_get_ex(e, "file", NULL)) {
			r->rich[i].file = xstrdup(json_member_str(e, "file"));
			r->rich[i].sha256 = xstrdup(json_member_str(e, "sha256"));
			r->rich[i].size_bytes = (uint64_t)json_object_get_int64(
				json_object_object_get(e, "size_bytes"));
		}
	}
	json_object_put(ex->rich.list);
	ex->rich.list = json_object_new_array();
	r->dropped_mime = dropped_strv(ex->rich.dropped);
	if (ex->error) {
		r->error = xcalloc(1, sizeof(*r->error));
		r->error->type = member_text(ex->error, "type");
		r->error->message = member_text(ex->error, "message");
		r->error->traceback = member_text(ex->error, "traceback");
		json_object_put(ex->error);
		ex->error = NULL;
	}
	r->execution_time = ex->t_start > 0 && now > ex->t_start ? now - ex->t_start : 0;
	/* A prompt still unanswered (a timeout) waited until now. */
	r->stdin_wait_s = ex->stdin_wait_s + (ex->input_since > 0 ? now - ex->input_since : 0);
	r->kernel_restarted = ex->kernel_restarted;
}

void
exec_error_result(const char *type, const char *message, struct ipc_result *r)
{
	struct exec *ex = exec_new(0, "", 0, NULL);

	exec_set_error(ex, type, message);
	exec_result(ex, 0, r);
	exec_free(&ex);
}
