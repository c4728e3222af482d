/*
 * test_execute.c - an execution's output limits: streams kept up to
 * output_limit characters (UTF-8 aware) with the whole stream spilled to
 * codeexecd-output/ as it arrives, the marker, OUTPUT chunks cut to the
 * limit, and rich outputs over rich_limit saved (images decoded) and
 * replaced by a note naming the file.
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "execute.h"
#include "xmalloc.h"

static char dir[] = "/tmp/test_execute.XXXXXX";

/* An execution with limits in a fresh directory, already "sent". */
static struct exec *
new_exec(size_t chars, size_t rich)
{
	static struct spill_place place;
	struct exec_limits lim = {.output_chars = chars, .rich_bytes = rich};

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

START_TEST(defaults_when_absent)
{
	struct exec *ex = exec_new(1, "x", 0, NULL);
	ck_assert_uint_eq(ex->lim.output_chars, EXEC_OUTPUT_LIMIT);
	ck_assert_uint_eq(ex->lim.rich_bytes, EXEC_RICH_LIMIT);
	exec_free(&ex);
}
END_TEST

static Suite *
execute_suite(void)
{
	Suite *s = suite_create("execute");
	TCase *tc = tcase_create("limits");

	tcase_add_test(tc, under_limit_kept_whole);
	tcase_add_test(tc, over_limit_spilled_whole);
	tcase_add_test(tc, utf8_counted_as_characters);
	tcase_add_test(tc, output_chunk_capped);
	tcase_add_test(tc, rich_over_limit_saved_decoded);
	tcase_add_test(tc, defaults_when_absent);
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
