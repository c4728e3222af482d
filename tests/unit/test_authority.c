/*
 * test_authority.c - the one authority/origin parser and its loopback
 * verdicts, on the DNS-rebinding bypasses and on what browsers really send.
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "authority.h"

enum verdict {
	REFUSED,  /* does not parse: the request is refused */
	OTHER,	  /* parses, names something other than loopback */
	LOOPBACK, /* parses and names loopback */
};

struct row {
	const char *text;
	enum verdict want;
	const char *host; /* the normalized host when it parses, or NULL */
	int port;
};

/* Host header values (authorities). */
static const struct row hosts[] = {
	{"127.0.0.1", LOOPBACK, "127.0.0.1", -1},
	{"127.0.0.1:8000", LOOPBACK, "127.0.0.1", 8000},
	{"127.255.255.254:1", LOOPBACK, "127.255.255.254", 1},
	{"127.1.2.3:65535", LOOPBACK, "127.1.2.3", 65535},
	{"localhost", LOOPBACK, "localhost", -1},
	{"localhost:8000", LOOPBACK, "localhost", 8000},
	{"LOCALHOST:8000", LOOPBACK, "localhost", 8000},
	{"LocalHost.:80", LOOPBACK, "localhost", 80},
	{"localhost.", LOOPBACK, "localhost", -1},
	{"[::1]", LOOPBACK, "::1", -1},
	{"[::1]:8000", LOOPBACK, "::1", 8000},
	{"[0:0:0:0:0:0:0:1]:8000", LOOPBACK, "::1", 8000},
	{"[0000::0001]", LOOPBACK, "::1", -1},
	/* Known bypasses: names that start like loopback. */
	{"127.0.0.1.evil.com", OTHER, "127.0.0.1.evil.com", -1},
	{"127.0.0.1.evil.com:8000", OTHER, "127.0.0.1.evil.com", 8000},
	{"127.attacker.example", OTHER, "127.attacker.example", -1},
	{"127.0.0.1.nip.io", OTHER, "127.0.0.1.nip.io", -1},
	{"localhost.evil.com", OTHER, "localhost.evil.com", -1},
	{"localhost.evil.com.", OTHER, "localhost.evil.com", -1},
	{"localhostx", OTHER, "localhostx", -1},
	{"xlocalhost", OTHER, "xlocalhost", -1},
	{"evil.com", OTHER, "evil.com", -1},
	{"Evil.COM:443", OTHER, "evil.com", 443},
	{"my_host.internal", OTHER, "my_host.internal", -1},
	{"10.0.0.1:8000", OTHER, "10.0.0.1", 8000},
	{"0.0.0.0", OTHER, "0.0.0.0", -1},
	{"128.0.0.1", OTHER, "128.0.0.1", -1},
	{"[::]:80", OTHER, "::", 80},
	{"[::2]", OTHER, "::2", -1},
	{"[::ffff:127.0.0.1]", OTHER, "::ffff:127.0.0.1", -1},
	{"[2001:DB8::1]:443", OTHER, "2001:db8::1", 443},
	/* Shorthand, integer, octal and hex IPv4 forms: not canonical, refused. */
	{"127.1", REFUSED, NULL, 0},
	{"127.1:8000", REFUSED, NULL, 0},
	{"127.0.1", REFUSED, NULL, 0},
	{"2130706433", REFUSED, NULL, 0},
	{"2130706433:8000", REFUSED, NULL, 0},
	{"0x7f.1", REFUSED, NULL, 0},
	{"0x7f000001", REFUSED, NULL, 0},
	{"0177.0.0.1", REFUSED, NULL, 0},
	{"127.000.000.001", REFUSED, NULL, 0},
	{"127.0.0.01", REFUSED, NULL, 0},
	{"127.0.0.256", REFUSED, NULL, 0},
	{"127.0.0.1.", REFUSED, NULL, 0},
	{"1.2.3.4.5", REFUSED, NULL, 0},
	{"evil.com.1", REFUSED, NULL, 0},
	{"evil.0x1", REFUSED, NULL, 0},
	/* Userinfo, percent-encoding, odd characters, bad ports and brackets. */
	{"127.0.0.1@evil.com", REFUSED, NULL, 0},
	{"user:pass@localhost", REFUSED, NULL, 0},
	{"localhost%2eevil.com", REFUSED, NULL, 0},
	{"%6cocalhost", REFUSED, NULL, 0},
	{"127.0.0.1%00.evil.com", REFUSED, NULL, 0},
	{"local host", REFUSED, NULL, 0},
	{"localhost\r\nX: y", REFUSED, NULL, 0},
	{"localhost/", REFUSED, NULL, 0},
	{"localhost:", REFUSED, NULL, 0},
	{"localhost:80:80", REFUSED, NULL, 0},
	{"localhost:65536", REFUSED, NULL, 0},
	{"localhost:123456", REFUSED, NULL, 0},
	{"localhost:-1", REFUSED, NULL, 0},
	{"localhost:0x50", REFUSED, NULL, 0},
	{"localhost..", REFUSED, NULL, 0},
	{".localhost", REFUSED, NULL, 0},
	{"a..b", REFUSED, NULL, 0},
	{"::1", REFUSED, NULL, 0},
	{"::1:8000", REFUSED, NULL, 0},
	{"[::1", REFUSED, NULL, 0},
	{"[::1]x", REFUSED, NULL, 0},
	{"[::1]]", REFUSED, NULL, 0},
	{"[::1%25lo]", REFUSED, NULL, 0},
	{"[fe80::1%lo]:80", REFUSED, NULL, 0},
	{"[127.0.0.1]", REFUSED, NULL, 0},
	{"[]", REFUSED, NULL, 0},
	{"", REFUSED, NULL, 0},
	{".", REFUSED, NULL, 0},
	{":8000", REFUSED, NULL, 0},
	{"l\xc3\xb6" "calhost", REFUSED, NULL, 0},
};

