/* test_egress_rules.c - egress.allow and egress.deny: parsing, matching, the rebinding check. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "egress_rules.h"
#include "err.h"

/* Rules from NULL-terminated lists; every one must parse. */
static void
load(struct egress_rules *r, const char *const *allow, const char *const *deny)
{
	char why[ERR_LEN];

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; allow != NULL && allow[i] != NULL; i++)
		ck_assert_msg(egress_rules_add(r, 0, allow[i], why, sizeof(why)) == 0, "%s: %s",
			      allow[i], why);
	for (size_t i = 0; deny != NULL && deny[i] != NULL; i++)
		ck_assert_msg(egress_rules_add(r, 1, deny[i], why, sizeof(why)) == 0, "%s: %s",
			      deny[i], why);
}

/* The verdict's rule for host:port, "" for none; the verdict in *allowed. */
static const char *
host(const struct egress_rules *r, const char *h, int port, int *allowed)
{
	struct egress_verdict v;

	egress_check_host(r, h, port, &v);
	*allowed = v.allowed;
	return v.rule != NULL ? v.rule : "";
}

static const char *
addr(const struct egress_rules *r, const char *text, int *allowed)
{
	unsigned char a[16];
	struct egress_verdict v;
	int v4 = strchr(text, ':') == NULL;

	ck_assert_int_eq(inet_pton(v4 ? AF_INET : AF_INET6, text, a), 1);
	egress_check_addr(r, a, v4 ? 4 : 16, &v);
	*allowed = v.allowed;
	return v.rule != NULL ? v.rule : "";
}

START_TEST(names_and_wildcards)
{
	static const char *const allow[] = {"pypi.example.com", "*.Corp.Example:8443",
					    "api.example.org:443", NULL};
	struct egress_rules r;
	int ok;

	load(&r, allow, NULL);
	ck_assert_str_eq(host(&r, "pypi.example.com", 443, &ok), "allow pypi.example.com");
	ck_assert_int_eq(ok, 1);
	ck_assert_str_eq(host(&r, "PYPI.Example.COM.", 80, &ok), "allow pypi.example.com");
	ck_assert_int_eq(ok, 1);
	ck_assert_str_eq(host(&r, "a.b.corp.example", 8443, &ok), "allow *.corp.example:8443");
	ck_assert_int_eq(ok, 1);
	host(&r, "corp.example", 8443, &ok);
	ck_assert_int_eq(ok, 0);
	host(&r, "evilcorp.example", 8443, &ok);
	ck_assert_int_eq(ok, 0);
	host(&r, "a.corp.example", 443, &ok);
	ck_assert_int_eq(ok, 0);
	host(&r, "api.example.org", 80, &ok);
	ck_assert_int_eq(ok, 0);
	ck_assert_str_eq(host(&r, "other.example.com", 443, &ok),
			 "default deny (no allow rule names the host)");
	ck_assert_int_eq(ok, 0);
	host(&r, "pypi.example.com.evil", 443, &ok);
	ck_assert_int_eq(ok, 0);
	egress_rules_free(&r);
}
END_TEST

START_TEST(deny_wins)
{
	static const char *const allow[] = {"*.example.com", "10.0.0.0/8", NULL};
	static const char *const deny[] = {"secret.example.com", "*.example.com:25",
					   "10.1.0.0/16", NULL};
	struct egress_rules r;
	int ok;

	load(&r, allow, deny);
	ck_assert_str_eq(host(&r, "secret.example.com", 443, &ok), "deny secret.example.com");
	ck_assert_int_eq(ok, 0);
	ck_assert_str_eq(host(&r, "mx.example.com", 25, &ok), "deny *.example.com:25");
	ck_assert_int_eq(ok, 0);
	ck_assert_str_eq(host(&r, "www.example.com", 443, &ok), "allow *.example.com");
	ck_assert_int_eq(ok, 1);
	ck_assert_str_eq(host(&r, "10.1.2.3", 80, &ok), "deny 10.1.0.0/16");
	ck_assert_int_eq(ok, 0);
	ck_assert_str_eq(host(&r, "10.2.2.3", 80, &ok), "allow 10.0.0.0/8");
	ck_assert_int_eq(ok, 1);
	/* A resolved address in a denied CIDR: the rebinding check. */
	ck_assert_str_eq(addr(&r, "10.1.9.9", &ok), "deny 10.1.0.0/16");
	ck_assert_int_eq(ok, 0);
	egress_rules_free(&r);
}
END_TEST

