/* test_json_strict.c - the RFC 8259 check that runs before json-c. */
#include "autoconf.h"

#include <check.h>
#include <string.h>

#include "json_strict.h"

static const struct {
	const char *text;
	int ok;
	int has_nul;
} cases[] = {
	{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", 1, 0},
	{" [1, -2.5e+3, 0, -0, true, false, null, \"\\\"\\\\\\/\\b\\f\\n\\r\\t\"] ", 1, 0},
	{"\"\\ud83d\\ude00\"", 1, 0},
	{"9223372036854775807", 1, 0},
	{"-9223372036854775808", 1, 0},
	{"1e400", 1, 0},
	{"{\"a\\u0000b\":1}", 1, 1},
	{"[\"x\\u0000\"]", 1, 1},
	{"[\"\\\\u0000\"]", 1, 0}, /* an escaped backslash, then text */
	{"9223372036854775808", 0, 0},
	{"-9223372036854775809", 0, 0},
	{"99999999999999999999", 0, 0},
	{"{\"a\":1 /* c */}", 0, 0},
	{"{\"a\":1} // c", 0, 0},
	{"{'a':1}", 0, 0},
	{"[1,2,]", 0, 0},
	{"{\"a\":1,}", 0, 0},
	{"[NaN]", 0, 0},
	{"[Infinity]", 0, 0},
	{"[-Infinity]", 0, 0},
	{"[01]", 0, 0},
	{"[0x10]", 0, 0},
	{"[+1]", 0, 0},
	{"[.5]", 0, 0},
	{"[1.]", 0, 0},
	{"[1e]", 0, 0},
	{"[True]", 0, 0},
	{"[\"a\tb\"]", 0, 0},
	{"[\"\\ud800\"]", 0, 0},
	{"[\"\\udc00\"]", 0, 0},
	{"[\"\\ud800\\u0041\"]", 0, 0},
	{"[\"\\x41\"]", 0, 0},
	{"[\"\\u00g0\"]", 0, 0},
	{"[\"abc", 0, 0},
	{"{\"a\" 1}", 0, 0},
	{"{1:2}", 0, 0},
	{"{}{}", 0, 0},
	{"", 0, 0},
	{"   ", 0, 0},
};

START_TEST(table)
{
	struct json_strict js;
	int rc = json_strict_check(cases[_i].text, strlen(cases[_i].text), 32, &js);

	ck_assert_msg((rc == 0) == cases[_i].ok, "%s: rc %d (%s)", cases[_i].text, rc,
		      js.error ? js.error : "no error");
	if (rc == 0)
		ck_assert_int_eq(js.has_nul, cases[_i].has_nul);
	else
		ck_assert_ptr_nonnull(js.error);
}
END_TEST

/* Depth is bounded, and a NUL byte inside the length is an error, not an end. */
START_TEST(depth_and_bytes)
{
	char deep[80];
	struct json_strict js;

	memset(deep, '[', 33);
	memset(deep + 33, ']', 33);
	ck_assert_int_eq(json_strict_check(deep, 66, 32, &js), -1);
	ck_assert_int_eq(json_strict_check(deep + 1, 64, 32, &js), 0);
	ck_assert_int_eq(json_strict_check("[1]\0", 4, 32, &js), -1);
	ck_assert_int_eq(json_strict_check("[\"a\0b\"]", 7, 32, &js), -1);
	ck_assert_int_eq(json_strict_check("[1]", 2, 32, &js), -1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("json_strict");
	TCase *tc = tcase_create("json_strict");
	tcase_add_loop_test(tc, table, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, depth_and_bytes);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
