/* session_journal.c - see session_journal.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "config.h"
#include "handle.h"
#include "hex.h"
#include "job.h"
#include "json_member.h"
#include "log.h"
#include "parent_link.h"
#include "pool.h"
#include "result.h"
#include "session.h"
#include "session_journal.h"
#include "xmalloc.h"

#define JOURNAL_VERSION 1

static const struct config *jcfg;
static char *journal_path;
static char *jobs_dir;		    /* a file per ended job's result */
static struct json_object *waiting; /* entries whose directory has not come */
static char *last_written;	    /* the journal as last written */

/* Whether `id` is a handle of this node (handle.h): its random digits,
 * untagged or tagged with this node's name (a renamed node's are not). */
static int
own_handle(const char *id)
{
	const char *digits = handle_random(id);

	if (strlen(id) > SESSION_ID_LEN || !hex_is(digits, HANDLE_RANDOM_LEN))
		return 0;
	if (digits == id)
		return 1;
	size_t tag = (size_t)(digits - id) - 1;
	return tag == strlen(handle_node()) && strncmp(id, handle_node(), tag) == 0;
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

	if (!own_handle(id) || !printable(identity, sizeof(((struct session *)0)->identity))) {
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
	/* What its client declared at initialize, which it does not say again. */
	s->elicitation = json_object_get_boolean(json_object_object_get(e, "elicitation"));
	s->lost_because = "the daemon restarted";
	return s;
}

static enum job_status
status_named(const char *name)
{
	static const enum job_status all[] = {JOB_COMPLETED, JOB_FAILED, JOB_CANCELLED,
					      JOB_TIMED_OUT};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(job_status_name(all[i]), name) == 0)
			return all[i];
	return JOB_RUNNING;
}

/* The journal's jobs back: an ended one with its result, one that ran at
 * the stop as failed, Aborted. */
static void
load_jobs(struct json_object *list)
{
	int back = 0, aborted = 0;

	for (size_t i = 0; i < json_object_array_length(list); i++) {
		struct json_object *e = json_object_array_get_idx(list, i), *result;
		struct job_record r = {json_member_str(e, "id"), json_member_str(e, "owner"),
				       json_member_str(e, "identity"), json_member_str(e, "session"),
				       entry_time(e, "created"), entry_time(e, "finished"),
				       status_named(json_member_str(e, "status"))};
		if (!own_handle(r.id) || !own_handle(r.owner) || !own_handle(r.session_id) ||
		    !printable(r.identity, sizeof(((struct job *)0)->identity)))
			continue;
		if (r.status == JOB_RUNNING) {
			result = result_failed("Aborted", "the daemon stopped while this job ran, or "
						"its front crashed: its output is lost");
			r.status = JOB_FAILED;
			r.finished = time(NULL);
			aborted++;
		} else {
			char *path = xasprintf("%s/%s.json", jobs_dir, r.id);
			result = json_object_from_file(path);
			free(path);
			if (result == NULL)
				continue;
		}
		job_adopt(&r, result);
		back++;
	}
	if (back)
		log_info("jobs back from %s: %d (%d aborted by the stop)", journal_path, back,
			 aborted);
}

/* Remove the journal and every job file (persist_sessions is off). */
static void
forget_all(void)
{
	DIR *d = opendir(jobs_dir);
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && unlinkat(dirfd(d), e->d_name, 0) == -1)
			log_warn("unlink %s/%s", jobs_dir, e->d_name);
	if (d)
		closedir(d);
	if (unlink(journal_path) == -1 && errno != ENOENT)
		log_warn("unlink %s", journal_path);
}

