/*
 * ipc_decode.c - the one decoder of ipc_msg.h: a frame's JSON payload into
 * its message struct, checked against the message's table (ipc_schema.c),
 * with a complaint naming the member at fault.
 */
#include "autoconf.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc_schema.h"
#include "xmalloc.h"

/* Where a decode is, for its complaint: "START", "limits.", "rich_outputs[2]." */
struct ctx {
	char *why;
	size_t why_len;
	const char *msg;  /* the message's name */
	char path[96];	  /* the enclosing members, each followed by '.' */
	int view;	  /* strings, texts and JSON values point into the payload */
};

static int __attribute__((format(printf, 3, 4)))
fail(struct ctx *c, const char *field, const char *fmt, ...)
{
	char what[160];
	va_list ap;
	/* "limits." names the object itself when no field of it is at fault. */
	int path_len = (int)strlen(c->path) - (field == NULL && c->path[0] != '\0');

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	err_set(c->why, c->why_len, "%s: %.*s%.60s%s%s", c->msg, path_len, c->path,
		field ? field : "", field || c->path[0] ? ": " : "", what);
	return -1;
}

static int decode_struct(struct ctx *c, const struct ipc_schema *s, struct json_object *o,
			 void *out);

/* Enter member `name` (item `index` of it if >= 0) of the path; a path too
 * deep for the buffer is cut, which only shortens a complaint. */
static void
path_push(struct ctx *c, const char *saved, const char *name, long index)
{
	int n = index >= 0 ? snprintf(c->path, sizeof(c->path), "%s%s[%ld].", saved, name, index)
			   : snprintf(c->path, sizeof(c->path), "%s%s.", saved, name);
	if (n >= (int)sizeof(c->path))
		c->path[sizeof(c->path) - 2] = '.';
}

static int
is_number(struct json_object *v)
{
	return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

/* A string without NUL within the field's rules; NULL (after fail) if not. */
static const char *
check_str(struct ctx *c, const struct ipc_field *f, struct json_object *v, const char *what)
{
	if (!json_object_is_type(v, json_type_string)) {
		fail(c, f->name, "%s must be a string", what);
		return NULL;
	}
	const char *s = json_object_get_string(v);
	size_t len = (size_t)json_object_get_string_len(v);
	double max = f->kind == IPC_K_STR ? f->hi : IPC_STR_MAX;
	if (strlen(s) != len) {
		fail(c, f->name, "%s holds a NUL character", what);
		return NULL;
	}
	if ((double)len > max) {
		fail(c, f->name, "%s is longer than %.0f bytes", what, max);
		return NULL;
	}
	if ((f->flags & IPC_NONEMPTY) && f->kind == IPC_K_STR && len == 0) {
		fail(c, f->name, "must not be empty");
		return NULL;
	}
	if ((f->flags & IPC_ABS) && s[0] != '/') {
		fail(c, f->name, "must be an absolute path");
		return NULL;
	}
	if (f->flags & IPC_NAME) {
		if (len == 0 || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					 "0123456789._-") != len ||
		    strcmp(s, ".") == 0 || strcmp(s, "..") == 0) {
			fail(c, f->name, "must be one path component of [A-Za-z0-9._-]");
			return NULL;
		}
	}
	return s;
}

/* An integer of the field's bounds into *out; 0 or -1. */
static int
get_integer(struct ctx *c, const struct ipc_field *f, struct json_object *v, long long *out)
{
	if (!json_object_is_type(v, json_type_int))
		return fail(c, f->name, "must be an integer in [%.0f, %.0f]", f->lo, f->hi);
	errno = 0;
	int64_t n = json_object_get_int64(v);
	/* json-c saturates what int64 cannot hold: out of every bound below. */
	if (errno != 0 || (double)n < f->lo || (double)n > f->hi)
		return fail(c, f->name, "must be an integer in [%.0f, %.0f]", f->lo, f->hi);
	*out = (long long)n;
	return 0;
}

static int
decode_strv(struct ctx *c, const struct ipc_field *f, struct json_object *v, char ***out)
{
	if (!json_object_is_type(v, json_type_array))
		return fail(c, f->name, "must be an array of strings");
	size_t n = json_object_array_length(v);
	if ((double)n > f->hi)
		return fail(c, f->name, "has more than %.0f items", f->hi);
	if ((f->flags & IPC_NONEMPTY) && n == 0)
		return fail(c, f->name, "must not be empty");
	char **vec = xcalloc(n + 1, sizeof(*vec));
	*out = vec; /* freed by the caller's free on failure */
	for (size_t i = 0; i < n; i++) {
		const char *s = check_str(c, f, json_object_array_get_idx(v, i), "each item");
		if (s == NULL)
			return -1;
		vec[i] = c->view ? (char *)s : xstrdup(s);
	}
	return 0;
}

