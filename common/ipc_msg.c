/*
 * ipc_msg.c - see ipc_msg.h. Each message is a struct described by a table
 * of fields; one decoder, one encoder and one free walk the tables.
 */
#include "autoconf.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc_msg.h"
#include "xmalloc.h"

/* Bounds of what no field may exceed, whatever its table says. */
#define STR_MAX (1u << 20)   /* one path, name or environment value */
#define VEC_MAX 4096	     /* items of an argv, env or allow_mime */
#define TEXT_MAX IPC_MAX_PAYLOAD

enum kind {
	K_BOOL,	  /* int, 0 or 1 */
	K_INT,	  /* int */
	K_U32,	  /* uint32_t */
	K_U64,	  /* uint64_t (bounds below 2^53) */
	K_DOUBLE, /* double, finite */
	K_STR,	  /* char *, no NUL, at most hi bytes */
	K_TEXT,	  /* struct ipc_text, at most hi bytes */
	K_STRV,	  /* char **, NULL-terminated; an array of K_STR on the wire */
	K_ENV,	  /* char ** of "NAME=value"; an object of strings on the wire */
	K_ENUM,	  /* an enum; one of `choices` on the wire */
	K_OBJ,	  /* pointer to a struct of `sub`; NULL when absent (or null) */
	K_LIST,	  /* array of structs of `sub`, count at count_off */
	K_JSON,	  /* struct json_object *: any JSON value but null */
};

/* Field flags. */
#define IPC_REQ 0x01	  /* must be present */
#define IPC_OPT 0x00	  /* may be absent: zero then, and left out when zero */
#define IPC_NONEMPTY 0x02 /* a string or list with at least one item */
#define IPC_ABS 0x04	  /* a string starting with '/' */
#define IPC_NAME 0x08	  /* one path component of [A-Za-z0-9._-] */
#define IPC_NULL 0x10	  /* K_OBJ: null on the wire is NULL */

struct schema;

struct field {
	const char *name;
	enum kind kind;
	size_t off;
	unsigned flags;
	double lo, hi; /* numbers: bounds; strings and lists: hi is the maximum length */
	const char *const *choices; /* K_ENUM, NULL-terminated */
	const struct schema *sub;   /* K_OBJ, K_LIST */
	size_t count_off;	    /* K_LIST */
};

struct schema {
	const char *name; /* for errors: "START", "START.limits" */
	size_t size;
	const struct field *fields;
	size_t nfields;
	/* A rule between fields, once each is valid; 0, or -1 with what is wrong in why. */
	int (*check)(const void *msg, char *why, size_t why_len);
};

#define M(S, m) offsetof(struct S, m)
#define IPC_F_BOOL(S, n, m, fl) {n, K_BOOL, M(S, m), fl, 0, 1, NULL, NULL, 0}
#define IPC_F_INT(S, n, m, lo, hi, fl) {n, K_INT, M(S, m), fl, lo, hi, NULL, NULL, 0}
#define IPC_F_U32(S, n, m, lo, hi, fl) {n, K_U32, M(S, m), fl, lo, hi, NULL, NULL, 0}
#define IPC_F_U64(S, n, m, lo, hi, fl) {n, K_U64, M(S, m), fl, lo, hi, NULL, NULL, 0}
#define IPC_F_DOUBLE(S, n, m, lo, hi, fl) {n, K_DOUBLE, M(S, m), fl, lo, hi, NULL, NULL, 0}
#define IPC_F_STR(S, n, m, max, fl) {n, K_STR, M(S, m), fl, 0, max, NULL, NULL, 0}
#define IPC_F_TEXT(S, n, m, max, fl) {n, K_TEXT, M(S, m), fl, 0, max, NULL, NULL, 0}
#define IPC_F_STRV(S, n, m, max, fl) {n, K_STRV, M(S, m), fl, 0, max, NULL, NULL, 0}
#define IPC_F_ENV(S, n, m, fl) {n, K_ENV, M(S, m), fl, 0, VEC_MAX, NULL, NULL, 0}
#define IPC_F_ENUM(S, n, m, ch, fl) {n, K_ENUM, M(S, m), fl, 0, 0, ch, NULL, 0}
#define IPC_F_OBJ(S, n, m, sub, fl) {n, K_OBJ, M(S, m), fl, 0, 0, NULL, &sub, 0}
#define IPC_F_LIST(S, n, m, cnt, max, sub, fl) \
	{n, K_LIST, M(S, m), fl, 0, max, NULL, &sub, M(S, cnt)}
