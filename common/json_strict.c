/* json_strict.c - see json_strict.h. */
#include "autoconf.h"

#include <string.h>

#include "json_strict.h"

/* The reader: the text, where it stands, and what it found. */
struct reader {
	const char *s;
	size_t len;
	size_t pos;
	int depth_left;
	struct json_strict *js;
};

static int value(struct reader *r);

static int
refuse(struct reader *r, const char *why)
{
	if (r->js->error == NULL) {
		r->js->error = why;
		r->js->error_at = r->pos;
	}
	return -1;
}

static int
at_end(const struct reader *r)
{
	return r->pos >= r->len;
}

static char
peek(const struct reader *r)
{
	return at_end(r) ? '\0' : r->s[r->pos];
}

static void
skip_space(struct reader *r)
{
	while (!at_end(r) && strchr(" \t\n\r", r->s[r->pos]) != NULL && r->s[r->pos] != '\0')
		r->pos++;
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Four hex digits after "\u": their value, or -1. */
static long
hex4(struct reader *r)
{
	long v = 0;

	if (r->len - r->pos < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = r->s[r->pos + i];
		int d = is_digit(c) ? c - '0'
			: (c >= 'a' && c <= 'f') ? c - 'a' + 10
			: (c >= 'A' && c <= 'F') ? c - 'A' + 10
						 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	r->pos += 4;
	return v;
}

/* A string, r->pos on its opening quote. */
static int
string(struct reader *r)
{
	r->pos++;
	for (;;) {
		if (at_end(r))
			return refuse(r, "unterminated string");
		unsigned char c = (unsigned char)r->s[r->pos];
		if (c == '"') {
			r->pos++;
			return 0;
		}
		if (c < 0x20)
			return refuse(r, "control character in a string (escape it)");
		if (c != '\\') {
			r->pos++;
			continue;
		}
		r->pos++;
		if (at_end(r))
			return refuse(r, "unterminated string");
		c = (unsigned char)r->s[r->pos++];
		if (c != 'u') {
			if (strchr("\"\\/bfnrt", c) == NULL || c == '\0')
				return refuse(r, "invalid escape in a string");
			continue;
		}
		long u = hex4(r);
		if (u < 0)
			return refuse(r, "invalid \\u escape in a string");
		if (u == 0)
			r->js->has_nul = 1;
		if (u >= 0xDC00 && u <= 0xDFFF)
			return refuse(r, "lone low surrogate in a string");
		if (u >= 0xD800 && u <= 0xDBFF) {
			if (r->len - r->pos < 2 || r->s[r->pos] != '\\' || r->s[r->pos + 1] != 'u')
				return refuse(r, "lone high surrogate in a string");
			r->pos += 2;
			long low = hex4(r);
			if (low < 0xDC00 || low > 0xDFFF)
				return refuse(r, "lone high surrogate in a string");
		}
	}
}

/* Nonzero if the `n` digits at `d` (no leading zeros) exceed `limit` (19 digits). */
static int
digits_exceed(const char *d, size_t n, const char *limit)
{
	if (n != 19)
		return n > 19;
	return memcmp(d, limit, 19) > 0;
}

/* A number: -?int frac? exp?; an integer must fit in int64. */
static int
number(struct reader *r)
{
	int negative = peek(r) == '-';
	int integer = 1;

	if (negative)
		r->pos++;
	size_t start = r->pos;
	if (peek(r) == '0') {
		r->pos++;
		if (is_digit(peek(r)))
			return refuse(r, "leading zero in a number");
	} else if (is_digit(peek(r))) {
		while (is_digit(peek(r)))
			r->pos++;
	} else {
		return refuse(r, "invalid number");
	}
	size_t ndigits = r->pos - start;
	if (peek(r) == '.') {
		integer = 0;
		r->pos++;
		if (!is_digit(peek(r)))
			return refuse(r, "no digit after the decimal point");
		while (is_digit(peek(r)))
			r->pos++;
	}
	if (peek(r) == 'e' || peek(r) == 'E') {
		integer = 0;
		r->pos++;
		if (peek(r) == '+' || peek(r) == '-')
			r->pos++;
		if (!is_digit(peek(r)))
			return refuse(r, "no digit in the exponent");
		while (is_digit(peek(r)))
			r->pos++;
	}
	if (integer && digits_exceed(r->s + start, ndigits,
				     negative ? "9223372036854775808" : "9223372036854775807")) {
		r->pos = start;
		return refuse(r, "integer beyond the signed 64-bit range");
	}
	return 0;
}

/* The literal `word` (true, false, null). */
static int
literal(struct reader *r, const char *word)
{
	size_t n = strlen(word);

	if (r->len - r->pos < n || memcmp(r->s + r->pos, word, n) != 0)
		return refuse(r, "invalid literal (only true, false and null)");
	r->pos += n;
	return 0;
}

/* An array or an object, r->pos on its opening bracket. */
static int
container(struct reader *r)
{
	char close = r->s[r->pos] == '[' ? ']' : '}';

	if (--r->depth_left < 0)
		return refuse(r, "nested too deep");
	r->pos++;
	skip_space(r);
	if (peek(r) == close && !at_end(r)) {
		r->pos++;
		r->depth_left++;
		return 0;
	}
	for (;;) {
		if (close == '}') {
			if (peek(r) != '"' || at_end(r))
				return refuse(r, "member name expected (a string in double quotes)");
			if (string(r) == -1)
				return -1;
			skip_space(r);
			if (peek(r) != ':' || at_end(r))
				return refuse(r, "':' expected after a member name");
			r->pos++;
			skip_space(r);
		}
		if (value(r) == -1)
			return -1;
		skip_space(r);
		if (at_end(r))
			return refuse(r, close == ']' ? "unterminated array" : "unterminated object");
		if (peek(r) == close) {
			r->pos++;
			r->depth_left++;
			return 0;
		}
		if (peek(r) != ',')
			return refuse(r, close == ']' ? "',' or ']' expected" : "',' or '}' expected");
		r->pos++;
		skip_space(r);
	}
}

static int
value(struct reader *r)
{
	if (at_end(r))
		return refuse(r, "value expected");
	switch (r->s[r->pos]) {
	case '{':
	case '[':
		return container(r);
	case '"':
		return string(r);
	case 't':
		return literal(r, "true");
	case 'f':
		return literal(r, "false");
	case 'n':
		return literal(r, "null");
	case '-':
		return number(r);
	case '\'':
		return refuse(r, "single quotes are not JSON (strings take double quotes)");
	case '/':
		return refuse(r, "comments are not JSON");
	default:
		if (is_digit(r->s[r->pos]))
			return number(r);
		return refuse(r, "value expected (NaN and Infinity are not JSON)");
	}
}

int
json_strict_check(const char *text, size_t len, int max_depth, struct json_strict *js)
{
	struct reader r = {.s = text, .len = len, .depth_left = max_depth, .js = js};

	js->error = NULL;
	js->error_at = 0;
	js->has_nul = 0;
	skip_space(&r);
	if (value(&r) == -1)
		return -1;
	skip_space(&r);
	if (!at_end(&r))
		return refuse(&r, "text after the JSON value");
	return 0;
}
