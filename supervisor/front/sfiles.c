/* sfiles.c - see sfiles.h. */
#include "autoconf.h"

#include <string.h>

#include "ipc_msg.h"
#include "json_member.h"
#include "pool.h"
#include "session.h"
#include "sfiles.h"

/* Seconds a look at outputs/ may wait, its turn behind executions included. */
#define SFILES_TIMEOUT_S 600

/* Run file call `c` of `kind` in s; c->result holds the answer or a failure. */
static void
file_call(struct session *s, struct call *c, enum call_kind kind, const char *path)
{
	c->kind = kind;
	session_run(s, c, path ? path : "", SFILES_TIMEOUT_S, 1, -1, 0);
}

/* The failure a call ended with (a result_failed document), into why. */
static void
failure(struct json_object *r, char *why, size_t why_len)
{
	struct json_object *e = r ? json_object_object_get(r, "error") : NULL;
	const char *m = e && json_object_is_type(e, json_type_object)
				? json_member_str(e, "message")
				: "no answer from the session's kernel worker";
	err_set(why, why_len, "%s", m);
}

struct json_object *
sfiles_list(struct session *s, char *why, size_t why_len)
{
	struct call c;
	struct json_object *files, *out = NULL;

	if (s->worker == NULL) {
		out = json_object_new_object();
		json_object_object_add(out, "files", json_object_new_array());
		return out;
	}
	call_init(&c);
	file_call(s, &c, CALL_FILE_LIST, NULL);
	if (c.result && json_object_object_get_ex(c.result, "files", &files))
		out = json_object_get(c.result);
	else
		failure(c.result, why, why_len);
	call_clear(&c);
	return out;
}

int
sfiles_open(struct session *s, const char *path, struct json_object **info,
	    enum sfiles_err *err, char *why, size_t why_len)
{
	struct call c;
	struct json_object *f, *e;
	int fd = -1;

	*info = NULL;
	*err = SFILES_REFUSED;
	/* Never ask the worker for what its codec refuses: it would end the worker. */
	if (!ipc_artifact_name_ok(path))
		return err_set(why, why_len, "%s: refused: not a relative path below outputs/ "
					     "(absolute, empty, \".\" or \"..\")", path);
	if (s->worker == NULL)
		return err_set(why, why_len, "%s: refused: outputs/%s does not exist", path, path);
	call_init(&c);
	file_call(s, &c, CALL_FILE_OPEN, path);
	if (c.result && json_object_object_get_ex(c.result, "file", &f) && c.fd != -1) {
		*info = json_object_get(f);
		fd = c.fd;
		c.fd = -1;
	} else if (c.result && json_object_object_get_ex(c.result, "error", &e) &&
		   json_object_is_type(e, json_type_string)) {
		err_set(why, why_len, "%s", json_object_get_string(e));
	} else {
		*err = SFILES_FAILED;
		failure(c.result, why, why_len);
	}
	call_clear(&c);
	return fd;
}
