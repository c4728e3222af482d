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

/*
 * The file a FILE answer of c names into *info (caller owns): 0; or -1
 * with *err and why, the worker's refusal or the call's failure.
 */
static int
take_file(struct call *c, struct json_object **info, enum sfiles_err *err, char *why,
	  size_t why_len)
{
	struct json_object *f, *e;

	if (c->result && json_object_object_get_ex(c->result, "file", &f)) {
		*info = json_object_get(f);
		return 0;
	}
	if (c->result && json_object_object_get_ex(c->result, "error", &e) &&
	    json_object_is_type(e, json_type_string)) {
		err_set(why, why_len, "%s", json_object_get_string(e));
	} else {
		*err = SFILES_FAILED;
		failure(c->result, why, why_len);
	}
	return -1;
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
sfiles_write(struct session *s, const struct ipc_file_write *wr, struct json_object **info,
	     enum sfiles_err *err, char *why, size_t why_len)
{
	struct call c;

	*info = NULL;
	*err = SFILES_REFUSED;
	if (!ipc_artifact_name_ok(wr->path))
		return err_set(why, why_len, "%s: refused: not a relative path below the working "
					     "directory (absolute, empty, \".\" or \"..\")", wr->path);
	call_init(&c);
	c.write = wr;
	/* A session that never ran code takes its kernel now, as a first call does. */
	file_call(s, &c, CALL_FILE_WRITE, wr->path);
	int rc = take_file(&c, info, err, why, why_len);
	call_clear(&c);
	return rc;
}

int
sfiles_open(struct session *s, const char *path, struct json_object **info,
	    enum sfiles_err *err, char *why, size_t why_len)
{
	struct call c;
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
	/* A FILE naming a file came with its descriptor (pool_io.c checks;
	 * checked again here, since a caller takes -1 for an error). */
	if (take_file(&c, info, err, why, why_len) == 0) {
		if (c.fd == -1) {
			json_object_put(*info);
			*info = NULL;
			*err = SFILES_REFUSED;
			call_clear(&c);
			return err_set(why, why_len, "%s: the worker named the file without "
				       "passing it", path);
		}
		fd = c.fd;
		c.fd = -1;
	}
	call_clear(&c);
	return fd;
}