START_TEST(ip_literals_need_a_cidr)
{
	static const char *const allow[] = {"example.com", "192.0.2.0/24", "2001:db8::/32", NULL};
	struct egress_rules r;
	int ok;

	load(&r, allow, NULL);
	ck_assert_str_eq(host(&r, "198.51.100.7", 80, &ok),
			 "default deny (an IP literal needs an allow CIDR)");
	ck_assert_int_eq(ok, 0);
	ck_assert_str_eq(host(&r, "192.0.2.9", 80, &ok), "allow 192.0.2.0/24");
	ck_assert_int_eq(ok, 1);
	ck_assert_str_eq(host(&r, "[2001:DB8::1]", 443, &ok), "allow 2001:db8::/32");
	ck_assert_int_eq(ok, 1);
	ck_assert_str_eq(host(&r, "2001:db8::1", 443, &ok), "allow 2001:db8::/32");
	ck_assert_int_eq(ok, 1);
	host(&r, "[2001:db9::1]", 443, &ok);
	ck_assert_int_eq(ok, 0);
	/* IPv4-mapped IPv6 is the IPv4 address. */
	ck_assert_str_eq(host(&r, "[::ffff:192.0.2.1]", 80, &ok), "allow 192.0.2.0/24");
	ck_assert_int_eq(ok, 1);
	host(&r, "169.254.169.254", 80, &ok);
	ck_assert_int_eq(ok, 0);
	egress_rules_free(&r);
}
END_TEST

START_TEST(builtin_ranges)
{
	static const char *const allow[] = {"*.example.com", NULL};
	static const char *const lifted[] = {"127.0.0.1/32", NULL};
	struct egress_rules r;
	int ok;

	load(&r, allow, NULL);
	ck_assert_str_eq(addr(&r, "127.0.0.1", &ok), "built-in deny 127.0.0.0/8");
	ck_assert_int_eq(ok, 0);
	ck_assert_str_eq(addr(&r, "169.254.169.254", &ok), "built-in deny 169.254.0.0/16");
	ck_assert_str_eq(addr(&r, "100.100.100.200", &ok), "built-in deny 100.100.100.200/32");
	ck_assert_str_eq(addr(&r, "0.1.2.3", &ok), "built-in deny 0.0.0.0/8");
	ck_assert_str_eq(addr(&r, "::", &ok), "built-in deny ::/128");
	ck_assert_str_eq(addr(&r, "::1", &ok), "built-in deny ::1/128");
	ck_assert_str_eq(addr(&r, "fe80::1", &ok), "built-in deny fe80::/10");
	ck_assert_str_eq(addr(&r, "febf::1", &ok), "built-in deny fe80::/10");
	ck_assert_str_eq(addr(&r, "fd00:ec2::254", &ok), "built-in deny fd00:ec2::254/128");
	ck_assert_int_eq(ok, 0);
	ck_assert_str_eq(addr(&r, "::ffff:169.254.169.254", &ok), "built-in deny 169.254.0.0/16");
	ck_assert_int_eq(ok, 0);
	ck_assert_str_eq(addr(&r, "100.100.100.201", &ok), "");
	ck_assert_int_eq(ok, 1);
	ck_assert_str_eq(addr(&r, "fec0::1", &ok), "");
	ck_assert_int_eq(ok, 1);
	ck_assert_str_eq(addr(&r, "93.184.216.34", &ok), "");
	ck_assert_int_eq(ok, 1);
	egress_rules_free(&r);

	/* An explicit allow CIDR lifts the built-in denial, for that address only. */
	load(&r, lifted, NULL);
	ck_assert_str_eq(addr(&r, "127.0.0.1", &ok), "allow 127.0.0.1/32");
	ck_assert_int_eq(ok, 1);
	ck_assert_str_eq(addr(&r, "::ffff:127.0.0.1", &ok), "allow 127.0.0.1/32");
	ck_assert_int_eq(ok, 1);
	addr(&r, "127.0.0.2", &ok);
	ck_assert_int_eq(ok, 0);
	egress_rules_free(&r);
}
END_TEST