void
session_journal_load(const struct config *cfg)
{
	jcfg = cfg;
	journal_path = xasprintf("%s/journal/sessions.json", cfg->state_dir);
	jobs_dir = xasprintf("%s/journal/jobs", cfg->state_dir);
	if (!cfg->persist_sessions) {
		/* An old journal must not bring back sessions a later start with
		 * persist_sessions meets: their directories go now. */
		forget_all();
		return;
	}
	if (mkdir(jobs_dir, 0700) == -1 && errno != EEXIST)
		log_warn("mkdir %s", jobs_dir);
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
	if (json_object_object_get_ex(j, "jobs", &list) && json_object_is_type(list, json_type_array))
		load_jobs(list);
	json_object_put(j);
	if (back)
		log_info("sessions that had no kernel yet, back from %s: %d", journal_path, back);
}

/* The waiting entry for session directory `name`, taken out (the
 * caller's), or NULL. */
static struct json_object *
take_waiting(const char *name)
{
	for (size_t i = 0; waiting && i < json_object_array_length(waiting); i++) {
		struct json_object *e = json_object_array_get_idx(waiting, i);
		if (strcmp(json_member_str(e, "dir"), name) != 0)
			continue;
		json_object_get(e);
		json_object_array_del_idx(waiting, i, 1);
		return e;
	}
	return NULL;
}

void
session_journal_dir_left(const struct priv_dir_left *d)
{
	struct json_object *e = take_waiting(d->name);
	struct session *s = e ? adopt(e) : NULL;

	if (e == NULL)
		log_info("session directory %s is in no journal entry: removing it", d->name);
	if (s == NULL) {
		json_object_put(e);
		parent_link_remove_dir(d->dir);
		return;
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
}

void
session_journal_worker_left(const struct priv_worker_left *l, struct worker *w)
{
	struct json_object *e = take_waiting(l->name);
	struct session *s = e ? adopt(e) : NULL;

	if (s == NULL) {
		/* A warm worker, or a session too new for the journal: it ends,
		 * and its directory with it. */
		log_info("worker %d of session directory %s is in no journal entry: ending it",
			 (int)l->pid, l->name);
		json_object_put(e);
		w->keep_dir = 0;
		pool_release(w);
		return;
	}
	s->checkpoints = json_object_get_int(json_object_object_get(e, "checkpoints"));
	s->lost_because = NULL;
	session_take_worker(s, w);
	w->session = s->id;
	s->told_kernel = w->kernel_pid; /* the old front told it who calls */
	/* What the old front's call still runs comes first: the session's
	 * next call waits in line for it, as for any execution (RESUMED). */
	session_take_turn(s);
	log_info("session %.8s of %s is back with its running kernel %d, in %s", s->id,
		 s->identity, (int)l->kernel, l->name);
	json_object_put(e);
}

struct resumed {
	struct worker *w;
	struct session *s;
};

static void
find_worker(struct session *s, void *arg)
{
	struct resumed *r = arg;
	if (s->worker == r->w)
		r->s = s;
}

void
session_journal_resumed(struct worker *w)
{
	struct resumed r = {w, NULL};

	session_each(find_worker, &r);
	if (r.s == NULL)
		return;
	if (w->state == WORKER_DEAD) {
		r.s->lost_because = "its worker died while a new front took it over";
		log_warnx("session %.8s: its worker %s before it was taken over", r.s->id,
			  w->death ? w->death : "died");
	} else {
		log_info("session %.8s: its kernel %d kept its variables through the front's "
			 "restart%s", r.s->id, (int)w->kernel_pid,
			 w->kernel_lost ? ", but it is a new kernel: the last checkpoint is "
					  "loaded first" : "");
	}
	session_turn_over(r.s);
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
	return slash && hex_is(slash + 1, PRIV_NAME_LEN) ? slash + 1 : NULL;
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
	if (s->elicitation)
		json_object_object_add(e, "elicitation", json_object_new_boolean(1));
	json_object_object_add(e, "checkpoints", json_object_new_int(s->checkpoints));
	if (s->hibernated)
		json_object_object_add(e, "hibernated", json_object_new_int64(s->hibernated));
	if (dir)
		json_object_object_add(e, "dir", json_object_new_string(dir));
	json_object_array_add(arg, e);
}

/* The jobs' part of a snapshot: their entries, and the results of those
 * that ended since the last one, each for a file of its own. */
struct jobs_snapshot {
	struct json_object *list;
	struct json_object *results; /* id: the result's text */
};

static void
add_job(struct job *j, void *arg)
{
	struct jobs_snapshot *snap = arg;
	struct json_object *e = json_object_new_object();

	json_object_object_add(e, "id", json_object_new_string(j->id));
	json_object_object_add(e, "owner", json_object_new_string(j->owner));
	json_object_object_add(e, "identity", json_object_new_string(j->identity));
	json_object_object_add(e, "session", json_object_new_string(j->session_id));
	json_object_object_add(e, "created", json_object_new_int64(j->created));
	json_object_object_add(e, "status", json_object_new_string(job_status_name(j->status)));
	json_object_object_add(e, "finished", json_object_new_int64(j->finished));
	json_object_array_add(snap->list, e);
	if (j->status != JOB_RUNNING && !j->journaled && j->call.result) {
		/* As text now, under pool_lock: answers may share the object. */
		json_object_object_add(snap->results, j->id,
				       json_object_new_string(json_object_to_json_string_ext(
					       j->call.result, JSON_C_TO_STRING_PLAIN)));
		j->journaled = 1;
	}
}

static int replace(const char *path, const char *text, int sync);

/* Write the results of `snap` (synced with `sync`), and remove the files of jobs gone. */
static void
write_jobs(const struct jobs_snapshot *snap, int sync)
{
	json_object_object_foreach(snap->results, jid, text)
	{
		char *path = xasprintf("%s/%s.json", jobs_dir, jid);
		replace(path, json_object_get_string(text), sync);
		free(path);
	}
	DIR *d = opendir(jobs_dir);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		char id[SESSION_ID_LEN + 1];
		size_t n = strlen(e->d_name);
		if (n <= 5 || n - 5 > SESSION_ID_LEN || strcmp(e->d_name + n - 5, ".json") != 0)
			continue;
		memcpy(id, e->d_name, n - 5);
		id[n - 5] = '\0';
		if (!own_handle(id))
			continue;
		int listed = 0;
		for (size_t i = 0; i < json_object_array_length(snap->list) && !listed; i++)
			listed = strcmp(json_member_str(json_object_array_get_idx(snap->list, i), "id"),
					id) == 0;
		if (!listed && unlinkat(dirfd(d), e->d_name, 0) == -1)
			log_warn("unlink %s/%s", jobs_dir, e->d_name);
	}
	if (d)
		closedir(d);
}

