/*
 * json_strict.h - an RFC 8259 syntax check to run before json-c parses
 * untrusted text.
 *
 * json-c, even with JSON_TOKENER_STRICT, accepts single-quoted strings,
 * NaN and Infinity, raw control bytes in strings and lone surrogates, and
 * it silently rewrites integers beyond 64 bits (99999999999999999999
 * becomes 18446744073709551615) and cuts member names at a \u0000. This
 * check refuses all of those, so what json-c then builds is exactly what
 * was sent; it also reports whether any string holds \u0000, which json-c
 * keeps in values but C code reading them would cut short.
 */
#ifndef COMMON_JSON_STRICT_H
#define COMMON_JSON_STRICT_H

#include <stddef.h>

struct json_strict {
	const char *error; /* why the text is refused (static), or NULL */
	size_t error_at;   /* byte offset of that error */
	int has_nul;	   /* some string or member name holds \u0000 */
};

/*
 * Check that `len` bytes at `text` are one JSON value (RFC 8259, with
 * optional white space around it), nested at most `max_depth` arrays and
 * objects deep, whose integers (numbers without fraction or exponent) fit
 * in a signed 64-bit integer, and whose \u escapes pair their surrogates.
 * UTF-8 validity is left to json-c (JSON_TOKENER_VALIDATE_UTF8).
 * Returns 0, or -1 with js->error and js->error_at set.
 */
int json_strict_check(const char *text, size_t len, int max_depth, struct json_strict *js);

#endif