START_TEST(rule_text)
{
	static const char *const allow[] = {"Example.COM.", "10.0.0.1", "::ffff:10.9.0.0/112",
					    "FD00::/8", "*.a.example:1", NULL};
	struct egress_rules r;

	load(&r, allow, NULL);
	ck_assert_str_eq(r.allow[0].text, "allow example.com");
	ck_assert_str_eq(r.allow[1].text, "allow 10.0.0.1/32");
	ck_assert_str_eq(r.allow[2].text, "allow 10.9.0.0/16");
	ck_assert_str_eq(r.allow[3].text, "allow fd00::/8");
	ck_assert_str_eq(r.allow[4].text, "allow *.a.example:1");
	egress_rules_free(&r);
	ck_assert_uint_eq(r.n_allow, 0);
}
END_TEST

START_TEST(hostile_rules)
{
	static const char *const bad[] = {
		"", ".", "*", "*.", "a*.example.com", "*.*.example.com", "ex ample.com",
		"example..com", ".example.com", "example.com:", "example.com:0",
		"example.com:65536", "example.com:80x", "example.com:-1", "10.0.0.1:80",
		"10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/8x", "10.0.0.1/8",
		"300.1.2.3/8", "::1/129", "fe80::1/10", "[::1]:80", "exa\tmple.com",
		"examplé.com", "1.2.3/8", NULL};
	struct egress_rules r = {0};
	char why[ERR_LEN];
	char big[600];

	for (size_t i = 0; bad[i] != NULL; i++) {
		why[0] = '\0';
		ck_assert_msg(egress_rules_add(&r, 0, bad[i], why, sizeof(why)) == -1,
			      "\"%s\" was taken", bad[i]);
		ck_assert_msg(why[0] != '\0', "\"%s\": no reason", bad[i]);
	}
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(egress_rules_add(&r, 1, big, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "at most"));
	/* A name past 253 bytes, or with a label past 63, is no host name. */
	memset(big, 'a', 254);
	big[254] = '\0';
	ck_assert_int_eq(egress_rules_add(&r, 0, big, why, sizeof(why)), -1);
	big[64] = '.';
	big[80] = '\0';
	ck_assert_int_eq(egress_rules_add(&r, 0, big, why, sizeof(why)), -1);
	ck_assert_uint_eq(r.n_allow + r.n_deny, 0);
	memcpy(big + 63, ".com", 5);
	ck_assert_int_eq(egress_rules_add(&r, 0, big, why, sizeof(why)), 0);
	egress_rules_free(&r);
}
END_TEST

START_TEST(hostile_hosts)
{
	static const char *const allow[] = {"*.example.com", "0.0.0.0/0", "::/0", NULL};
	static const char *const bad[] = {"", ".", "..", "[]", "[", "[::1", "::1]", "a..example.com",
					  "a.example.com..", "a b.example.com", "a.example.com/x",
					  "a.example.com:80", "[a.example.com]", "fe80::1%eth0",
					  "a\r\n.example.com", NULL};
	struct egress_rules r;
	char big[400];
	int ok;

	load(&r, allow, NULL);
	for (size_t i = 0; bad[i] != NULL; i++) {
		ck_assert_str_eq(host(&r, bad[i], 443, &ok), "malformed host");
		ck_assert_int_eq(ok, 0);
	}
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big + sizeof(big) - 13, ".example.com", 12);
	ck_assert_str_eq(host(&r, big, 443, &ok), "malformed host");
	ck_assert_str_eq(host(&r, "www.example.com", 0, &ok), "malformed port");
	ck_assert_str_eq(host(&r, "www.example.com", 65536, &ok), "malformed port");
	ck_assert_int_eq(ok, 0);
	ck_assert_str_eq(host(&r, "WWW.EXAMPLE.COM.", 443, &ok), "allow *.example.com");
	ck_assert_int_eq(ok, 1);
	egress_rules_free(&r);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("egress_rules");
	TCase *tc = tcase_create("egress_rules");
	tcase_add_test(tc, names_and_wildcards);
	tcase_add_test(tc, deny_wins);
	tcase_add_test(tc, ip_literals_need_a_cidr);
	tcase_add_test(tc, builtin_ranges);
	tcase_add_test(tc, rule_text);
	tcase_add_test(tc, hostile_rules);
	tcase_add_test(tc, hostile_hosts);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