/* Replace `path` with `text`: a new file (synced with `sync`), renamed over it. */
static int
replace(const char *path, const char *text, int sync)
{
	char *tmp = xasprintf("%s.new", path);
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
	else if (sync && fsync(fd) == -1)
		log_warn("fsync %s", tmp);
	else if (rename(tmp, path) == -1)
		log_warn("rename %s to %s", tmp, path);
	else
		rc = 0;
	close(fd);
	if (rc == -1)
		unlink(tmp);
	free(tmp);
	return rc;
}

void
session_journal_write(int sync)
{
	if (jcfg == NULL || !jcfg->persist_sessions)
		return;
	struct json_object *j = json_object_new_object(), *list = json_object_new_array();
	json_object_object_add(j, "version", json_object_new_int(JOURNAL_VERSION));
	struct jobs_snapshot snap = {json_object_new_array(), json_object_new_object()};
	pool_lock();
	session_each(add_entry, list);
	job_each_kept(add_job, &snap);
	pool_unlock();
	json_object_object_add(j, "sessions", list);
	json_object_object_add(j, "jobs", snap.list);
	const char *text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
	if (last_written == NULL || strcmp(last_written, text) != 0) {
		/* The results first: the journal never names one not written. */
		write_jobs(&snap, sync);
		if (replace(journal_path, text, sync) == 0) {
			free(last_written);
			last_written = xstrdup(text);
		}
	}
	json_object_put(snap.results);
	json_object_put(j);
}
