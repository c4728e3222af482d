/*
 * hex.h - lower-case hex encoding of bytes (digests, signatures, keys).
 */
#ifndef COMMON_HEX_H
#define COMMON_HEX_H

#include <stddef.h>

/* Write the n bytes of `in` as 2*n hex digits plus NUL into out (size >= 2*n+1). */
void hex_encode(char *out, const void *in, size_t n);
/* Whether the string s is exactly len lower-case hex digits (what hex_encode writes). */
int hex_is(const char *s, size_t len);

#endif