static int
decode_env(struct ctx *c, const struct ipc_field *f, struct json_object *v, char ***out)
{
	size_t i = 0;

	if (!json_object_is_type(v, json_type_object))
		return fail(c, f->name, "must be an object of strings");
	size_t n = (size_t)json_object_object_length(v);
	if ((double)n > f->hi)
		return fail(c, f->name, "has more than %.0f members", f->hi);
	char **vec = xcalloc(n + 1, sizeof(*vec));
	*out = vec;
	json_object_object_foreach(v, name, val)
	{
		if (*name == '\0' || strchr(name, '=') || strlen(name) > 1024)
			return fail(c, f->name, "names must be non-empty, without '='");
		const char *s = check_str(c, f, val, "each value");
		if (s == NULL)
			return -1;
		vec[i++] = xasprintf("%s=%s", name, s);
	}
	return 0;
}

static int
decode_list(struct ctx *c, const struct ipc_field *f, struct json_object *v, char *at,
	    size_t *count)
{
	char saved[sizeof(c->path)];

	if (!json_object_is_type(v, json_type_array))
		return fail(c, f->name, "must be an array of objects");
	size_t n = json_object_array_length(v);
	if ((double)n > f->hi)
		return fail(c, f->name, "has more than %.0f items", f->hi);
	char *items = xcalloc(n ? n : 1, f->sub->size);
	*(char **)at = items;
	*count = n;
	memcpy(saved, c->path, sizeof(saved));
	for (size_t i = 0; i < n; i++) {
		path_push(c, saved, f->name, (long)i);
		if (decode_struct(c, f->sub, json_object_array_get_idx(v, i),
				  items + i * f->sub->size) == -1)
			return -1;
	}
	memcpy(c->path, saved, sizeof(saved));
	return 0;
}

/* Decode member v of field f into `at` (zeroed). */
static int
decode_field(struct ctx *c, const struct ipc_field *f, struct json_object *v, char *at)
{
	long long n = 0;
	double d;
	const char *s;

	switch (f->kind) {
	case IPC_K_BOOL:
		if (!json_object_is_type(v, json_type_boolean))
			return fail(c, f->name, "must be true or false");
		*(int *)at = json_object_get_boolean(v) ? 1 : 0;
		return 0;
	case IPC_K_INT:
	case IPC_K_U32:
	case IPC_K_U64:
		if (get_integer(c, f, v, &n) == -1)
			return -1;
		/* get_integer kept n within the field's bounds, which fit its type. */
		if (f->kind == IPC_K_INT)
			*(int *)at = (int)n;
		else if (f->kind == IPC_K_U32)
			*(uint32_t *)at = (uint32_t)n;
		else
			*(uint64_t *)at = (uint64_t)n;
		return 0;
	case IPC_K_DOUBLE:
		if (!is_number(v))
			return fail(c, f->name, "must be a number in [%g, %g]", f->lo, f->hi);
		d = json_object_get_double(v);
		if (!isfinite(d) || d < f->lo || d > f->hi)
			return fail(c, f->name, "must be a number in [%g, %g]", f->lo, f->hi);
		*(double *)at = d;
		return 0;
	case IPC_K_STR:
		if ((s = check_str(c, f, v, "it")) == NULL)
			return -1;
		*(char **)at = c->view ? (char *)s : xstrdup(s);
		return 0;
	case IPC_K_TEXT: {
		if (!json_object_is_type(v, json_type_string))
			return fail(c, f->name, "must be a string");
		size_t len = (size_t)json_object_get_string_len(v);
		if ((double)len > f->hi)
			return fail(c, f->name, "is longer than %.0f bytes", f->hi);
		struct ipc_text *t = (struct ipc_text *)at;
		t->len = len;
		if (c->view) {
			t->s = (char *)json_object_get_string(v); /* json-c ends it with NUL */
			return 0;
		}
		t->s = xmalloc(len + 1);
		memcpy(t->s, json_object_get_string(v), len);
		t->s[len] = '\0';
		return 0;
	}
	case IPC_K_STRV:
		return decode_strv(c, f, v, (char ***)at);
	case IPC_K_ENV:
		return decode_env(c, f, v, (char ***)at);
	case IPC_K_ENUM:
		if (json_object_is_type(v, json_type_string))
			for (int i = 0; f->choices[i]; i++)
				if (strcmp(json_object_get_string(v), f->choices[i]) == 0) {
					*(int *)at = i;
					return 0;
				}
		{
			char list[160] = "";
			for (int i = 0; f->choices[i]; i++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list),
					 "%s\"%s\"", i ? ", " : "", f->choices[i]);
			return fail(c, f->name, "must be one of %s", list);
		}
	case IPC_K_OBJ: {
		char saved[sizeof(c->path)];
		if (json_object_is_type(v, json_type_null) && (f->flags & IPC_NULL))
			return 0;
		void *sub = xcalloc(1, f->sub->size);
		*(void **)at = sub;
		memcpy(saved, c->path, sizeof(saved));
		path_push(c, saved, f->name, -1);
		int rc = decode_struct(c, f->sub, v, sub);
		if (rc == 0)
			memcpy(c->path, saved, sizeof(saved));
		return rc;
	}
	case IPC_K_LIST:
		return decode_list(c, f, v, at, (size_t *)(at - f->off + f->count_off));
	case IPC_K_JSON:
		if (v == NULL || json_object_is_type(v, json_type_null))
			return fail(c, f->name, "must not be null");
		if (c->view) {
			*(struct json_object **)at = v; /* borrowed, no reference taken */
			return 0;
		}
		/* A copy: the frame's payload and a decoded struct never share objects. */
		if (json_object_deep_copy(v, (struct json_object **)at, NULL) != 0)
			return fail(c, f->name, "cannot be copied");
		return 0;
	}
	return fail(c, f->name, "has an unknown kind");
}