/* Origin header values. */
static const struct row origins[] = {
	{"http://localhost:8000", LOOPBACK, "localhost", 8000},
	{"http://localhost", LOOPBACK, "localhost", -1},
	{"https://localhost.", LOOPBACK, "localhost", -1},
	{"HTTP://LOCALHOST:3000", LOOPBACK, "localhost", 3000},
	{"http://127.0.0.1:8000", LOOPBACK, "127.0.0.1", 8000},
	{"http://[::1]:8000", LOOPBACK, "::1", 8000},
	{"http://127.attacker.example", OTHER, "127.attacker.example", -1},
	{"http://127.0.0.1.evil.com", OTHER, "127.0.0.1.evil.com", -1},
	{"http://127.0.0.1.nip.io:8000", OTHER, "127.0.0.1.nip.io", 8000},
	{"http://localhost.evil.com", OTHER, "localhost.evil.com", -1},
	{"https://app.example.org", OTHER, "app.example.org", -1},
	{"http://127.0.0.1@evil.com", REFUSED, NULL, 0},
	{"http://evil.com@127.0.0.1", REFUSED, NULL, 0},
	{"http://127.1", REFUSED, NULL, 0},
	{"http://2130706433", REFUSED, NULL, 0},
	{"http://0x7f.1", REFUSED, NULL, 0},
	{"http://localhost:8000/", REFUSED, NULL, 0},
	{"http://localhost/path", REFUSED, NULL, 0},
	{"http://localhost?x", REFUSED, NULL, 0},
	{"http://localhost#x", REFUSED, NULL, 0},
	{"http://%6cocalhost", REFUSED, NULL, 0},
	{"http://", REFUSED, NULL, 0},
	{"http:/localhost", REFUSED, NULL, 0},
	{"http:localhost", REFUSED, NULL, 0},
	{"//localhost", REFUSED, NULL, 0},
	{"localhost", REFUSED, NULL, 0},
	{"null", REFUSED, NULL, 0},
	{"", REFUSED, NULL, 0},
	{" http://localhost", REFUSED, NULL, 0},
	{"http://localhost ", REFUSED, NULL, 0},
	{"ftp://localhost", REFUSED, NULL, 0},
	{"file://", REFUSED, NULL, 0},
	{"chrome-extension://abcdef", REFUSED, NULL, 0},
	{"ws://localhost", REFUSED, NULL, 0},
};

static void
check_row(const struct row *r, int rc, const struct authority *a, const char *why)
{
	if (r->want == REFUSED) {
		ck_assert_msg(rc == -1, "\"%s\" parsed (host %s), want refused", r->text, a->host);
		ck_assert_str_ne(why, "");
		return;
	}
	ck_assert_msg(rc == 0, "\"%s\" refused (%s), want parsed", r->text, why);
	ck_assert_str_eq(a->host, r->host);
	ck_assert_int_eq(a->port, r->port);
	ck_assert_msg(authority_is_loopback(a) == (r->want == LOOPBACK), "\"%s\": loopback %d",
		      r->text, authority_is_loopback(a));
}

START_TEST(host_table)
{
	const struct row *r = &hosts[_i];
	struct authority a;
	char why[ERR_LEN] = "";

	int rc = authority_parse(r->text, &a, why, sizeof(why));

	check_row(r, rc, &a, why);
}
END_TEST

