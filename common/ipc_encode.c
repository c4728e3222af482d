/*
 * ipc_encode.c - the one encoder of ipc_msg.h: a message struct into a
 * frame, by the message's table (ipc_schema.c), refusing any value the
 * decoder would refuse; the senders built on it, and RESULT as the JSON
 * document of seed 003.
 */
#include "autoconf.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "ipc_schema.h"
#include "xmalloc.h"

static struct json_object *encode_struct(const struct ipc_schema *s, const void *msg,
					 char *why, size_t why_len);

/* 1 if an optional field holds its zero value (then it is left out). */
static int
is_zero(const struct ipc_field *f, const char *at)
{
	switch (f->kind) {
	case IPC_K_BOOL:
	case IPC_K_INT:
	case IPC_K_ENUM:
		return *(const int *)at == 0;
	case IPC_K_U32:
		return *(const uint32_t *)at == 0;
	case IPC_K_U64:
		return *(const uint64_t *)at == 0;
	case IPC_K_DOUBLE:
		return *(const double *)at == 0;
	case IPC_K_TEXT:
		return ((const struct ipc_text *)at)->len == 0;
	default:
		return *(void *const *)at == NULL;
	}
}

static struct json_object *
encode_vector(const struct ipc_field *f, char *const *v, char *why, size_t why_len)
{
	struct json_object *o = f->kind == IPC_K_ENV ? json_object_new_object()
						 : json_object_new_array();

	for (size_t i = 0; v[i]; i++) {
		if (f->kind == IPC_K_STRV) {
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
encode_field(const struct ipc_field *f, const char *at, char *why, size_t why_len)
{
	double num = 0;

	/* Never send a number the peer's decoder would refuse. */
	if (f->kind == IPC_K_INT)
		num = *(const int *)at;
	else if (f->kind == IPC_K_U32)
		num = *(const uint32_t *)at;
	else if (f->kind == IPC_K_U64)
		num = (double)*(const uint64_t *)at;
	else if (f->kind == IPC_K_DOUBLE)
		num = *(const double *)at;
	int number = f->kind == IPC_K_INT || f->kind == IPC_K_U32 || f->kind == IPC_K_U64 ||
		     f->kind == IPC_K_DOUBLE;
	if (number && (!isfinite(num) || num < f->lo || num > f->hi)) {
		err_set(why, why_len, "a number is out of its bounds");
		return NULL;
	}
	switch (f->kind) {
	case IPC_K_BOOL:
		return json_object_new_boolean(*(const int *)at != 0);
	case IPC_K_INT:
		return json_object_new_int(*(const int *)at);
	case IPC_K_U32:
		return json_object_new_int64(*(const uint32_t *)at);
	case IPC_K_U64:
		return json_object_new_int64((int64_t) * (const uint64_t *)at);
	case IPC_K_DOUBLE:
		return json_object_new_double(*(const double *)at);
	case IPC_K_STR:
		return json_object_new_string(*(char *const *)at);
	case IPC_K_TEXT: {
		const struct ipc_text *t = (const struct ipc_text *)at;
		if (t->len > IPC_TEXT_MAX) {
			err_set(why, why_len, "oversized payload");
			return NULL;
		}
		return json_object_new_string_len(t->s ? t->s : "", (int)t->len);
	}
	case IPC_K_STRV:
	case IPC_K_ENV:
		return encode_vector(f, *(char **const *)at, why, why_len);
	case IPC_K_ENUM: {
		int e = *(const int *)at, n = 0;
		while (f->choices[n])
			n++;
		if (e < 0 || e >= n) {
			err_set(why, why_len, "an enum field is out of range");
			return NULL;
		}
		return json_object_new_string(f->choices[e]);
	}
	case IPC_K_OBJ:
		return encode_struct(f->sub, *(void *const *)at, why, why_len);
	case IPC_K_LIST: {
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
	case IPC_K_JSON:
		return json_object_get(*(struct json_object *const *)at);
	}
	err_set(why, why_len, "a field of unknown kind");
	return NULL;
}

static struct json_object *
encode_struct(const struct ipc_schema *s, const void *msg, char *why, size_t why_len)
{
	if (s->check && s->check(msg, why, why_len) == -1)
		return NULL;
	struct json_object *o = json_object_new_object();
	for (size_t i = 0; i < s->nfields; i++) {
		const struct ipc_field *f = &s->fields[i];
		const char *at = (const char *)msg + f->off;
		struct json_object *v;
		int pointer = f->kind == IPC_K_STR || f->kind == IPC_K_STRV ||
			      f->kind == IPC_K_ENV || f->kind == IPC_K_OBJ ||
			      f->kind == IPC_K_JSON;
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
	const struct ipc_schema *s = ipc_schema_of(type);

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
	if (!ipc_type_valid(type) || ipc_schema_of(type) != NULL) {
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
	struct json_object *o = encode_struct(ipc_schema_of(IPC_RESULT), r, NULL, 0);

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
