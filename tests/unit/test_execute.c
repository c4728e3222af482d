/*
 * test_execute.c - an execution's output limits: streams kept up to
 * output_limit characters (UTF-8 aware) with the whole stream spilled to
 * codeexecd-output/ as it arrives, the marker, OUTPUT chunks cut to the
 * limit, and rich outputs over rich_limit saved (images decoded) and
 * replaced by a note naming the file; those over inline_max (within
 * rich_limit) saved under outputs/rich/ and named by file, size and
 * sha256. Lost output is reported: a gap in the kernel's message numbers,
 * bytes no spill file took. A display of
 * IPC_VALUE_MIME becomes the result's value.
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "execute.h"
#include "fs_tree.h"
#include "ipc.h"
#include "ipc_msg.h"
#include "xmalloc.h"

static char dir[] = "/tmp/test_execute.XXXXXX";

/* After each test: its directory (and what spilled into it) goes. */
static void
remove_dir(void)
{
	if (strstr(dir, "XXXXXX") == NULL)
		ck_assert_int_eq(fs_remove_tree(dir), 0);
}

/* An execution with limits in a fresh directory, already "sent". */
static struct exec *
new_exec(size_t chars, size_t rich)
{
	static struct spill_place place;
	struct exec_limits lim = {.output_chars = chars, .rich_bytes = rich};

	remove_dir(); /* a test's earlier execution, freed by now */
	ck_assert_ptr_nonnull(mkdtemp(strcpy(dir, "/tmp/test_execute.XXXXXX")));
	place.cwd = dir;
	lim.place = place;
	struct exec *ex = exec_new(7, "x", 0, &lim);
	exec_started(ex, "m-1", 0);
	return ex;
}

/* Feed an iopub message of type `type` with content `json` (a format). */
static enum exec_event
feed(struct exec *ex, const char *type, const char *json)
{
	struct jupyter_msg m = {0};

	m.msg_type = type;
	m.parent_msg_id = "m-1";
	m.content = json_tokener_parse(json);
	ck_assert_ptr_nonnull(m.content);
	enum exec_event e = exec_on_iopub(ex, &m, NULL);
	json_object_put(m.content);
	return e;
}

static void
feed_stream(struct exec *ex, const char *name, const char *text)
{
	struct json_object *c = json_object_new_object();
	json_object_object_add(c, "name", json_object_new_string(name));
	json_object_object_add(c, "text", json_object_new_string(text));
	feed(ex, "stream", json_object_to_json_string(c));
	json_object_put(c);
}

