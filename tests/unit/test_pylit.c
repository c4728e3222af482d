/*
 * test_pylit.c - Python literals: their exact text, and (where python3 is
 * on PATH) that Python reads each back as the value it was made from.
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "pylit.h"

static char *
lit(const char *s, size_t len)
{
	struct buf b;
	buf_init(&b);
	pylit_str(&b, s, len);
	return buf_release(&b);
}

START_TEST(exact_text)
{
	static const struct {
		const char *in;
		size_t len;
		const char *out;
	} t[] = {
		{"", 0, "''"},
		{"plain /text", 11, "'plain /text'"},
		{"it's \\", 6, "'it\\'s \\\\'"},
		{"\"dq\"", 4, "'\"dq\"'"},
		{"a\nb\r\tc\x01\x7f", 8, "'a\\nb\\r\\tc\\x01\\x7f'"},
		{"nul\0after", 9, "'nul\\x00after'"},
		{"\xc3\xbc", 2, "'\\u00fc'"},
		{"\xe2\x82\xac", 3, "'\\u20ac'"},
		{"\xf0\x9f\x98\x80", 4, "'\\U0001f600'"},		/* one character, not a pair */
		{"\xed\xa0\x80", 3, "'\\udced\\udca0\\udc80'"},	/* an encoded surrogate */
		{"\xff'", 2, "'\\udcff\\''"},				/* a stray byte, then a quote */
		{"\xc3", 1, "'\\udcc3'"},				/* a sequence cut short */
		{"\xc0\xaf", 2, "'\\udcc0\\udcaf'"},			/* an overlong '/' */
		{"\xf4\x90\x80\x80", 4, "'\\udcf4\\udc90\\udc80\\udc80'"}, /* past U+10FFFF */
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *l = lit(t[i].in, t[i].len);
		ck_assert_msg(strcmp(l, t[i].out) == 0, "case %zu: %s, want %s", i, l, t[i].out);
		for (const char *p = l; *p; p++)
			ck_assert(*p >= 0x20 && *p < 0x7f);
		free(l);
	}
	char *l = pylit("x'y");
	ck_assert_str_eq(l, "'x\\'y'");
	free(l);
}
END_TEST

START_TEST(json_values)
{
	struct json_object *o = json_tokener_parse(
		"{\"a\":[1,-2,1.5,true,false,null,\"s'\\u00fc\"],\"b\":{},\"c\":[]}");
	struct buf b;

	buf_init(&b);
	pylit_json(&b, o);
	ck_assert_str_eq(b.data, "{'a': [1, -2, float('1.5'), True, False, None, 's\\'\\u00fc'], "
				 "'b': {}, 'c': []}");
	buf_free(&b);
	json_object_put(o);
}
END_TEST

/* Whether python3 is on PATH. */
static int
have_python(void)
{
	return system("python3 -c pass >/dev/null 2>&1") == 0;
}

/*
 * Every byte string here, written as a literal, read back by Python and
 * encoded with surrogateescape (as os.environ and open() do): the same bytes.
 */
START_TEST(python_reads_back)
{
	if (!have_python())
		return;
	char in[256];
	for (int i = 0; i < 256; i++)
		in[i] = (char)i;
	static const char *const extra[] = {"\xf0\x9f\x98\x80", "\xed\xa0\x80\xed\xb0\x80",
					    "'''\"\"\"\\", "\xef\xbf\xbf\xf4\x8f\xbf\xbf", "\\N{x}",
					    "{0}%s"};
	char path[] = "/tmp/test_pylit.XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ne(fd, -1);
	FILE *f = fdopen(fd, "w");
	char *l = lit(in, sizeof(in));
	fprintf(f, "%s\n", l);
	free(l);
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		l = pylit(extra[i]);
		fprintf(f, "%s\n", l);
		free(l);
	}
	fclose(f);
	char cmd[512];
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import ast, sys\n"
		 "for line in open(sys.argv[1], encoding=\"ascii\"):\n"
		 "    v = ast.literal_eval(line)\n"
		 "    assert type(v) is str\n"
		 "    sys.stdout.buffer.write(v.encode(\"utf-8\", \"surrogateescape\") + b\"|\")\n' %s",
		 path);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	char out[2048];
	size_t n = fread(out, 1, sizeof(out), p);
	ck_assert_int_eq(pclose(p), 0);
	unlink(path);
	struct buf want;
	buf_init(&want);
	buf_add(&want, in, sizeof(in));
	buf_adds(&want, "|");
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		buf_adds(&want, extra[i]);
		buf_adds(&want, "|");
	}
	ck_assert_uint_eq(n, want.len);
	ck_assert(memcmp(out, want.data, n) == 0);
	buf_free(&want);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("pylit");
	TCase *tc = tcase_create("pylit");
	tcase_add_test(tc, exact_text);
	tcase_add_test(tc, json_values);
	tcase_add_test(tc, python_reads_back);
	tcase_set_timeout(tc, 60); /* python3 may start slowly on a busy machine */
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
