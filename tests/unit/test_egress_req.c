/* test_egress_req.c - the egress proxy's reader of request heads (egress_proxy_req.c). */
#include "autoconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "egress_proxy_int.h"
#include "err.h"

/* Parse NUL-terminated `head`; the result, with *r filled. */
static int
parse(const char *head, struct egress_req *r)
{
	char why[ERR_LEN];

	return egress_req_parse(head, strlen(head), r, why, sizeof(why));
}

START_TEST(connect_forms)
{
	struct egress_req r;

	ck_assert_int_eq(parse("CONNECT pypi.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n", &r), 1);
	ck_assert_int_eq(r.is_connect, 1);
	ck_assert_str_eq(r.host, "pypi.example.com");
	ck_assert_int_eq(r.port, 443);
	ck_assert_uint_eq(r.head_len, strlen("CONNECT pypi.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n"));
	ck_assert_int_eq(parse("CONNECT [2001:db8::1]:8443 HTTP/1.0\r\n\r\n", &r), 1);
	ck_assert_str_eq(r.host, "[2001:db8::1]");
	ck_assert_int_eq(r.port, 8443);
	/* The TLS hello may follow the head in the same read: not part of it. */
	ck_assert_int_eq(parse("CONNECT a.example:443 HTTP/1.1\r\n\r\n\x16\x03\x01", &r), 1);
	ck_assert_uint_eq(r.head_len, strlen("CONNECT a.example:443 HTTP/1.1\r\n\r\n"));
}
END_TEST

START_TEST(plain_is_rewritten)
{
	struct egress_req r;

	ck_assert_int_eq(parse("GET http://Web.Example:8080/a/b?c=d HTTP/1.1\r\n"
			       "Host: evil.example\r\nProxy-Authorization: Basic eA==\r\n"
			       "Proxy-Connection: keep-alive\r\nAccept: */*\r\n"
			       "Connection: keep-alive\r\n\r\n", &r), 1);
	ck_assert_int_eq(r.is_connect, 0);
	ck_assert_str_eq(r.host, "Web.Example");
	ck_assert_int_eq(r.port, 8080);
	ck_assert_str_eq(r.fwd, "GET /a/b?c=d HTTP/1.1\r\nHost: Web.Example:8080\r\nAccept: */*\r\n"
				"Connection: close\r\n\r\n");
	free(r.fwd);
	ck_assert_int_eq(parse("HEAD http://a.example HTTP/1.0\r\n\r\n", &r), 1);
	ck_assert_int_eq(r.port, 80);
	ck_assert_str_eq(r.fwd, "HEAD / HTTP/1.0\r\nHost: a.example\r\nConnection: close\r\n\r\n");
	free(r.fwd);
	ck_assert_int_eq(parse("GET http://a.example?q HTTP/1.1\r\n\r\n", &r), 1);
	ck_assert_str_eq(r.fwd, "GET /?q HTTP/1.1\r\nHost: a.example\r\nConnection: close\r\n\r\n");
	free(r.fwd);
}
END_TEST

START_TEST(inject_rewrites_each_head)
{
	struct egress_inject a = {.header = "X-Api-Key", .value = "s3cret"};
	struct egress_inject b = {.header = "Authorization", .value = "Bearer t"};
	const struct egress_inject *m[] = {&a, &b};
	char *out, why[256];
	size_t out_len, head_len;
	const char *h = "GET /v1?q HTTP/1.1\r\nHost: evil.example\r\nx-api-key: fake\r\n"
			"Accept: */*\r\nConnection: keep-alive\r\nProxy-Authorization: x\r\n"
			"AUTHORIZATION: fake\r\n\r\nBODY";

	ck_assert_int_eq(egress_inject_head(h, strlen(h), "api.example", m, 2, &out, &out_len,
					    &head_len, why, sizeof(why)), 1);
	ck_assert_str_eq(out, "GET /v1?q HTTP/1.1\r\nHost: api.example\r\nAccept: */*\r\n"
			      "X-Api-Key: s3cret\r\nAuthorization: Bearer t\r\n"
			      "Connection: close\r\n\r\n");
	ck_assert_uint_eq(out_len, strlen(out));
	ck_assert_uint_eq(head_len, strlen(h) - 4);
	free(out);
	/* Not complete yet; smuggling and junk refused. */
	ck_assert_int_eq(egress_inject_head("GET / HTTP/1.1\r\n", 16, "a", m, 2, &out, &out_len,
					    &head_len, why, sizeof(why)), 0);
	h = "GET / HTTP/1.1\r\nX: a\nAuthorization: y\r\n\r\n";
	ck_assert_int_eq(egress_inject_head(h, strlen(h), "a", m, 2, &out, &out_len, &head_len,
					    why, sizeof(why)), 400);
	h = "\x16\x03\x01 not http\r\n\r\n";
	ck_assert_int_eq(egress_inject_head(h, strlen(h), "a", m, 2, &out, &out_len, &head_len,
					    why, sizeof(why)), 400);
}
END_TEST

