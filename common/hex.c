/* hex.c - see hex.h. */
#include "autoconf.h"

#include <string.h>

#include "hex.h"

void
hex_encode(char *out, const void *in, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = in;

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

int
hex_is(const char *s, size_t len)
{
	return strlen(s) == len && strspn(s, "0123456789abcdef") == len;
}
