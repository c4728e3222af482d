/* test_log.c - log_escape, the one function every log line passes through. */
#include "autoconf.h"

#include <check.h>
#include <string.h>

#include "log.h"

static const struct {
	const char *in;
	const char *out;
} cases[] = {
	{"plain text", "plain text"},
	{"ping\n13:00:00 codeexecd crit: forged", "ping\\n13:00:00 codeexecd crit: forged"},
	{"a\r\nb\tc", "a\\r\\nb\\tc"},
	{"back\\slash", "back\\\\slash"},
	{"esc \x1b[2K bell \x07 del \x7f", "esc \\x1b[2K bell \\x07 del \\x7f"},
	{"caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac"},	   /* UTF-8 stays */
	{"bad \xff \xc3 \xe2\x82", "bad \\xff \\xc3 \\xe2\\x82"},	   /* not UTF-8 */
	{"over\xc0\xaflong", "over\\xc0\\xaflong"},			   /* overlong '/' */
	{"nel \xc2\x85 sep \xe2\x80\xa8", "nel \\u0085 sep \\u2028"},	   /* C1, U+2028 */
	{"rlo \xe2\x80\xae evil", "rlo \\u202e evil"},			   /* bidi override */
	{"surrogate \xed\xa0\x80", "surrogate \\xed\\xa0\\x80"},	   /* not UTF-8 */
	{"", ""},
};

START_TEST(escapes)
{
	char out[256];

	ck_assert_str_eq(log_escape(cases[_i].in, out, sizeof(out)), cases[_i].out);
}
END_TEST

/* A full buffer stops at a character boundary, never mid-escape. */
START_TEST(truncates_whole)
{
	char out[8];

	ck_assert_str_eq(log_escape("abcde\nfgh", out, sizeof(out)), "abcde\\n");
	ck_assert_str_eq(log_escape("abcdef\nfgh", out, sizeof(out)), "abcdef");
	ck_assert_str_eq(log_escape("abcdef\xc3\xa9", out, sizeof(out)), "abcdef");
	ck_assert_str_eq(log_escape("abc", out, 1), "");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log");
	tcase_add_loop_test(tc, escapes, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, truncates_whole);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
