/* test_buf.c - the growable buffer and the random identifiers. */
#include "autoconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "rand.h"

START_TEST(grow_and_consume)
{
	struct buf b;
	buf_init(&b);
	for (int i = 0; i < 1000; i++)
		buf_printf(&b, "%d,", i);
	ck_assert_uint_eq(strlen(b.data), b.len);
	ck_assert(strncmp(b.data, "0,1,2,", 6) == 0);
	buf_consume(&b, 2);
	ck_assert(strncmp(b.data, "1,2,", 4) == 0);
	buf_consume(&b, b.len + 5);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_str_eq(b.data, "");
	char *s = buf_release(&b);
	ck_assert_str_eq(s, "");
	free(s);
	ck_assert_ptr_null(b.data);
}
END_TEST

/* An emptied buffer that grew past `keep` gives its storage back; a small
 * one, or one still holding data, keeps it. */
START_TEST(shrink_after_large)
{
	struct buf b;
	buf_init(&b);
	buf_reserve(&b, 100);
	buf_shrink(&b, 4096);
	ck_assert_ptr_nonnull(b.data);
	buf_reserve(&b, 1 << 20);
	buf_add(&b, "x", 1);
	buf_shrink(&b, 4096);
	ck_assert_ptr_nonnull(b.data); /* not empty */
	buf_consume(&b, 1);
	buf_shrink(&b, 4096);
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.cap, 0);
	buf_adds(&b, "again");
	ck_assert_str_eq(b.data, "again");
	buf_free(&b);
}
END_TEST

START_TEST(hex_ids_differ)
{
	char a[33], b[33];
	rand_hex(a, 16);
	rand_hex(b, 16);
	ck_assert_uint_eq(strlen(a), 32);
	ck_assert_str_ne(a, b);
	ck_assert_uint_eq(strspn(a, "0123456789abcdef"), 32);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("buf");
	tcase_add_test(tc, grow_and_consume);
	tcase_add_test(tc, shrink_after_large);
	tcase_add_test(tc, hex_ids_differ);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
