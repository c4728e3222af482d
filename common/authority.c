/* authority.c - see authority.h. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>

#include "authority.h"
#include "err.h"

/* Longer values are refused before any other look: no authority is this long. */
#define AUTHORITY_INPUT_MAX 300
#define LABEL_MAX 63
#define NAME_MAX_LEN 253

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int
is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-' ||
	       c == '_';
}

/* The bracket-less IPv6 address of `len` bytes at `s`, canonicalized into a->host. */
static int
parse_ipv6(const char *s, size_t len, struct authority *a, char *why, size_t why_len)
{
	char text[64];
	struct in6_addr a6;

	/* inet_pton reads exactly these; '%' (a zone) and the rest are refused. */
	if (len == 0 || len >= sizeof(text) || strspn(s, "0123456789abcdefABCDEF:.") < len)
		return err_set(why, why_len, "not an IPv6 address");
	memcpy(text, s, len);
	text[len] = '\0';
	if (inet_pton(AF_INET6, text, &a6) != 1)
		return err_set(why, why_len, "not an IPv6 address");
	inet_ntop(AF_INET6, &a6, a->host, sizeof(a->host));
	a->kind = AUTHORITY_IPV6;
	return 0;
}

/* A canonical dotted quad: four parts 0-255, decimal, no leading zeros. */
static int
is_canonical_ipv4(const char *s, size_t len)
{
	int parts = 0;
	size_t i = 0;

	while (i <= len) {
		size_t start = i;
		int value = 0;
		while (i < len && is_digit(s[i]) && i - start < 3)
			value = value * 10 + (s[i++] - '0');
		size_t n = i - start;
		if (n == 0 || value > 255 || (n > 1 && s[start] == '0'))
			return 0;
		parts++;
		if (i == len)
			break;
		if (s[i] != '.' || parts == 4)
			return 0;
		i++;
	}
	return parts == 4;
}

/*
 * A name or an IPv4 address of `len` bytes at `s` into a->host. A name
 * whose last label is numeric or hexadecimal is an IPv4 address to a
 * browser, so it must then be a canonical dotted quad.
 */
static int
parse_name(const char *s, size_t len, struct authority *a, char *why, size_t why_len)
{
	int trailing_dot = len > 0 && s[len - 1] == '.';
	size_t n = trailing_dot ? len - 1 : len;

	if (n == 0)
		return err_set(why, why_len, "empty host");
	if (n > NAME_MAX_LEN)
		return err_set(why, why_len, "host name longer than 253 bytes");
	size_t label = 0, last = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '.') {
			if (label == 0)
				return err_set(why, why_len, "empty label in host name");
			label = 0;
			last = i + 1;
		} else if (!is_name_char(s[i])) {
			return err_set(why, why_len,
				       "host has a character other than letters, digits, "
				       "'-', '_' and '.'");
		} else if (++label > LABEL_MAX) {
			return err_set(why, why_len, "label of host name longer than 63 bytes");
		}
	}
	if (label == 0)
		return err_set(why, why_len, "empty label in host name");
	const char *tail = s + last;
	size_t tail_len = n - last;
	if (strspn(tail, "0123456789") >= tail_len ||
	    (tail_len >= 2 && tail[0] == '0' && (tail[1] == 'x' || tail[1] == 'X'))) {
		if (trailing_dot || !is_canonical_ipv4(s, n))
			return err_set(why, why_len,
				       "IPv4 address not in canonical dotted-quad form");
		a->kind = AUTHORITY_IPV4;
	} else {
		a->kind = AUTHORITY_NAME;
	}
	for (size_t i = 0; i < n; i++)
		a->host[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] - 'A' + 'a') : s[i];
	a->host[n] = '\0';
	return 0;
}

