/*
 * fuzz_egress.c - the egress proxy's parsers on arbitrary bytes: a
 * kernel's request head (egress_req_parse) and, for an operator's typo,
 * a rule (egress_rules_add) with a host checked against it.
 *
 * Besides crashes it checks what the proxy relies on: a parsed request
 * names a host within bounds and a port of 1 to 65535; a rewritten head
 * ends its headers and carries no Proxy-* header of the client's; a host
 * that is allowed normalises, and no name rule allows an IP literal.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "egress_proxy_int.h"
#include "egress_rules.h"
#include "fuzz.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_egress: %s failed\n", #cond);                        \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static void
head(const char *buf, size_t len)
{
	struct egress_req r;
	char why[256];

	if (egress_req_parse(buf, len, &r, why, sizeof(why)) != 1)
		return;
	CHECK(r.host[0] != '\0' && strlen(r.host) < sizeof(r.host));
	CHECK(r.port >= 1 && r.port <= 65535);
	CHECK(r.head_len <= len && r.head_len <= EGRESS_HEAD_MAX);
	if (r.is_connect)
		return;
	CHECK(r.fwd_len >= 4 && memcmp(r.fwd + r.fwd_len - 4, "\r\n\r\n", 4) == 0);
	for (const char *p = strstr(r.fwd, "\r\n"); p != NULL; p = strstr(p + 2, "\r\n"))
		CHECK(strncasecmp(p + 2, "proxy-", 6) != 0);
	free(r.fwd);
}

/* "rule\nhost": the rule allowed, the host checked at port 443. */
static void
rule(const char *buf)
{
	struct egress_rules rules = {0};
	struct egress_verdict v;
	unsigned char ip[16];
	char norm[EGRESS_NAME_MAX + 2];
	const char *nl = strchr(buf, '\n');
	char text[600];

	if (nl == NULL || (size_t)(nl - buf) >= sizeof(text))
		return;
	memcpy(text, buf, (size_t)(nl - buf));
	text[nl - buf] = '\0';
	if (egress_rules_add(&rules, 0, text, NULL, 0) == -1)
		return;
	egress_check_host(&rules, nl + 1, 443, &v);
	if (v.allowed) {
		CHECK(egress_host_normalise(nl + 1, norm) == 0);
		CHECK(egress_ip_parse(norm, ip) == -1 || rules.allow[0].kind == EGRESS_RULE_CIDR);
	}
	egress_rules_free(&rules);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || size > 2 * EGRESS_HEAD_MAX)
		return 0;
	char *buf = malloc(size);
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	if (data[0] & 1)
		rule(buf);
	else
		head(buf, size - 1);
	free(buf);
	return 0;
}
