/* b64.c - see b64.h. */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>

#include "b64.h"
#include "log.h"
#include "xmalloc.h"

static const char digits_std[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char digits_url[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* The value of digit c in alphabet a, or -1. */
static int
digit_value(unsigned char c, enum b64_alphabet a)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == (a == B64_URL ? '-' : '+'))
		return 62;
	if (c == (a == B64_URL ? '_' : '/'))
		return 63;
	return -1;
}

size_t
b64_encoded_len(size_t n, enum b64_alphabet a)
{
	if (n > (SIZE_MAX - 3) / 4 * 3)
		fatalx("b64_encoded_len: %zu bytes is too long", n);
	return a == B64_URL ? n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0) : (n + 2) / 3 * 4;
}

char *
b64_encode(const void *in, size_t n, enum b64_alphabet a)
{
	const unsigned char *p = in;
	const char *d = a == B64_URL ? digits_url : digits_std;
	char *out = xmalloc(b64_encoded_len(n, a) + 1), *o = out;
	size_t i;

	for (i = 0; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		*o++ = d[v >> 18 & 63];
		*o++ = d[v >> 12 & 63];
		*o++ = d[v >> 6 & 63];
		*o++ = d[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
		*o++ = d[v >> 18 & 63];
		*o++ = d[v >> 12 & 63];
		if (i + 1 < n)
			*o++ = d[v >> 6 & 63];
		else if (a == B64_STD)
			*o++ = '=';
		if (a == B64_STD)
			*o++ = '=';
	}
	*o = '\0';
	return out;
}

int
b64_decode(const char *in, size_t len, enum b64_alphabet a, unsigned char **out,
	   size_t *outlen)
{
	if (a == B64_STD) {
		if (len % 4 != 0)
			return -1;
		/* At most two '=', at the end only: the digits before them are checked below. */
		if (len > 0 && in[len - 1] == '=')
			len -= 1 + (in[len - 2] == '=');
	}
	if (len % 4 == 1)
		return -1;
	unsigned char *o = xmalloc(len / 4 * 3 + 3);
	size_t n = 0;
	uint32_t acc = 0;
	int bits = 0;

	for (size_t i = 0; i < len; i++) {
		int v = digit_value((unsigned char)in[i], a);
		if (v < 0)
			goto bad;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			o[n++] = (unsigned char)(acc >> bits);
		}
	}
	/* Left-over bits must be zero: one text per byte string, no malleability. */
	if ((acc & ((1u << bits) - 1)) != 0)
		goto bad;
	o[n] = '\0';
	*out = o;
	*outlen = n;
	return 0;
bad:
	free(o);
	return -1;
}