/* ":PORT" at `s` (or nothing). */
static int
parse_port(const char *s, struct authority *a, char *why, size_t why_len)
{
	if (s[0] == '\0') {
		a->port = -1;
		return 0;
	}
	if (s[0] != ':')
		return err_set(why, why_len, "unexpected character after the host");
	s++;
	size_t n = strspn(s, "0123456789");
	if (n == 0 || n > 5 || s[n] != '\0')
		return err_set(why, why_len, "port is not a number of 1 to 5 digits");
	long port = 0;
	for (size_t i = 0; i < n; i++)
		port = port * 10 + (s[i] - '0');
	if (port > 65535)
		return err_set(why, why_len, "port above 65535");
	a->port = (int)port;
	return 0;
}

/* Start a parse of s into *a (cleared, no port); refuse an s longer than
 * AUTHORITY_INPUT_MAX, calling it `what`. Its length in *len; 0 or -1 with why. */
static int
parse_begin(const char *s, const char *what, size_t *len, struct authority *a, char *why,
	    size_t why_len)
{
	*len = strnlen(s, AUTHORITY_INPUT_MAX + 1);
	memset(a, 0, sizeof(*a));
	a->port = -1;
	if (*len > AUTHORITY_INPUT_MAX)
		return err_set(why, why_len, "%s too long", what);
	return 0;
}

int
authority_parse(const char *s, struct authority *a, char *why, size_t why_len)
{
	size_t len;

	if (parse_begin(s, "authority", &len, a, why, why_len) == -1)
		return -1;
	if (s[0] == '[') {
		const char *end = strchr(s, ']');
		if (end == NULL)
			return err_set(why, why_len, "'[' without ']'");
		if (parse_ipv6(s + 1, (size_t)(end - s - 1), a, why, why_len) == -1)
			return -1;
		return parse_port(end + 1, a, why, why_len);
	}
	size_t host_len = strcspn(s, ":");
	if (parse_name(s, host_len, a, why, why_len) == -1)
		return -1;
	return parse_port(s + host_len, a, why, why_len);
}

int
authority_parse_host(const char *host, struct authority *a, char *why, size_t why_len)
{
	size_t len;

	if (parse_begin(host, "host", &len, a, why, why_len) == -1)
		return -1;
	if (memchr(host, ':', len) != NULL)
		return parse_ipv6(host, len, a, why, why_len);
	return parse_name(host, len, a, why, why_len);
}

int
origin_parse(const char *s, struct origin *o, char *why, size_t why_len)
{
	const char *rest;

	memset(o, 0, sizeof(*o));
	o->auth.port = -1;
	if (strncasecmp(s, "http://", 7) == 0) {
		strcpy(o->scheme, "http");
		rest = s + 7;
	} else if (strncasecmp(s, "https://", 8) == 0) {
		strcpy(o->scheme, "https");
		rest = s + 8;
	} else {
		return err_set(why, why_len, "not an http:// or https:// origin");
	}
	return authority_parse(rest, &o->auth, why, why_len);
}

int
authority_is_loopback(const struct authority *a)
{
	struct in6_addr a6;

	switch (a->kind) {
	case AUTHORITY_IPV4:
		/* Canonical form: the first part is exactly "127" for 127/8. */
		return strncmp(a->host, "127.", 4) == 0;
	case AUTHORITY_IPV6:
		return inet_pton(AF_INET6, a->host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
	case AUTHORITY_NAME:
		return strcmp(a->host, "localhost") == 0;
	}
	return 0;
}

int
authority_host_is_loopback(const char *host)
{
	struct authority a;
	return authority_parse_host(host, &a, NULL, 0) == 0 && authority_is_loopback(&a);
}

/* The port of `o`, with the scheme's default filled in. */
static int
origin_port(const struct origin *o)
{
	if (o->auth.port != -1)
		return o->auth.port;
	return strcmp(o->scheme, "https") == 0 ? 443 : 80;
}

int
origin_equal(const struct origin *a, const struct origin *b)
{
	return strcmp(a->scheme, b->scheme) == 0 && strcmp(a->auth.host, b->auth.host) == 0 &&
	       origin_port(a) == origin_port(b);
}

int
origin_serves(const struct origin *o, const struct authority *a)
{
	int port = a->port != -1 ? a->port : origin_port(o);
	return strcmp(o->auth.host, a->host) == 0 && port == origin_port(o);
}
