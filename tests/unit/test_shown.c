/*
 * test_shown.c - how messages show a value (shown) and which name they
 * suggest for a misspelt one (shown_distance, shown_nearest): the one
 * copy the key table's walker and the tool definitions' reader share.
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "shown.h"

START_TEST(quotes_and_escapes)
{
	char sh[SHOWN_LEN];

	ck_assert_str_eq(shown("plain", sh), "\"plain\"");
	ck_assert_str_eq(shown("", sh), "\"\"");
	ck_assert_str_eq(shown("a\"b\\c", sh), "\"a\\\"b\\\\c\"");
	ck_assert_str_eq(shown("tab\there\n", sh), "\"tab\\x09here\\x0a\"");
	ck_assert_str_eq(shown("del\x7f", sh), "\"del\\x7f\"");
	/* Bytes above 0x7f are passed as they are (UTF-8 stays readable). */
	ck_assert_str_eq(shown("caf\xc3\xa9", sh), "\"caf\xc3\xa9\"");
}
END_TEST

START_TEST(cut_short)
{
	char sh[SHOWN_LEN], want[SHOWN_LEN];
	char longer[200];

	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	shown(longer, sh);
	ck_assert_uint_lt(strlen(sh), SHOWN_LEN);
	/* 55 characters, then "..." and the closing quote. */
	snprintf(want, sizeof(want), "\"%.55s...\"", longer);
	ck_assert_str_eq(sh, want);
	/* An escape is never cut in half. */
	memset(longer, '\n', 60);
	longer[60] = '\0';
	shown(longer, sh);
	ck_assert_uint_lt(strlen(sh), SHOWN_LEN);
	ck_assert_str_eq(sh + strlen(sh) - 4, "...\"");
	ck_assert_int_eq((int)((strlen(sh) - 5) % 4), 0);
}
END_TEST

START_TEST(distance)
{
	ck_assert_uint_eq(shown_distance("", ""), 0);
	ck_assert_uint_eq(shown_distance("abc", "abc"), 0);
	ck_assert_uint_eq(shown_distance("", "abc"), 3);
	ck_assert_uint_eq(shown_distance("kitten", "sitting"), 3);
	ck_assert_uint_eq(shown_distance("pool.warm", "pool.wram"), 2);
	ck_assert_uint_eq(shown_distance("descripton", "description"), 1);
	char l[65];
	memset(l, 'a', 64);
	l[64] = '\0';
	ck_assert_uint_eq(shown_distance(l, "a"), 64);
}
END_TEST

START_TEST(nearest)
{
	static const char *const names[] = {"name", "type", "description", "default", NULL};

	ck_assert_str_eq(shown_nearest("descripton", names), "description");
	ck_assert_str_eq(shown_nearest("nmae", names), "name");
	ck_assert_str_eq(shown_nearest("defualt", names), "default");
	/* Ties go to the first. */
	ck_assert_str_eq(shown_nearest("tame", names), "name");
	ck_assert_ptr_null(shown_nearest("colour", names));
	ck_assert_ptr_null(shown_nearest("", names));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("shown");
	TCase *tc = tcase_create("shown");
	tcase_add_test(tc, quotes_and_escapes);
	tcase_add_test(tc, cut_short);
	tcase_add_test(tc, distance);
	tcase_add_test(tc, nearest);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
