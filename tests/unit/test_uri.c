/* test_uri.c - URI path encoding, against libcurl's escaping it replaces. */
#include "autoconf.h"

#include <check.h>
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "uri.h"

/* Every byte but NUL and '/', one segment each: as curl_easy_escape() has it. */
START_TEST(bytes_as_curl)
{
	for (int c = 1; c < 256; c++) {
		if (c == '/')
			continue;
		char in[2] = {(char)c, '\0'};
		char *want = curl_easy_escape(NULL, in, 0);
		struct buf b;
		buf_init(&b);
		uri_add_path(&b, in);
		ck_assert_uint_eq(b.len, strlen(want) + 1);
		ck_assert_str_eq(b.data + 1, want);
		curl_free(want);
		buf_free(&b);
	}
}
END_TEST

START_TEST(segments)
{
	struct buf b;

	buf_init(&b);
	buf_adds(&b, "file://");
	uri_add_path(&b, "/srv/out//a b/ü%.png/");
	ck_assert_str_eq(b.data, "file:///srv/out/a%20b/%C3%BC%25.png");
	buf_free(&b);
	buf_init(&b);
	uri_add_path(&b, "");
	uri_add_path(&b, "///");
	ck_assert_uint_eq(b.len, 0);
	uri_add_path(&b, "plots/a~_-.x");
	ck_assert_str_eq(b.data, "/plots/a~_-.x");
	buf_free(&b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("uri");
	TCase *tc = tcase_create("uri");
	tcase_add_test(tc, bytes_as_curl);
	tcase_add_test(tc, segments);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
