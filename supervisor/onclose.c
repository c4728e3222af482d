/* onclose.c - see onclose.h. */
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
#include "onclose.h"

/* Seconds each look at outputs/ may take. */
#define ONCLOSE_TIMEOUT_S 30

static const struct config *cfg;

/* Whether some publisher publishes at the end of a session. */
static int
wanted(void)
{
	for (size_t i = 0; i < cfg->publishers.n; i++)
		if (config_publisher_at(cfg, i)->on_close)
			return 1;
	return 0;
}

/* Publish file f (a FILES item) of s to every on_close publisher. Lock held. */
static void
publish_one(struct session *s, struct json_object *f)
{
	const char *name = json_member_str(f, "name");
	char why[ERR_LEN];
	struct call c;

	call_init(&c);
	c.kind = CALL_FILE_OPEN;
	pool_file_call(s->worker, &c, name, ONCLOSE_TIMEOUT_S);
	int fd = c.fd;
	c.fd = -1;
	if (fd == -1) {
		log_warnx("session %.8s closed: outputs/%s not published: the worker could not "
			  "open it", s->id, name);
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
		if (!p->on_close)
			continue;
		/* A copy takes long: the lock is not held meanwhile. */
		pool_unlock();
		int rc = publish(p, &src, &out, why, sizeof(why));
		pool_lock();
		if (rc == 0) {
			log_info("session %.8s closed: published outputs/%s with %s as %s", s->id,
				 name, p->name, out.uri);
			free(out.uri);
		} else {
			log_warnx("session %.8s closed: outputs/%s not published with %s: %s",
				  s->id, name, p->name, why);
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

	if (!wanted() || s->worker == NULL || s->worker->state == WORKER_DEAD)
		return;
	if (s->busy) {
		log_warnx("session %.8s closed while an execution ran: outputs/ not published",
			  s->id);
		return;
	}
	call_init(&c);
	c.kind = CALL_FILE_LIST;
	pool_file_call(s->worker, &c, NULL, ONCLOSE_TIMEOUT_S);
	if (c.result == NULL || !json_object_object_get_ex(c.result, "files", &files)) {
		log_warnx("session %.8s closed: outputs/ not published: its worker did not list "
			  "it", s->id);
	} else {
		for (size_t i = 0; i < json_object_array_length(files); i++)
			publish_one(s, json_object_array_get_idx(files, i));
	}
	call_clear(&c);
}

void
onclose_init(const struct config *c)
{
	cfg = c;
	session_before_close(publish_session);
}
