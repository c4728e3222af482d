/*
 * b64.h - base64 (RFC 4648): the padded standard alphabet and the unpadded
 * URL alphabet, strict on decoding (no whitespace, no other character,
 * padding exactly as the alphabet wants it, zero unused bits), so that one
 * byte string has one text.
 */
#ifndef COMMON_B64_H
#define COMMON_B64_H

#include <stddef.h>

enum b64_alphabet {
	B64_STD, /* A-Z a-z 0-9 + /, padded with '=' to a multiple of 4 */
	B64_URL, /* A-Z a-z 0-9 - _, no padding (section 5) */
};

/* Length of the encoding of n bytes, without its NUL. */
size_t b64_encoded_len(size_t n, enum b64_alphabet a);
/* The encoding of in[n], NUL-terminated. Caller owns. */
char *b64_encode(const void *in, size_t n, enum b64_alphabet a);
/*
 * Decode in[len]: 0 with *out (caller frees; NUL-terminated past *outlen)
 * and *outlen, or -1 for a text that is not strictly base64 of `a`.
 */
int b64_decode(const char *in, size_t len, enum b64_alphabet a, unsigned char **out,
	       size_t *outlen);

#endif
