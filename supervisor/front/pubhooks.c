/* pubhooks.c - see pubhooks.h. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "json_member.h"
#include "log.h"
#include "pool.h"
#include "publish.h"
#include "session.h"
#include "pubhooks.h"

/* Seconds each look at outputs/ may take. */
#define PUB_TIMEOUT_S 30

static const struct config *cfg;

/* Which publishers a hook publishes with. */
enum when { AT_CLOSE, AT_RESULT };

static int
publishes(const struct config_publisher *p, enum when w)
{
	return w == AT_CLOSE ? p->on_close : p->auto_publish;
}

/* Whether some publisher publishes at `w`. */
static int
wanted(enum when w)
{
	for (size_t i = 0; i < cfg->publishers.n; i++)
		if (publishes(config_publisher_at(cfg, i), w))
			return 1;
	return 0;
}

/* Add {name, publisher?, message} to `failed`. */
static void
add_failure(struct json_object *failed, const char *name, const char *publisher,
	    const char *message)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(name));
	if (publisher)
		json_object_object_add(o, "publisher", json_object_new_string(publisher));
	json_object_object_add(o, "message", json_object_new_string(message));
	json_object_array_add(failed, o);
}

/*
 * Publish file f (a FILES or artifacts item) of s to every publisher of
 * `w`; add each publish's {publisher, uri, ...} to `done` and each
 * failure's {name, publisher, message} to `failed` (both may be NULL).
 * Lock held (released while copying).
 */
static void
publish_one(struct session *s, struct json_object *f, enum when w, struct json_object *done,
	    struct json_object *failed)
{
	const char *name = json_member_str(f, "name");
	const char *ctx = w == AT_CLOSE ? "closed" : "result";
	char why[ERR_LEN];
	struct call c;

	call_init(&c);
	c.kind = CALL_FILE_OPEN;
	pool_file_call(s->worker, &c, name, PUB_TIMEOUT_S);
	int fd = c.fd;
	c.fd = -1;
	if (fd == -1) {
		log_warnx("session %.8s %s: outputs/%s not published: the worker could not "
			  "open it", s->id, ctx, name);
		if (failed)
			add_failure(failed, name, NULL, "the session's worker could not open it");
		call_clear(&c);
		return;
	}
	for (size_t i = 0; i < cfg->publishers.n; i++) {
		const struct config_publisher *p = config_publisher_at(cfg, i);
		struct publish_src src = {fd, name,
					  p->content_type[0] ? p->content_type
							     : json_member_str(f, "mime_type"),
					  s->identity, s->id};
		struct publish_out out;
		if (!publishes(p, w))
			continue;
		/* A copy takes long: the lock is not held meanwhile. */
		pool_unlock();
		int rc = publish(p, &src, &out, why, sizeof(why));
		pool_lock();
		if (rc == 0) {
			log_info("session %.8s %s: published outputs/%s with %s as %s", s->id, ctx,
				 name, p->name, out.uri);
			if (done)
				json_object_array_add(done, publish_json(p, &src, &out));
			free(out.uri);
		} else {
			log_warnx("session %.8s %s: outputs/%s not published with %s: %s", s->id,
				  ctx, name, p->name, why);
			if (failed)
				add_failure(failed, name, p->name, why);
		}
	}
	close(fd);
	call_clear(&c);
}

/* session_close's hook: publish s's outputs/ before its worker goes. Lock held. */
static void
publish_session(struct session *s)
{
	struct json_object *files;
	struct call c;

	if (!wanted(AT_CLOSE) || s->worker == NULL || s->worker->state == WORKER_DEAD)
		return;
	if (s->busy) {
		log_warnx("session %.8s closed while an execution ran: outputs/ not published",
			  s->id);
		return;
	}
	call_init(&c);
	c.kind = CALL_FILE_LIST;
	pool_file_call(s->worker, &c, NULL, PUB_TIMEOUT_S);
	if (c.result == NULL || !json_object_object_get_ex(c.result, "files", &files)) {
		log_warnx("session %.8s closed: outputs/ not published: its worker did not list "
			  "it", s->id);
	} else {
		for (size_t i = 0; i < json_object_array_length(files); i++)
			publish_one(s, json_object_array_get_idx(files, i), AT_CLOSE, NULL, NULL);
	}
	call_clear(&c);
}

/*
 * session_run's hook, once an execution's result came: publish the
 * artifacts it lists with the auto_publish publishers, and list where
 * they went in the result's "published". Lock held; the session is busy.
 */
static void
publish_result(struct session *s, struct call *c)
{
	struct json_object *arts;

	if (!wanted(AT_RESULT) || c->result == NULL || s->worker == NULL ||
	    s->worker->state == WORKER_DEAD ||
	    !json_object_object_get_ex(c->result, "artifacts", &arts) ||
	    !json_object_is_type(arts, json_type_array))
		return;
	struct json_object *done = json_object_new_array();
	struct json_object *failed = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(arts); i++)
		publish_one(s, json_object_array_get_idx(arts, i), AT_RESULT, done, failed);
	json_object_object_add(c->result, "published", done);
	/* The agent learns of a failure in the result, not only the log. */
	if (json_object_array_length(failed) > 0)
		json_object_object_add(c->result, "publish_errors", failed);
	else
		json_object_put(failed);
}

/* Whether closing a session publishes: its worker lists and opens outputs/. */
static int
close_publishes(void)
{
	return wanted(AT_CLOSE);
}

void
pubhooks_init(const struct config *c)
{
	cfg = c;
	session_before_close(publish_session);
	session_close_needs_worker(close_publishes);
	session_after_run(publish_result);
}
