/*
 * fuzz_authority.c - the authority and origin parser on arbitrary bytes.
 *
 * Besides crashes it checks what the DNS-rebinding defence relies on: a
 * parsed host is normalized (lower case, no trailing dot, only the allowed
 * bytes), parsing its own normal form gives it back, and loopback is never
 * granted to anything but 127/8, ::1 and "localhost".
 */
#include "autoconf.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "authority.h"
#include "fuzz.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_authority: %s failed\n", #cond);                     \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* The invariants of a successfully parsed authority. */
static void
check_parsed(const struct authority *a)
{
	struct authority again;
	char text[AUTHORITY_HOST_MAX + 16];
	size_t len = strlen(a->host);

	CHECK(len > 0 && len <= AUTHORITY_HOST_MAX);
	CHECK(a->port >= -1 && a->port <= 65535);
	if (a->kind != AUTHORITY_IPV6) {
		CHECK(strspn(a->host, "abcdefghijklmnopqrstuvwxyz0123456789-_.") == len);
		CHECK(a->host[len - 1] != '.');
	}
	if (a->kind == AUTHORITY_IPV6)
		snprintf(text, sizeof(text), "[%s]", a->host);
	else
		snprintf(text, sizeof(text), "%s", a->host);
	if (a->port != -1)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), ":%d", a->port);
	CHECK(authority_parse(text, &again, NULL, 0) == 0);
	CHECK(again.kind == a->kind && again.port == a->port && strcmp(again.host, a->host) == 0);
	if (authority_is_loopback(a)) {
		struct in_addr a4;
		struct in6_addr a6;
		if (a->kind == AUTHORITY_IPV4)
			CHECK(inet_pton(AF_INET, a->host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127);
		else if (a->kind == AUTHORITY_IPV6)
			CHECK(inet_pton(AF_INET6, a->host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6));
		else
			CHECK(strcmp(a->host, "localhost") == 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	struct authority a;
	struct origin o;
	char why[ERR_LEN];

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	why[0] = '\0';
	if (authority_parse(s, &a, why, sizeof(why)) == 0)
		check_parsed(&a);
	else
		CHECK(why[0] != '\0');
	why[0] = '\0';
	if (origin_parse(s, &o, why, sizeof(why)) == 0) {
		check_parsed(&o.auth);
		CHECK(strcmp(o.scheme, "http") == 0 || strcmp(o.scheme, "https") == 0);
		CHECK(origin_equal(&o, &o));
	} else {
		CHECK(why[0] != '\0');
	}
	if (authority_parse_host(s, &a, NULL, 0) == 0) {
		CHECK(a.port == -1);
		CHECK(authority_host_is_loopback(s) == authority_is_loopback(&a));
	}
	free(s);
	return 0;
}