START_TEST(incomplete_and_hostile)
{
	static const char *const bad[] = {
		"GET http://a.example/ HTTP/1.1\nHost: x\r\n\r\n",
		"GET http://a.example/ HTTP/1.1\r\nX: a\rb\r\n\r\n",
		"GET /relative HTTP/1.1\r\n\r\n",
		"GET https://a.example/ HTTP/1.1\r\n\r\n",
		"get http://a.example/ HTTP/1.1\r\n\r\n",
		"GET http://a.example/ HTTP/2.0\r\n\r\n",
		"GET http://a.example/ HTTP/1.1 x\r\n\r\n",
		"GET  http://a.example/ HTTP/1.1\r\n\r\n",
		" GET http://a.example/ HTTP/1.1\r\n\r\n",
		"GET http://user:pw@a.example/ HTTP/1.1\r\n\r\n",
		"GET http://a.example:0/ HTTP/1.1\r\n\r\n",
		"GET http://a.example:65536/ HTTP/1.1\r\n\r\n",
		"GET http://a.example:8x/ HTTP/1.1\r\n\r\n",
		"GET http:///x HTTP/1.1\r\n\r\n",
		"CONNECT a.example HTTP/1.1\r\n\r\n",
		"CONNECT a.example: HTTP/1.1\r\n\r\n",
		"CONNECT :443 HTTP/1.1\r\n\r\n",
		"CONNECT [::1 HTTP/1.1\r\n\r\n",
		"CONNECT [::1]x:443 HTTP/1.1\r\n\r\n",
		"CONNECT a@b.example:443 HTTP/1.1\r\n\r\n",
		"\r\n\r\n",
		"GET http://a.example/ HTTP/1.1\r\nProxy-Authorization x\r\n\r\n",
		"GET http://a.example/ HTTP/1.1\r\n: x\r\n\r\n",
		"GET http://a.example/ HTTP/1.1\r\nA b: x\r\n\r\n",
		"CONNECT a.example:443 HTTP/1.1\r\n x: folded\r\n\r\n",
		NULL};
	struct egress_req r;
	char big[EGRESS_HEAD_MAX + 64];

	ck_assert_int_eq(parse("", &r), 0);
	ck_assert_int_eq(parse("GET http://a.example/ HTTP/1.1\r\nHost: a", &r), 0);
	for (size_t i = 0; bad[i] != NULL; i++)
		ck_assert_msg(parse(bad[i], &r) == 400, "taken: %s", bad[i]);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(parse(big, &r), 431);
	/* NUL in the head. */
	static const char nul[] = "GET http://a.example/ HTTP/1.1\r\nX: \0\r\n\r\n";
	char why[ERR_LEN];
	ck_assert_int_eq(egress_req_parse(nul, sizeof(nul) - 1, &r, why, sizeof(why)), 400);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("egress_req");
	TCase *tc = tcase_create("egress_req");
	tcase_add_test(tc, connect_forms);
	tcase_add_test(tc, plain_is_rewritten);
	tcase_add_test(tc, incomplete_and_hostile);
	tcase_add_test(tc, inject_rewrites_each_head);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
