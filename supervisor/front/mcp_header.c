/* mcp_header.c - the SEP-2243 headers against the body; see mcp_header.h. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "mcp_header.h"
#include "mcp_rpc.h"
#include "tools.h"
#include "xmalloc.h"

#define ERR_HEADER_MISMATCH -32020

/* `v` without the optional whitespace HTTP allows around a field value. Caller frees. */
static char *
header_trim(const char *v)
{
	v += strspn(v, " \t");
	size_t n = strlen(v);
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	return xstrndup(v, n);
}

/*
 * A header's value as the body would hold it, into out: a value in the
 * "=?base64?...?=" sentinel is decoded. -1 if that encoding is bad.
 */
static int
header_decode(const char *v, char *out, size_t len)
{
	size_t n = strlen(v);

	if (n < 11 || strncmp(v, "=?base64?", 9) != 0 || strcmp(v + n - 2, "?=") != 0) {
		snprintf(out, len, "%s", v);
		return 0;
	}
	/* Strict base64 (padded, no whitespace); a NUL in the value or no room is bad too. */
	unsigned char *d;
	size_t dlen;
	if (b64_decode(v + 9, n - 11, B64_STD, &d, &dlen) == -1)
		return -1;
	int rc = dlen < len && memchr(d, '\0', dlen) == NULL ? 0 : -1;
	if (rc == 0)
		memcpy(out, d, dlen + 1);
	free(d);
	return rc;
}

int
mcp_header_matches(const char *h, const char *want, int decode)
{
	char *v = header_trim(h);
	int same;

	if (decode) {
		size_t len = strlen(v) + 1;
		char *d = xmalloc(len);
		same = header_decode(v, d, len) == 0 && strcmp(d, want) == 0;
		free(d);
	} else {
		same = strcmp(v, want) == 0;
	}
	free(v);
	return same;
}

int
mcp_header_check(const char *field, const char *h, const char *want, int decode,
		 struct json_object *id, struct mcp_response *rs)
{
	char text[400];

	if (h == NULL) {
		snprintf(text, sizeof(text), "Header mismatch: the %s header is required", field);
		mcp_set_error(rs, 400, id, ERR_HEADER_MISMATCH, text);
		return -1;
	}
	if (!mcp_header_matches(h, want, decode)) {
		snprintf(text, sizeof(text),
			 "Header mismatch: %s header value '%.64s' does not match body value "
			 "'%.64s'", field, h, want);
		mcp_set_error(rs, 400, id, ERR_HEADER_MISMATCH, text);
		return -1;
	}
	return 0;
}

/* The argument of the tools/call in `params` that names a kernel session, or NULL. */
static struct json_object *
session_argument(const struct config *cfg, struct json_object *params, const char **arg)
{
	struct json_object *name, *args, *v;
	const struct tool *t = NULL;

	*arg = NULL;
	if (json_object_object_get_ex(params, "name", &name) &&
	    json_object_is_type(name, json_type_string))
		t = tools_find(cfg, json_object_get_string(name));
	if (t == NULL || (*arg = tools_session_param(t)) == NULL)
		return NULL;
	if (!json_object_object_get_ex(params, "arguments", &args) ||
	    !json_object_is_type(args, json_type_object) ||
	    !json_object_object_get_ex(args, *arg, &v) || json_object_is_type(v, json_type_null))
		return NULL; /* null or absent: the client sends no header (SEP-2243) */
	return v;
}

int
mcp_header_params(const struct config *cfg, const struct mcp_request *rq,
		  struct json_object *params, struct json_object *id, struct mcp_response *rs)
{
	const char *arg;
	struct json_object *v = session_argument(cfg, params, &arg);
	char text[300];

	if (v == NULL) {
		if (rq->mcp_param_session == NULL)
			return 0;
		snprintf(text, sizeof(text),
			 "Header mismatch: the %s header is given, but the body has no %s "
			 "argument", MCP_PARAM_SESSION_HEADER,
			 arg ? arg : "execution_session_id");
		mcp_set_error(rs, 400, id, ERR_HEADER_MISMATCH, text);
		return -1;
	}
	/* An object or array is no id: the tool refuses it as one, with or without a header. */
	if (json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array))
		return 0;
	return mcp_header_check(MCP_PARAM_SESSION_HEADER, rq->mcp_param_session,
				json_object_get_string(v), 1, id, rs);
}
