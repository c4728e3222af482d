/* pylit.c - see pylit.h. */
#include "autoconf.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pylit.h"

/*
 * The code point of the UTF-8 sequence at s[0..len), its length in *n;
 * -1 if it is not one valid, shortest-form, non-surrogate sequence.
 */
static int32_t
utf8_next(const unsigned char *s, size_t len, size_t *n)
{
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
	size_t k = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;

	if (s[0] >= 0xf5 || k == 0 || k > len)
		return -1;
	uint32_t cp = s[0] & (0x7f >> k);
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*n = k;
	return (int32_t)cp;
}

void
pylit_str(struct buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	buf_adds(b, "'");
	for (size_t i = 0; i < len;) {
		unsigned char c = p[i];
		size_t n = 1;
		int32_t cp;
		if (c == '\\' || c == '\'')
			buf_printf(b, "\\%c", c);
		else if (c == '\n')
			buf_adds(b, "\\n");
		else if (c == '\r')
			buf_adds(b, "\\r");
		else if (c == '\t')
			buf_adds(b, "\\t");
		else if (c < 0x20 || c == 0x7f)
			buf_printf(b, "\\x%02x", c);
		else if (c < 0x80)
			buf_add(b, &p[i], 1);
		else if ((cp = utf8_next(p + i, len - i, &n)) < 0)
			buf_printf(b, "\\udc%02x", c); /* surrogateescape; n stays 1 */
		else if (cp < 0x10000)
			buf_printf(b, "\\u%04x", (unsigned)cp);
		else
			buf_printf(b, "\\U%08x", (unsigned)cp);
		i += n;
	}
	buf_adds(b, "'");
}

char *
pylit(const char *s)
{
	struct buf b;

	buf_init(&b);
	pylit_str(&b, s, strlen(s));
	return buf_release(&b);
}

void
pylit_json(struct buf *b, struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
		buf_adds(b, "None");
		break;
	case json_type_boolean:
		buf_adds(b, json_object_get_boolean(o) ? "True" : "False");
		break;
	case json_type_int:
		if (json_object_get_int64(o) == INT64_MAX)
			buf_printf(b, "%llu", (unsigned long long)json_object_get_uint64(o));
		else
			buf_printf(b, "%lld", (long long)json_object_get_int64(o));
		break;
	case json_type_double: {
		double d = json_object_get_double(o);
		if (isnan(d))
			buf_adds(b, "float('nan')");
		else if (isinf(d))
			buf_adds(b, d > 0 ? "float('inf')" : "float('-inf')");
		else
			buf_printf(b, "float('%.17g')", d);
		break;
	}
	case json_type_string:
		pylit_str(b, json_object_get_string(o), (size_t)json_object_get_string_len(o));
		break;
	case json_type_array:
		buf_adds(b, "[");
		for (size_t i = 0; i < json_object_array_length(o); i++) {
			buf_adds(b, i ? ", " : "");
			pylit_json(b, json_object_array_get_idx(o, i));
		}
		buf_adds(b, "]");
		break;
	case json_type_object: {
		int first = 1;
		buf_adds(b, "{");
		json_object_object_foreach(o, k, v) {
			buf_adds(b, first ? "" : ", ");
			pylit_str(b, k, strlen(k));
			buf_adds(b, ": ");
			pylit_json(b, v);
			first = 0;
		}
		buf_adds(b, "}");
		break;
	}
	}
}