#define IPC_F_JSON(S, n, m, fl) {n, K_JSON, M(S, m), fl, 0, 0, NULL, NULL, 0}
#define SCHEMA(nm, S, tbl, chk) {nm, sizeof(struct S), tbl, sizeof(tbl) / sizeof(tbl[0]), chk}

/* ---- The messages ---- */

static const char *const interrupt_modes[] = {"signal", "message", NULL};
static const char *const stream_names[] = {"stdout", "stderr", NULL};

static const struct field limits_fields[] = {
	IPC_F_U64(ipc_limits, "memory_mb", memory_mb, 0, 1 << 30, IPC_OPT),
	IPC_F_U64(ipc_limits, "pids", pids, 0, 1 << 22, IPC_OPT),
	IPC_F_DOUBLE(ipc_limits, "cpu", cpu, 0, 4096, IPC_OPT),
	IPC_F_U64(ipc_limits, "nofile", nofile, 0, 1 << 20, IPC_OPT),
	IPC_F_U64(ipc_limits, "fsize_mb", fsize_mb, 0, 1 << 30, IPC_OPT),
};
static const struct schema limits_schema = SCHEMA("limits", ipc_limits, limits_fields, NULL);

static const struct field cgroup_ctl_fields[] = {
	IPC_F_INT(ipc_cgroup_ctl, "version", version, 1, 2, IPC_REQ),
	IPC_F_STR(ipc_cgroup_ctl, "parent", parent, 4096, IPC_REQ | IPC_ABS),
};
static const struct schema cgroup_ctl_schema =
	SCHEMA("cgroup controller", ipc_cgroup_ctl, cgroup_ctl_fields, NULL);

/* The members are cgroup_ctl_name()'s names, in enum cgroup_ctl's order. */
static const struct field cgroup_fields[] = {
	IPC_F_STR(ipc_cgroup, "name", name, 200, IPC_REQ | IPC_NAME),
	IPC_F_OBJ(ipc_cgroup, "memory", memory, cgroup_ctl_schema, IPC_OPT),
	IPC_F_OBJ(ipc_cgroup, "pids", pids, cgroup_ctl_schema, IPC_OPT),
	IPC_F_OBJ(ipc_cgroup, "cpu", cpu, cgroup_ctl_schema, IPC_OPT),
	IPC_F_OBJ(ipc_cgroup, "freezer", freezer, cgroup_ctl_schema, IPC_OPT),
};
static const struct schema cgroup_schema = SCHEMA("cgroup", ipc_cgroup, cgroup_fields, NULL);

static int
start_check(const void *msg, char *why, size_t why_len)
{
	const struct ipc_start *s = msg;

	if ((s->uid == 0) != (s->gid == 0))
		return err_set(why, why_len, "uid and gid must come together");
	if (s->limits && (s->limits->memory_mb || s->limits->pids || s->limits->cpu > 0) &&
	    s->cgroup == NULL)
		return err_set(why, why_len,
			       "limits.memory_mb, pids and cpu need a cgroup layout");
	return 0;
}