START_TEST(origin_table)
{
	const struct row *r = &origins[_i];
	struct origin o;
	char why[ERR_LEN] = "";

	int rc = origin_parse(r->text, &o, why, sizeof(why));

	check_row(r, rc, &o.auth, why);
}
END_TEST

/* Over-long values are refused, not truncated into something that passes. */
START_TEST(over_long)
{
	char big[2048];
	struct authority a;
	struct origin o;

	/* 63-byte labels: 4 make a 255-byte name, one too long. */
	memset(big, 'a', sizeof(big));
	for (int i = 63; i < 300; i += 64)
		big[i] = '.';
	big[253] = '\0';
	ck_assert_int_eq(authority_parse(big, &a, NULL, 0), 0);
	big[253] = 'a';
	big[254] = '\0';
	ck_assert_int_eq(authority_parse(big, &a, NULL, 0), -1);
	/* A 64-byte label. */
	memset(big, 'a', 64);
	strcpy(big + 64, ".example");
	ck_assert_int_eq(authority_parse(big, &a, NULL, 0), -1);
	/* A long tail after a loopback prefix must not be cut off. */
	snprintf(big, sizeof(big), "http://localhost:8000");
	memset(big + strlen(big), '0', 1500);
	big[21 + 1500] = '\0';
	ck_assert_int_eq(origin_parse(big, &o, NULL, 0), -1);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(authority_parse(big, &a, NULL, 0), -1);
	ck_assert_int_eq(authority_host_is_loopback(big), 0);
}
END_TEST

/* The listen address: a bare host, IPv6 without brackets. */
START_TEST(bare_hosts)
{
	ck_assert(authority_host_is_loopback("127.0.0.1"));
	ck_assert(authority_host_is_loopback("127.9.9.9"));
	ck_assert(authority_host_is_loopback("::1"));
	ck_assert(authority_host_is_loopback("localhost"));
	ck_assert(authority_host_is_loopback("LOCALHOST."));
	ck_assert(!authority_host_is_loopback("0.0.0.0"));
	ck_assert(!authority_host_is_loopback("::"));
	ck_assert(!authority_host_is_loopback("127.evil.com"));
	ck_assert(!authority_host_is_loopback("127.1"));
	ck_assert(!authority_host_is_loopback("[::1]"));
	ck_assert(!authority_host_is_loopback("127.0.0.1:80"));
	ck_assert(!authority_host_is_loopback(""));
}
END_TEST

/* allowed_origins: scheme, host and port, default ports filled in. */
START_TEST(origin_matching)
{
	struct origin a, b;
	struct authority h;

	ck_assert_int_eq(origin_parse("https://App.Example.org", &a, NULL, 0), 0);
	ck_assert_int_eq(origin_parse("https://app.example.org:443", &b, NULL, 0), 0);
	ck_assert(origin_equal(&a, &b));
	ck_assert_int_eq(origin_parse("http://app.example.org", &b, NULL, 0), 0);
	ck_assert(!origin_equal(&a, &b));
	ck_assert_int_eq(origin_parse("https://app.example.org:8443", &b, NULL, 0), 0);
	ck_assert(!origin_equal(&a, &b));
	ck_assert_int_eq(origin_parse("https://app.example.org.evil.com", &b, NULL, 0), 0);
	ck_assert(!origin_equal(&a, &b));

	ck_assert_int_eq(authority_parse("app.example.org", &h, NULL, 0), 0);
	ck_assert(origin_serves(&a, &h));
	ck_assert_int_eq(authority_parse("APP.example.org.:443", &h, NULL, 0), 0);
	ck_assert(origin_serves(&a, &h));
	ck_assert_int_eq(authority_parse("app.example.org:80", &h, NULL, 0), 0);
	ck_assert(!origin_serves(&a, &h));
	ck_assert_int_eq(authority_parse("app.example.org.evil.com", &h, NULL, 0), 0);
	ck_assert(!origin_serves(&a, &h));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("authority");
	TCase *tc = tcase_create("authority");
	int n_hosts = (int)(sizeof(hosts) / sizeof(hosts[0]));
	int n_origins = (int)(sizeof(origins) / sizeof(origins[0]));

	tcase_add_loop_test(tc, host_table, 0, n_hosts);
	tcase_add_loop_test(tc, origin_table, 0, n_origins);
	tcase_add_test(tc, over_long);
	tcase_add_test(tc, bare_hosts);
	tcase_add_test(tc, origin_matching);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