/* The content of file rel under the test directory; caller frees. */
static char *
slurp(const char *rel, size_t *len)
{
	char *p = xasprintf("%s/%s", dir, rel);
	FILE *f = fopen(p, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", p);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	char *d = xmalloc(*len + 1);
	ck_assert_uint_eq(fread(d, 1, *len, f), *len);
	d[*len] = '\0';
	fclose(f);
	free(p);
	return d;
}

START_TEST(under_limit_kept_whole)
{
	struct exec *ex = new_exec(10, 0);
	feed_stream(ex, "stdout", "hello\n");
	struct ipc_result r;
	exec_result(ex, 1, &r);
	ck_assert_str_eq(r.out.s, "hello\n");
	ck_assert_int_eq(access(dir, F_OK), 0);
	ipc_result_free(&r);
	exec_free(&ex);
}
END_TEST

START_TEST(over_limit_spilled_whole)
{
	struct exec *ex = new_exec(5, 0);
	char path[256], *data;
	size_t len, cut;

	feed_stream(ex, "stdout", "abc");
	feed_stream(ex, "stdout", "defgh");
	feed_stream(ex, "stdout", "ijklmnop");
	ck_assert_uint_le(ex->out.kept.len, 5);
	struct ipc_result r;
	exec_result(ex, 1, &r);
	const char *out = r.out.s;
	ck_assert_msg(strncmp(out, "abcde\n[codeexecd] stdout truncated at 5 characters: 11 more characters were cut; the whole stdout is in codeexecd-output/7-", 120) == 0,
		      "%s", out);
	ck_assert_int_eq(sscanf(strstr(out, "is in ") + 6, "%255s", path), 1);
	data = slurp(path, &len);
	ck_assert_str_eq(data, "abcdefghijklmnop");
	ck_assert_int_eq(sscanf(strstr(out, "characters: ") + 12, "%zu", &cut), 1);
	ck_assert_uint_eq(cut, 11);
	free(data);
	ipc_result_free(&r);
	exec_free(&ex);
}
END_TEST

START_TEST(utf8_counted_as_characters)
{
	struct exec *ex = new_exec(3, 0);
	feed_stream(ex, "stderr", "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
	ck_assert_uint_eq(ex->err.kept.len, 6);
	ck_assert_uint_eq(ex->err.cut_chars, 2);
	struct ipc_result r;
	exec_result(ex, 1, &r);
	ck_assert_msg(strstr(r.err.s, "2 more characters were cut") != NULL, "%s", r.err.s);
	ipc_result_free(&r);
	exec_free(&ex);
}
END_TEST

START_TEST(output_chunk_capped)
{
	struct exec *ex = new_exec(4, 0);
	struct jupyter_msg m = {0};
	m.content = json_tokener_parse("{\"name\": \"stdout\", \"text\": \"0123456789\"}");
	struct ipc_output o;
	exec_output_chunk(ex, &m, &o);
	const char *t = o.text.s;
	ck_assert_msg(strncmp(t, "0123\n[codeexecd] 6 more characters of this chunk", 48) == 0, "%s", t);
	ck_assert_int_eq(o.name, IPC_STDOUT);
	ipc_output_free(&o);
	json_object_put(m.content);
	exec_free(&ex);
}
END_TEST

/* STREAMING, when a poll begins mid-call: what the result keeps so far,
 * with a note for a stream already cut, and nothing twice after it. */
START_TEST(streaming_catch_up)
{
	struct exec *ex = new_exec(5, 0);
	struct ipc_streaming st;

	feed_stream(ex, "stdout", "abc");
	feed_stream(ex, "stderr", "e\n");
	exec_streaming(ex, &st);
	ck_assert_str_eq(st.out.s, "abc");
	ck_assert_uint_eq(st.out.len, 3);
	ck_assert_str_eq(st.err.s, "e\n");
	ipc_streaming_free(&st);
	feed_stream(ex, "stdout", "defgh");
	exec_streaming(ex, &st);
	ck_assert_msg(strncmp(st.out.s, "abcde\n[codeexecd] 3 more characters of stdout are "
				       "not streamed", 52) == 0, "%s", st.out.s);
	ipc_streaming_free(&st);
	/* Nothing printed: empty texts. */
	exec_free(&ex);
	ex = new_exec(5, 0);
	exec_streaming(ex, &st);
	ck_assert_uint_eq(st.out.len, 0);
	ck_assert_uint_eq(st.err.len, 0);
	ipc_streaming_free(&st);
	exec_free(&ex);
}
END_TEST

START_TEST(rich_over_limit_saved_decoded)
{
	struct exec *ex = new_exec(0, 8);
	char path[256];
	size_t len;

	/* "\x89PNG\r\n\x1a\n" + "0123456789", base64 with IPython's line break */
	feed(ex, "display_data",
	     "{\"data\": {\"image/png\": \"iVBORw0KGgowMTIzNDU2Nzg5\\n\", \"text/plain\": \"<Figure>\"}}");
	struct ipc_result r;
	exec_result(ex, 1, &r);
	ck_assert_uint_eq(r.n_rich, 2);
	ck_assert_str_eq(r.rich[0].mime_type, "text/plain");
	const char *note = json_object_get_string(r.rich[0].data);
	ck_assert_msg(strstr(note, "the image/png output (25 bytes) exceeds the rich output limit of 8 bytes; it was saved to codeexecd-output/7-") != NULL,
		      "%s", note);
	ck_assert_int_eq(sscanf(strstr(note, "saved to ") + 9, "%255s", path), 1);
	ck_assert(strstr(path, ".png") != NULL);
	char *d = slurp(path, &len);
	ck_assert_uint_eq(len, 18);
	ck_assert_int_eq(memcmp(d, "\x89PNG\r\n\x1a\n0123456789", 18), 0);
	free(d);
	ck_assert_str_eq(json_object_get_string(r.rich[1].data), "<Figure>");
	ipc_result_free(&r);
	exec_free(&ex);
}
END_TEST

/* "\x89PNG\r\n\x1a\n" + "0123456789", as rich_over_limit_saved_decoded feeds it */
#define PNG18_B64 "iVBORw0KGgowMTIzNDU2Nzg5\\n"
#define PNG18_SHA256 "4eaad8ed6c82085cb8e9d91dbacb4f1e3d6d0cc252f6e6be60d461976dc5ee12"

START_TEST(rich_over_inline_by_file)
{
	struct exec *ex = new_exec(0, 1000);
	size_t len;

	ex->rich.inline_max = 8;
	feed(ex, "display_data",
	     "{\"data\": {\"image/png\": \"" PNG18_B64 "\", \"text/plain\": \"<Figure>\"}}");
	struct ipc_result r;
	exec_result(ex, 1, &r);
	ck_assert_uint_eq(r.n_rich, 2);
	ck_assert_str_eq(r.rich[0].mime_type, "image/png");
	ck_assert_ptr_null(r.rich[0].data);
	ck_assert_msg(strncmp(r.rich[0].file, "rich/7-", 7) == 0 &&
			      strstr(r.rich[0].file, ".png") != NULL, "%s", r.rich[0].file);
	ck_assert_uint_eq(r.rich[0].size_bytes, 18);
	ck_assert_str_eq(r.rich[0].sha256, PNG18_SHA256);
	char *rel = xasprintf("outputs/%s", r.rich[0].file);
	char *d = slurp(rel, &len);
	ck_assert_uint_eq(len, 18);
	ck_assert_int_eq(memcmp(d, "\x89PNG\r\n\x1a\n0123456789", 18), 0);
	free(d);
	free(rel);
	/* 8 bytes, not over inline_max: inline, no file. */
	ck_assert_str_eq(json_object_get_string(r.rich[1].data), "<Figure>");
	ck_assert_ptr_null(r.rich[1].file);
	ck_assert_uint_eq(r.spill_files, 0);
	ipc_result_free(&r);
	exec_free(&ex);
}
END_TEST

START_TEST(rich_over_limit_noted_despite_inline)
{
	struct exec *ex = new_exec(0, 8);

	ex->rich.inline_max = 4; /* the rich limit bounds outputs by file too */
	feed(ex, "display_data", "{\"data\": {\"image/png\": \"" PNG18_B64 "\"}}");
	struct ipc_result r;
	exec_result(ex, 1, &r);
	ck_assert_uint_eq(r.n_rich, 1);
	ck_assert_str_eq(r.rich[0].mime_type, "text/plain");
	ck_assert_ptr_null(r.rich[0].file);
	ck_assert(strstr(json_object_get_string(r.rich[0].data), "saved to codeexecd-output/") !=
		  NULL);
	ipc_result_free(&r);
	exec_free(&ex);
}
END_TEST

START_TEST(binary_files_keep_data)
{
	struct exec *ex = new_exec(0, 1000);

	ex->rich.inline_max = 1000;
	ex->rich.binary_files = 1;
	feed(ex, "display_data",
	     "{\"data\": {\"image/png\": \"" PNG18_B64 "\", \"text/plain\": \"<Figure>\"}}");
	struct ipc_result r;
	exec_result(ex, 1, &r);
	ck_assert_uint_eq(r.n_rich, 2);
	ck_assert_str_eq(json_object_get_string(r.rich[0].data), "iVBORw0KGgowMTIzNDU2Nzg5");
	ck_assert_str_eq(r.rich[0].sha256, PNG18_SHA256);
	ck_assert_uint_eq(r.rich[0].size_bytes, 18);
	ck_assert_ptr_null(r.rich[1].file); /* text: never */
	ipc_result_free(&r);
	exec_free(&ex);
}
END_TEST

START_TEST(defaults_when_absent)
{
	struct exec *ex = exec_new(1, "x", 0, NULL);
	ck_assert_uint_eq(ex->lim.output_chars, EXEC_OUTPUT_LIMIT);
	ck_assert_uint_eq(ex->lim.rich_bytes, EXEC_RICH_LIMIT);
	exec_free(&ex);
}
END_TEST

static const char *
result_str(struct json_object *r, const char *key)
{
	return json_object_get_string(json_object_object_get(r, key));
}

/* The RESULT of ex as JSON, as the supervisor sees it. Caller owns. */
static struct json_object *
result_json(struct exec *ex)
{
	struct ipc_result rr;

	exec_result(ex, 1, &rr);
	struct json_object *r = ipc_result_json(&rr);
	ipc_result_free(&rr);
	return r;
}

/* Feed a message numbered `n` by session "k_42_" on iopub (or shell). */
static void
feed_numbered(struct exec *ex, int shell, const char *type, unsigned n, const char *content)
{
	struct jupyter_msg m = {0};
	char id[64];

	snprintf(id, sizeof(id), "k_42_%u", n);
	m.msg_type = type;
	m.parent_msg_id = "m-1";
	m.header = json_object_new_object();
	json_object_object_add(m.header, "msg_id", json_object_new_string(id));
	m.content = json_tokener_parse(content);
	ck_assert_ptr_nonnull(m.content);
	if (shell)
		exec_on_shell(ex, &m);
	else
		exec_on_iopub(ex, &m, NULL);
	json_object_put(m.header);
	json_object_put(m.content);
}

/* busy, streams numbered `first`.., the reply and idle, skipping `skip`. */
static struct json_object *
numbered_run(unsigned skip)
{
	struct exec *ex = new_exec(100, 0);
	unsigned n = 10;

	feed_numbered(ex, 0, "status", n++, "{\"execution_state\": \"busy\"}");
	for (int i = 0; i < 4; i++, n++)
		if (n != skip)
			feed_numbered(ex, 0, "stream", n, "{\"name\": \"stdout\", \"text\": \"x\\n\"}");
	feed_numbered(ex, 1, "execute_reply", n++, "{\"status\": \"ok\"}");
	feed_numbered(ex, 0, "status", n++, "{\"execution_state\": \"idle\"}");
	ck_assert(exec_done(ex));
	struct json_object *r = result_json(ex);
	exec_free(&ex);
	return r;
}

START_TEST(numbered_complete_not_lost)
{
	struct json_object *r = numbered_run(0);
	ck_assert(!json_object_object_get_ex(r, "output_lost", NULL));
	ck_assert_str_eq(result_str(r, "stdout"), "x\nx\nx\nx\n");
	json_object_put(r);
}
END_TEST

START_TEST(numbered_gap_reported)
{
	struct json_object *r = numbered_run(12);
	struct json_object *lost;
	ck_assert(json_object_object_get_ex(r, "output_lost", &lost));
	ck_assert_int_eq(json_object_get_int(json_object_object_get(lost, "messages")), 1);
	ck_assert(strstr(result_str(lost, "reason"), "high-water mark") != NULL);
	ck_assert_msg(strstr(result_str(r, "stderr"), "output was lost: at least 1 message") != NULL,
		      "%s", result_str(r, "stderr"));
	json_object_put(r);
}
END_TEST

START_TEST(unsaved_bytes_reported)
{
	struct exec *ex = new_exec(5, 0);
	ex->lim.place.cwd = "/nonexistent/test_execute";
	feed_stream(ex, "stdout", "abc");
	feed_stream(ex, "stdout", "defgh");
	feed_stream(ex, "stdout", "ijklmnop");
	struct json_object *r = result_json(ex);
	struct json_object *lost;
	ck_assert(json_object_object_get_ex(r, "output_lost", &lost));
	ck_assert_int_eq(json_object_get_int(json_object_object_get(lost, "bytes")), 16);
	ck_assert(strstr(result_str(r, "stderr"), "16 bytes could not be saved") != NULL);
	json_object_put(r);
	exec_free(&ex);
}
END_TEST

START_TEST(value_display_is_the_value)
{
	struct exec *ex = new_exec(0, 0);
	feed(ex, "display_data", "{\"data\": {\"" IPC_VALUE_MIME "\": {\"a\": [1, 2]}}}");
	struct json_object *r = result_json(ex), *v;
	ck_assert(json_object_object_get_ex(r, "value", &v));
	ck_assert_str_eq(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), "{\"a\":[1,2]}");
	ck_assert_uint_eq(json_object_array_length(json_object_object_get(r, "rich_outputs")), 0);
	json_object_put(r);
	exec_free(&ex);

	ex = new_exec(0, 0);
	feed(ex, "display_data", "{\"data\": {\"" IPC_VALUE_MIME "\": null}}");
	r = result_json(ex);
	ck_assert(!json_object_object_get_ex(r, "value", &v)); /* null: left out */
	json_object_put(r);
	exec_free(&ex);
}
END_TEST

/* Types allow_mime does not hold are dropped and named, each once; the value is no output. */
START_TEST(dropped_types_named)
{
	struct exec *ex = new_exec(0, 0);
	char *allow[] = {"text/plain", "text/html", NULL};
	struct jupyter_msg m = {0};
	const char *outputs[] = {
		"{\"data\": {\"image/png\": \"iVBORw0KGgo=\", \"text/plain\": \"<Figure>\"}}",
		"{\"data\": {\"text/html\": \"<b>x</b>\", \"image/png\": \"iVBORw0KGgo=\","
		" \"application/vnd.custom+json\": {}}}",
		"{\"data\": {\"" IPC_VALUE_MIME "\": 1}}",
	};

	m.msg_type = "display_data";
	m.parent_msg_id = "m-1";
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
		m.content = json_tokener_parse(outputs[i]);
		exec_on_iopub(ex, &m, allow);
		json_object_put(m.content);
	}
	struct ipc_result r;
	exec_result(ex, 1, &r);
	ck_assert_uint_eq(r.n_rich, 2);
	ck_assert_str_eq(r.rich[0].mime_type, "text/plain");
	ck_assert_str_eq(r.rich[1].mime_type, "text/html");
	ck_assert_ptr_nonnull(r.dropped_mime);
	ck_assert_str_eq(r.dropped_mime[0], "image/png");
	ck_assert_str_eq(r.dropped_mime[1], "application/vnd.custom+json");
	ck_assert_ptr_null(r.dropped_mime[2]);
	ipc_result_free(&r);
	exec_free(&ex);

	/* Every type kept (no list): nothing is named. */
	ex = new_exec(0, 0);
	feed(ex, "display_data", outputs[1]);
	exec_result(ex, 1, &r);
	ck_assert_uint_eq(r.n_rich, 3);
	ck_assert_ptr_null(r.dropped_mime);
	ipc_result_free(&r);
	exec_free(&ex);
}
END_TEST

static Suite *
execute_suite(void)
{
	Suite *s = suite_create("execute");
	TCase *tc = tcase_create("limits");

	tcase_add_checked_fixture(tc, NULL, remove_dir);
	tcase_add_test(tc, under_limit_kept_whole);
	tcase_add_test(tc, over_limit_spilled_whole);
	tcase_add_test(tc, utf8_counted_as_characters);
	tcase_add_test(tc, output_chunk_capped);
	tcase_add_test(tc, streaming_catch_up);
	tcase_add_test(tc, rich_over_limit_saved_decoded);
	tcase_add_test(tc, rich_over_inline_by_file);
	tcase_add_test(tc, rich_over_limit_noted_despite_inline);
	tcase_add_test(tc, binary_files_keep_data);
	tcase_add_test(tc, defaults_when_absent);
	tcase_add_test(tc, numbered_complete_not_lost);
	tcase_add_test(tc, numbered_gap_reported);
	tcase_add_test(tc, unsaved_bytes_reported);
	tcase_add_test(tc, value_display_is_the_value);
	tcase_add_test(tc, dropped_types_named);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(execute_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