static const struct field start_fields[] = {
	IPC_F_STRV(ipc_start, "argv", argv, VEC_MAX, IPC_REQ | IPC_NONEMPTY),
	IPC_F_ENV(ipc_start, "env", env, IPC_REQ),
	IPC_F_STR(ipc_start, "cwd", cwd, 4096, IPC_REQ | IPC_ABS),
	IPC_F_STR(ipc_start, "runtime_dir", runtime_dir, 4096, IPC_REQ | IPC_ABS),
	IPC_F_STRV(ipc_start, "allow_mime", allow_mime, VEC_MAX, IPC_OPT),
	IPC_F_ENUM(ipc_start, "interrupt_mode", interrupt_mode, interrupt_modes, IPC_OPT),
	IPC_F_DOUBLE(ipc_start, "startup_timeout_s", startup_timeout_s, 0, 86400, IPC_OPT),
	IPC_F_ENUM(ipc_start, "network_mode", network_mode, net_mode_names, IPC_OPT),
	/* never 0 when present: a kernel never runs as root */
	IPC_F_U32(ipc_start, "uid", uid, 1, UINT32_MAX - 1, IPC_OPT),
	IPC_F_U32(ipc_start, "gid", gid, 1, UINT32_MAX - 1, IPC_OPT),
	IPC_F_OBJ(ipc_start, "limits", limits, limits_schema, IPC_OPT),
	IPC_F_OBJ(ipc_start, "cgroup", cgroup, cgroup_schema, IPC_OPT),
};
static const struct schema start_schema = SCHEMA("START", ipc_start, start_fields, start_check);

static const struct field execute_fields[] = {
	IPC_F_TEXT(ipc_execute, "code", code, TEXT_MAX, IPC_REQ),
	IPC_F_DOUBLE(ipc_execute, "timeout_s", timeout_s, 0, 1e9, IPC_REQ),
	IPC_F_BOOL(ipc_execute, "silent", silent, IPC_OPT),
	IPC_F_U64(ipc_execute, "output_limit", output_limit, 0, INT_MAX, IPC_OPT),
	IPC_F_U64(ipc_execute, "rich_limit", rich_limit, 0, INT_MAX, IPC_OPT),
	IPC_F_BOOL(ipc_execute, "stream", stream, IPC_OPT),
};
static const struct schema execute_schema =
	SCHEMA("EXECUTE", ipc_execute, execute_fields, NULL);

static const struct field ready_fields[] = {
	/* 0 and 1 are never a worker's child */
	IPC_F_INT(ipc_ready, "kernel_pid", kernel_pid, 2, INT_MAX, IPC_REQ),
	IPC_F_STR(ipc_ready, "language", language, 200, IPC_REQ),
	IPC_F_BOOL(ipc_ready, "restarted", restarted, IPC_REQ),
};
static const struct schema ready_schema = SCHEMA("READY", ipc_ready, ready_fields, NULL);

static const struct field output_fields[] = {
	IPC_F_ENUM(ipc_output, "name", name, stream_names, IPC_REQ),
	IPC_F_TEXT(ipc_output, "text", text, TEXT_MAX, IPC_REQ),
};
static const struct schema output_schema = SCHEMA("OUTPUT", ipc_output, output_fields, NULL);

static const struct field streaming_fields[] = {
	IPC_F_TEXT(ipc_streaming, "stdout", out, TEXT_MAX, IPC_OPT),
	IPC_F_TEXT(ipc_streaming, "stderr", err, TEXT_MAX, IPC_OPT),
};
static const struct schema streaming_schema =
	SCHEMA("STREAMING", ipc_streaming, streaming_fields, NULL);

static const struct field rich_fields[] = {
	IPC_F_STR(ipc_rich, "mime_type", mime_type, 255, IPC_REQ | IPC_NONEMPTY),
	IPC_F_JSON(ipc_rich, "data", data, IPC_REQ),
};
static const struct schema rich_schema = SCHEMA("rich output", ipc_rich, rich_fields, NULL);

static const struct field error_fields[] = {
	IPC_F_TEXT(ipc_exec_error, "type", type, 4096, IPC_REQ),
	IPC_F_TEXT(ipc_exec_error, "message", message, TEXT_MAX, IPC_REQ),
	IPC_F_TEXT(ipc_exec_error, "traceback", traceback, TEXT_MAX, IPC_REQ),
};
static const struct schema error_schema = SCHEMA("error", ipc_exec_error, error_fields, NULL);