static int
decode_struct(struct ctx *c, const struct ipc_schema *s, struct json_object *o, void *out)
{
	if (!json_object_is_type(o, json_type_object))
		return fail(c, NULL, "must be a JSON object");
	/* Extra members are junk a peer should not send: refuse, never ignore. */
	json_object_object_foreach(o, key, val)
	{
		size_t i;
		(void)val;
		for (i = 0; i < s->nfields && strcmp(s->fields[i].name, key) != 0; i++)
			;
		if (i == s->nfields)
			return fail(c, NULL, "unknown member \"%.40s\"", key);
	}
	for (size_t i = 0; i < s->nfields; i++) {
		const struct ipc_field *f = &s->fields[i];
		struct json_object *v;
		if (!json_object_object_get_ex(o, f->name, &v)) {
			if (f->flags & IPC_REQ)
				return fail(c, f->name, "is missing");
			continue;
		}
		if (decode_field(c, f, v, (char *)out + f->off) == -1)
			return -1;
	}
	char bad[IPC_ERR_LEN];
	if (s->check && s->check(out, bad, sizeof(bad)) == -1)
		return fail(c, NULL, "%s", bad);
	return 0;
}

/* ipc_msg_decode and ipc_msg_view: the same checks, copying or borrowing. */
static int
decode_frame(const struct ipc_msg *f, unsigned type, void *msg, char *why, size_t why_len,
	     int view)
{
	const struct ipc_schema *s = ipc_schema_of(type);
	struct ctx c = {why, why_len, ipc_type_name(type), "", view};

	if (s == NULL)
		return fail(&c, NULL, "has no fields to decode");
	memset(msg, 0, s->size);
	if (f->hdr.type != type) {
		err_set(why, why_len, "expected %s, got %s", ipc_type_name(type),
			ipc_type_name(f->hdr.type));
		return -1;
	}
	if (f->payload == NULL)
		return fail(&c, NULL, "empty payload");
	if (decode_struct(&c, s, f->payload, msg) == -1) {
		ipc_schema_free(s, msg, view);
		return -1;
	}
	return 0;
}

int
ipc_msg_decode(const struct ipc_msg *f, unsigned type, void *msg, char *why, size_t why_len)
{
	return decode_frame(f, type, msg, why, why_len, 0);
}

int
ipc_msg_view(const struct ipc_msg *f, unsigned type, void *msg, char *why, size_t why_len)
{
	return decode_frame(f, type, msg, why, why_len, 1);
}

int
ipc_empty_decode(const struct ipc_msg *f, unsigned type, char *why, size_t why_len)
{
	if (f->hdr.type != type) {
		err_set(why, why_len, "expected %s, got %s", ipc_type_name(type),
			ipc_type_name(f->hdr.type));
		return -1;
	}
	if (f->payload && json_object_object_length(f->payload) != 0) {
		err_set(why, why_len, "%s: takes no members", ipc_type_name(type));
		return -1;
	}
	return 0;
}
