/* session_journal.c - see session_journal.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "config.h"
#include "json_member.h"
#include "log.h"
#include "parent_link.h"
#include "pool.h"
#include "session.h"
#include "session_journal.h"
#include "xmalloc.h"

#define JOURNAL_VERSION 1

static const struct config *jcfg;
static char *journal_path;
static struct json_object *waiting; /* entries whose directory has not come */
static char *last_written;	    /* the journal as last written */

static int
is_hex(const char *s, size_t len)
{
	if (strlen(s) != len)
		return 0;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return 0;
	return 1;
}

static int
printable(const char *s, size_t max)
{
	if (*s == '\0' || strlen(s) >= max)
		return 0;
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return 0;
	return 1;
}

static time_t
entry_time(struct json_object *e, const char *key)
{
	struct json_object *v;
	return json_object_object_get_ex(e, key, &v) ? (time_t)json_object_get_int64(v) : 0;
}

/* The session of entry `e`, back in the table without a kernel; NULL if
 * the entry is malformed or its id is taken (logged). */
static struct session *
adopt(struct json_object *e)
{
	const char *id = json_member_str(e, "id"), *identity = json_member_str(e, "identity");

	if (!is_hex(id, SESSION_ID_LEN) || !printable(identity, sizeof(((struct session *)0)->identity))) {
		log_warnx("%s: an entry with no valid id or identity: skipped", journal_path);
		return NULL;
	}
	struct session *s = session_adopt(id, identity, entry_time(e, "created"),
					  entry_time(e, "last_used"));
	if (s == NULL) {
		log_warnx("%s: session %.8s twice: skipped", journal_path, id);
		return NULL;
	}
	s->stateless = json_object_get_boolean(json_object_object_get(e, "stateless"));
	s->named = json_object_get_int(json_object_object_get(e, "named"));
	s->lost_because = "the daemon restarted";
	return s;
}

void
session_journal_load(const struct config *cfg)
{
	jcfg = cfg;
	journal_path = xasprintf("%s/journal/sessions.json", cfg->state_dir);
	if (!cfg->persist_sessions)
		return;
	if (access(journal_path, F_OK) == -1) {
		if (errno != ENOENT)
			log_warn("%s", journal_path);
		return;
	}
	struct json_object *j = json_object_from_file(journal_path), *list;
	if (j == NULL || json_object_get_int(json_object_object_get(j, "version")) != JOURNAL_VERSION ||
	    !json_object_object_get_ex(j, "sessions", &list) ||
	    !json_object_is_type(list, json_type_array)) {
		log_warnx("%s is not a session journal of this version: no session kept",
			  journal_path);
		json_object_put(j);
		return;
	}
	waiting = json_object_new_array();
	int back = 0;
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		struct json_object *e = json_object_array_get_idx(list, i);
		if (json_object_object_get_ex(e, "dir", NULL))
			json_object_array_add(waiting, json_object_get(e));
		else
			back += adopt(e) != NULL;
	}
	json_object_put(j);
	if (back)
		log_info("sessions that had no kernel yet, back from %s: %d", journal_path, back);
}

void
session_journal_dir_left(const struct priv_dir_left *d)
{
	for (size_t i = 0; waiting && i < json_object_array_length(waiting); i++) {
		struct json_object *e = json_object_array_get_idx(waiting, i);
		if (strcmp(json_member_str(e, "dir"), d->name) != 0)
			continue;
		struct session *s = adopt(e);
		json_object_get(e);
		json_object_array_del_idx(waiting, i, 1);
		if (s == NULL) {
			json_object_put(e);
			break;
		}
		s->kept_dir = d->dir;
		s->kept_workdir = xasprintf("%s/sessions/%s", jcfg->state_dir, d->name);
		s->checkpoints = json_object_get_int(json_object_object_get(e, "checkpoints"));
		s->revive_due = 1;
		session_set_hibernated(s, 1);
		time_t since = entry_time(e, "hibernated");
		if (since > 0)
			s->hibernated = since;
		log_info("session %.8s of %s is back, hibernated, in %s (%d checkpoints)", s->id,
			 s->identity, d->name, s->checkpoints);
		json_object_put(e);
		return;
	}
	log_info("session directory %s is in no journal entry: removing it", d->name);
	parent_link_remove_dir(d->dir);
}

void
session_journal_settle(void)
{
	for (size_t i = 0; waiting && i < json_object_array_length(waiting); i++)
		log_warnx("session %.8s of the journal: its directory %s is gone; the session is "
			  "not kept",
			  json_member_str(json_object_array_get_idx(waiting, i), "id"),
			  json_member_str(json_object_array_get_idx(waiting, i), "dir"));
	json_object_put(waiting);
	waiting = NULL;
}

/* The name of the session directory s works in or keeps, or NULL. */
static const char *
dir_name(const struct session *s)
{
	const char *path = s->worker && s->worker->workdir ? s->worker->workdir : s->kept_workdir;
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash && is_hex(slash + 1, PRIV_NAME_LEN) ? slash + 1 : NULL;
}

static void
add_entry(struct session *s, void *arg)
{
	struct json_object *e = json_object_new_object();
	const char *dir = dir_name(s);

	json_object_object_add(e, "id", json_object_new_string(s->id));
	json_object_object_add(e, "identity", json_object_new_string(s->identity));
	json_object_object_add(e, "created", json_object_new_int64(s->created));
	json_object_object_add(e, "last_used", json_object_new_int64(s->last_used));
	json_object_object_add(e, "stateless", json_object_new_boolean(s->stateless));
	json_object_object_add(e, "named", json_object_new_int(s->named));
	json_object_object_add(e, "checkpoints", json_object_new_int(s->checkpoints));
	if (s->hibernated)
		json_object_object_add(e, "hibernated", json_object_new_int64(s->hibernated));
	if (dir)
		json_object_object_add(e, "dir", json_object_new_string(dir));
	json_object_array_add(arg, e);
}

/* Replace the journal with `text`: a new file, synced, renamed over it. */
static int
replace(const char *text)
{
	char *tmp = xasprintf("%s.new", journal_path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	size_t len = strlen(text), off = 0;
	int rc = -1;

	if (fd == -1) {
		log_warn("open %s", tmp);
		free(tmp);
		return -1;
	}
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	if (off < len)
		log_warn("write %s", tmp);
	else if (fsync(fd) == -1)
		log_warn("fsync %s", tmp);
	else if (rename(tmp, journal_path) == -1)
		log_warn("rename %s to %s", tmp, journal_path);
	else
		rc = 0;
	close(fd);
	if (rc == -1)
		unlink(tmp);
	free(tmp);
	return rc;
}

void
session_journal_write(void)
{
	if (jcfg == NULL || !jcfg->persist_sessions)
		return;
	struct json_object *j = json_object_new_object(), *list = json_object_new_array();
	json_object_object_add(j, "version", json_object_new_int(JOURNAL_VERSION));
	pool_lock();
	session_each(add_entry, list);
	pool_unlock();
	json_object_object_add(j, "sessions", list);
	const char *text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
	if (last_written == NULL || strcmp(last_written, text) != 0) {
		if (replace(text) == 0) {
			free(last_written);
			last_written = xstrdup(text);
		}
	}
	json_object_put(j);
}