static const struct field lost_fields[] = {
	IPC_F_U64(ipc_output_lost, "messages", messages, 0, UINT64_MAX >> 11, IPC_OPT),
	IPC_F_U64(ipc_output_lost, "bytes", bytes, 0, UINT64_MAX >> 11, IPC_OPT),
	IPC_F_TEXT(ipc_output_lost, "reason", reason, 4096, IPC_REQ),
};
static const struct schema lost_schema = SCHEMA("output_lost", ipc_output_lost, lost_fields, NULL);

static const struct field result_fields[] = {
	IPC_F_BOOL(ipc_result, "success", success, IPC_REQ),
	IPC_F_TEXT(ipc_result, "stdout", out, TEXT_MAX, IPC_REQ),
	IPC_F_TEXT(ipc_result, "stderr", err, TEXT_MAX, IPC_REQ),
	IPC_F_LIST(ipc_result, "rich_outputs", rich, n_rich, 100000, rich_schema, IPC_REQ),
	IPC_F_OBJ(ipc_result, "error", error, error_schema, IPC_REQ | IPC_NULL),
	IPC_F_DOUBLE(ipc_result, "execution_time", execution_time, 0, 1e9, IPC_REQ),
	IPC_F_BOOL(ipc_result, "kernel_restarted", kernel_restarted, IPC_REQ),
	IPC_F_OBJ(ipc_result, "output_lost", output_lost, lost_schema, IPC_OPT),
	IPC_F_JSON(ipc_result, "value", value, IPC_OPT),
};
static const struct schema result_schema = SCHEMA("RESULT", ipc_result, result_fields, NULL);

static int
kernel_died_check(const void *msg, char *why, size_t why_len)
{
	const struct ipc_kernel_died *d = msg;

	if (d->signal && d->exit_code)
		return err_set(why, why_len, "exit_code and signal exclude each other");
	return 0;
}

static const struct field kernel_died_fields[] = {
	IPC_F_INT(ipc_kernel_died, "pid", pid, 2, INT_MAX, IPC_REQ),
	IPC_F_INT(ipc_kernel_died, "exit_code", exit_code, 0, 255, IPC_OPT),
	IPC_F_INT(ipc_kernel_died, "signal", signal, 1, 127, IPC_OPT),
	IPC_F_TEXT(ipc_kernel_died, "message", message, TEXT_MAX, IPC_REQ),
	IPC_F_BOOL(ipc_kernel_died, "memory_limit_exceeded", memory_limit_exceeded, IPC_OPT),
};
static const struct schema kernel_died_schema =
	SCHEMA("KERNEL_DIED", ipc_kernel_died, kernel_died_fields, kernel_died_check);

static const struct field log_fields[] = {
	IPC_F_INT(ipc_log, "priority", priority, 0, 7, IPC_REQ),
	IPC_F_TEXT(ipc_log, "message", message, TEXT_MAX, IPC_REQ),
};
static const struct schema log_schema = SCHEMA("LOG", ipc_log, log_fields, NULL);

static const struct field start_failed_fields[] = {
	IPC_F_TEXT(ipc_start_failed, "message", message, TEXT_MAX, IPC_REQ),
};
static const struct schema start_failed_schema =
	SCHEMA("START_FAILED", ipc_start_failed, start_failed_fields, NULL);

/* The schema of each message type; NULL for the types without fields. */
static const struct schema *const schemas[] = {
	[IPC_START] = &start_schema,
	[IPC_EXECUTE] = &execute_schema,
	[IPC_READY] = &ready_schema,
	[IPC_OUTPUT] = &output_schema,
	[IPC_RESULT] = &result_schema,
	[IPC_KERNEL_DIED] = &kernel_died_schema,
	[IPC_LOG] = &log_schema,
	[IPC_START_FAILED] = &start_failed_schema,
	[IPC_STREAMING] = &streaming_schema,
};

static const struct schema *
schema_of(unsigned type)
{
	return type < sizeof(schemas) / sizeof(schemas[0]) ? schemas[type] : NULL;
}

size_t
ipc_msg_size(unsigned type)
{
	const struct schema *s = schema_of(type);
	return s ? s->size : 0;
}

/* ---- Freeing ---- */

static void free_struct(const struct schema *s, void *msg);

static void
free_field(const struct field *f, char *at)
{
	switch (f->kind) {
	case K_STR:
		free(*(char **)at);
		break;
	case K_TEXT:
		free(((struct ipc_text *)at)->s);
		break;
	case K_STRV:
	case K_ENV:
		strv_free(*(char ***)at);
		break;
	case K_OBJ:
		if (*(void **)at) {
			free_struct(f->sub, *(void **)at);
			free(*(void **)at);
		}
		break;
	case K_LIST: {
		char *items = *(char **)at;
		size_t n = *(size_t *)((char *)at - f->off + f->count_off);
		for (size_t i = 0; items && i < n; i++)
			free_struct(f->sub, items + i * f->sub->size);
		free(items);
		break;
	}
	case K_JSON:
		json_object_put(*(struct json_object **)at);
		break;
	default:
		break;
	}
}

static void
free_struct(const struct schema *s, void *msg)
{
	for (size_t i = 0; i < s->nfields; i++)
		free_field(&s->fields[i], (char *)msg + s->fields[i].off);
	memset(msg, 0, s->size);
}

void
ipc_msg_free(unsigned type, void *msg)
{
	const struct schema *s = schema_of(type);

	if (s && msg)
		free_struct(s, msg);
}

/* ---- Decoding ---- */

/* Where a decode is, for its complaint: "START", "limits.", "rich_outputs[2]." */
struct ctx {
	char *why;
	size_t why_len;
	const char *msg;  /* the message's name */
	char path[96];	  /* the enclosing members, each followed by '.' */
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

static int decode_struct(struct ctx *c, const struct schema *s, struct json_object *o, void *out);

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
check_str(struct ctx *c, const struct field *f, struct json_object *v, const char *what)
{
	if (!json_object_is_type(v, json_type_string)) {
		fail(c, f->name, "%s must be a string", what);
		return NULL;
	}
	const char *s = json_object_get_string(v);
	size_t len = (size_t)json_object_get_string_len(v);
	double max = f->kind == K_STR ? f->hi : STR_MAX;
	if (strlen(s) != len) {
		fail(c, f->name, "%s holds a NUL character", what);
		return NULL;
	}
	if ((double)len > max) {
		fail(c, f->name, "%s is longer than %.0f bytes", what, max);
		return NULL;
	}
	if ((f->flags & IPC_NONEMPTY) && f->kind == K_STR && len == 0) {
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
get_integer(struct ctx *c, const struct field *f, struct json_object *v, long long *out)
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
decode_strv(struct ctx *c, const struct field *f, struct json_object *v, char ***out)
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
		vec[i] = xstrdup(s);
	}
	return 0;
}

static int
decode_env(struct ctx *c, const struct field *f, struct json_object *v, char ***out)
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
decode_list(struct ctx *c, const struct field *f, struct json_object *v, char *at,
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
decode_field(struct ctx *c, const struct field *f, struct json_object *v, char *at)
{
	long long n;
	double d;
	const char *s;

	switch (f->kind) {
	case K_BOOL:
		if (!json_object_is_type(v, json_type_boolean))
			return fail(c, f->name, "must be true or false");
		*(int *)at = json_object_get_boolean(v) ? 1 : 0;
		return 0;
	case K_INT:
		if (get_integer(c, f, v, &n) == -1)
			return -1;
		*(int *)at = (int)n;
		return 0;
	case K_U32:
		if (get_integer(c, f, v, &n) == -1)
			return -1;
		*(uint32_t *)at = (uint32_t)n;
		return 0;
	case K_U64:
		if (get_integer(c, f, v, &n) == -1)
			return -1;
		*(uint64_t *)at = (uint64_t)n;
		return 0;
	case K_DOUBLE:
		if (!is_number(v))
			return fail(c, f->name, "must be a number in [%g, %g]", f->lo, f->hi);
		d = json_object_get_double(v);
		if (!isfinite(d) || d < f->lo || d > f->hi)
			return fail(c, f->name, "must be a number in [%g, %g]", f->lo, f->hi);
		*(double *)at = d;
		return 0;
	case K_STR:
		if ((s = check_str(c, f, v, "it")) == NULL)
			return -1;
		*(char **)at = xstrdup(s);
		return 0;
	case K_TEXT: {
		if (!json_object_is_type(v, json_type_string))
			return fail(c, f->name, "must be a string");
		size_t len = (size_t)json_object_get_string_len(v);
		if ((double)len > f->hi)
			return fail(c, f->name, "is longer than %.0f bytes", f->hi);
		struct ipc_text *t = (struct ipc_text *)at;
		t->s = xmalloc(len + 1);
		memcpy(t->s, json_object_get_string(v), len);
		t->s[len] = '\0';
		t->len = len;
		return 0;
	}
	case K_STRV:
		return decode_strv(c, f, v, (char ***)at);
	case K_ENV:
		return decode_env(c, f, v, (char ***)at);
	case K_ENUM:
		if (json_object_is_type(v, json_type_string))
			for (int i = 0; f->choices[i]; i++)
				if (strcmp(json_object_get_string(v), f->choices[i]) == 0) {
					*(int *)at = i;
					return 0;
				}
		{
			char list[160] = "";
			for (int i = 0; f->choices[i]; i++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s\"%s\"",
					 i ? ", " : "", f->choices[i]);
			return fail(c, f->name, "must be one of %s", list);
		}
	case K_OBJ: {
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
	case K_LIST:
		return decode_list(c, f, v, at, (size_t *)(at - f->off + f->count_off));
	case K_JSON:
		if (v == NULL || json_object_is_type(v, json_type_null))
			return fail(c, f->name, "must not be null");
		/* A copy: the frame's payload and the struct never share objects. */
		if (json_object_deep_copy(v, (struct json_object **)at, NULL) != 0)
			return fail(c, f->name, "cannot be copied");
		return 0;
	}
	return fail(c, f->name, "has an unknown kind");
}

static int
decode_struct(struct ctx *c, const struct schema *s, struct json_object *o, void *out)
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
		const struct field *f = &s->fields[i];
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

int
ipc_msg_decode(const struct ipc_msg *f, unsigned type, void *msg, char *why, size_t why_len)
{
	const struct schema *s = schema_of(type);
	struct ctx c = {why, why_len, ipc_type_name(type), ""};

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
		free_struct(s, msg);
		return -1;
	}
	return 0;
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

/* ---- Encoding ---- */

static struct json_object *encode_struct(const struct schema *s, const void *msg,
					 char *why, size_t why_len);

/* 1 if an optional field holds its zero value (then it is left out). */
static int
is_zero(const struct field *f, const char *at)
{
	switch (f->kind) {
	case K_BOOL:
	case K_INT:
	case K_ENUM:
		return *(const int *)at == 0;
	case K_U32:
		return *(const uint32_t *)at == 0;
	case K_U64:
		return *(const uint64_t *)at == 0;
	case K_DOUBLE:
		return *(const double *)at == 0;
	case K_TEXT:
		return ((const struct ipc_text *)at)->len == 0;
	default:
		return *(void *const *)at == NULL;
	}
}

static struct json_object *
encode_vector(const struct field *f, char *const *v, char *why, size_t why_len)
{
	struct json_object *o = f->kind == K_ENV ? json_object_new_object()
						 : json_object_new_array();

	for (size_t i = 0; v[i]; i++) {
		if (f->kind == K_STRV) {
			json_object_array_add(o, json_object_new_string(v[i]));
			continue;
		}
		const char *eq = strchr(v[i], '=');
		if (eq == NULL || eq == v[i]) {
			json_object_put(o);
			err_set(why, why_len, "an env entry is not NAME=value");
			return NULL;
		}
		char *name = xstrndup(v[i], (size_t)(eq - v[i]));
		json_object_object_add(o, name, json_object_new_string(eq + 1));
		free(name);
	}
	return o;
}

/* The JSON of field f at `at`; NULL with the reason in why on a value no decoder takes. */
static struct json_object *
encode_field(const struct field *f, const char *at, char *why, size_t why_len)
{
	double num = 0;

	/* Never send a number the peer's decoder would refuse. */
	if (f->kind == K_INT)
		num = *(const int *)at;
	else if (f->kind == K_U32)
		num = *(const uint32_t *)at;
	else if (f->kind == K_U64)
		num = (double)*(const uint64_t *)at;
	else if (f->kind == K_DOUBLE)
		num = *(const double *)at;
	int number = f->kind == K_INT || f->kind == K_U32 || f->kind == K_U64 || f->kind == K_DOUBLE;
	if (number && (!isfinite(num) || num < f->lo || num > f->hi)) {
		err_set(why, why_len, "a number is out of its bounds");
		return NULL;
	}
	switch (f->kind) {
	case K_BOOL:
		return json_object_new_boolean(*(const int *)at != 0);
	case K_INT:
		return json_object_new_int(*(const int *)at);
	case K_U32:
		return json_object_new_int64(*(const uint32_t *)at);
	case K_U64:
		return json_object_new_int64((int64_t) * (const uint64_t *)at);
	case K_DOUBLE:
		return json_object_new_double(*(const double *)at);
	case K_STR:
		return json_object_new_string(*(char *const *)at);
	case K_TEXT: {
		const struct ipc_text *t = (const struct ipc_text *)at;
		if (t->len > TEXT_MAX) {
			err_set(why, why_len, "oversized payload");
			return NULL;
		}
		return json_object_new_string_len(t->s ? t->s : "", (int)t->len);
	}
	case K_STRV:
	case K_ENV:
		return encode_vector(f, *(char **const *)at, why, why_len);
	case K_ENUM: {
		int e = *(const int *)at, n = 0;
		while (f->choices[n])
			n++;
		if (e < 0 || e >= n) {
			err_set(why, why_len, "an enum field is out of range");
			return NULL;
		}
		return json_object_new_string(f->choices[e]);
	}
	case K_OBJ:
		return encode_struct(f->sub, *(void *const *)at, why, why_len);
	case K_LIST: {
		const char *items = *(const char *const *)at;
		size_t n = *(const size_t *)(at - f->off + f->count_off);
		struct json_object *a = json_object_new_array_ext((int)n);
		for (size_t i = 0; i < n; i++) {
			struct json_object *o = encode_struct(f->sub, items + i * f->sub->size,
							      why, why_len);
			if (o == NULL) {
				json_object_put(a);
				return NULL;
			}
			json_object_array_add(a, o);
		}
		return a;
	}
	case K_JSON:
		return json_object_get(*(struct json_object *const *)at);
	}
	err_set(why, why_len, "a field of unknown kind");
	return NULL;
}

static struct json_object *
encode_struct(const struct schema *s, const void *msg, char *why, size_t why_len)
{
	if (s->check && s->check(msg, why, why_len) == -1)
		return NULL;
	struct json_object *o = json_object_new_object();
	for (size_t i = 0; i < s->nfields; i++) {
		const struct field *f = &s->fields[i];
		const char *at = (const char *)msg + f->off;
		struct json_object *v;
		int pointer = f->kind == K_STR || f->kind == K_STRV || f->kind == K_ENV ||
			      f->kind == K_OBJ || f->kind == K_JSON;
		if (pointer && *(void *const *)at == NULL) {
			if (f->flags & IPC_NULL) {
				json_object_object_add(o, f->name, NULL);
				continue;
			}
			if (f->flags & IPC_REQ) {
				err_set(why, why_len, "a required field is missing");
				json_object_put(o);
				return NULL;
			}
			continue;
		}
		if (!(f->flags & IPC_REQ) && is_zero(f, at))
			continue;
		if ((v = encode_field(f, at, why, why_len)) == NULL) {
			json_object_put(o);
			return NULL;
		}
		json_object_object_add(o, f->name, v);
	}
	return o;
}

int
ipc_msg_encode(struct buf *out, unsigned type, uint32_t id, const void *msg, char *why,
	       size_t why_len)
{
	const struct schema *s = schema_of(type);

	if (s == NULL) {
		err_set(why, why_len, "a message type without fields");
		return -1;
	}
	struct json_object *o = encode_struct(s, msg, why, why_len);
	if (o == NULL)
		return -1;
	int rc = ipc_frame(out, type, id, o, why, why_len);
	json_object_put(o);
	return rc;
}

int
ipc_empty_encode(struct buf *out, unsigned type, uint32_t id, char *why, size_t why_len)
{
	if (!ipc_type_valid(type) || schema_of(type) != NULL) {
		err_set(why, why_len, "not a message type without fields");
		return -1;
	}
	return ipc_frame(out, type, id, NULL, why, why_len);
}

/* Write a frame built in *b, then free it. 0, or -1 with errno. */
static int
send_built(int fd, struct buf *b, int rc, const char *err)
{
	if (rc == -1) {
		buf_free(b);
		errno = strcmp(err, "oversized payload") == 0 ? EMSGSIZE : EINVAL;
		return -1;
	}
	rc = ipc_write(fd, b->data, b->len);
	int saved = errno;
	buf_free(b);
	errno = saved;
	return rc;
}

int
ipc_msg_send(int fd, unsigned type, uint32_t id, const void *msg)
{
	struct buf b;
	char err[ERR_LEN] = "";

	buf_init(&b);
	int rc = ipc_msg_encode(&b, type, id, msg, err, sizeof(err));
	return send_built(fd, &b, rc, err);
}

int
ipc_empty_send(int fd, unsigned type, uint32_t id)
{
	struct buf b;
	char err[ERR_LEN] = "";

	buf_init(&b);
	int rc = ipc_empty_encode(&b, type, id, err, sizeof(err));
	return send_built(fd, &b, rc, err);
}

struct json_object *
ipc_result_json(const struct ipc_result *r)
{
	struct json_object *o = encode_struct(&result_schema, r, NULL, 0);

	/* Only an out-of-range value fails, and a decoded result has none. */
	return o ? o : json_object_new_object();
}

struct json_object *
ipc_result_take(struct ipc_msg *f)
{
	struct json_object *o = f->payload;

	f->payload = NULL;
	return o;
}

/* ---- Helpers ---- */

void
ipc_cgroup_from_layout(struct ipc_cgroup *out, struct ipc_cgroup_ctl ctl[CGROUP_NCTL],
		       const struct cgroup_layout *l, const char *name)
{
	struct ipc_cgroup_ctl **slot[CGROUP_NCTL] = {&out->memory, &out->pids, &out->cpu,
						   &out->freezer};

	memset(out, 0, sizeof(*out));
	out->name = (char *)name;
	for (int c = 0; c < CGROUP_NCTL; c++) {
		if (l->version[c] == 0)
			continue;
		ctl[c].version = l->version[c];
		ctl[c].parent = l->parent[c];
		*slot[c] = &ctl[c];
	}
}

void
ipc_cgroup_to_layout(const struct ipc_cgroup *c, struct cgroup_layout *l)
{
	const struct ipc_cgroup_ctl *ctl[CGROUP_NCTL] = {c->memory, c->pids, c->cpu, c->freezer};

	memset(l, 0, sizeof(*l));
	for (int i = 0; i < CGROUP_NCTL; i++) {
		if (ctl[i] == NULL)
			continue;
		l->version[i] = ctl[i]->version;
		l->parent[i] = xstrdup(ctl[i]->parent);
	}
}

struct ipc_text
ipc_text_of(const char *s)
{
	struct ipc_text t = {(char *)s, s ? strlen(s) : 0};
	return t;
}
