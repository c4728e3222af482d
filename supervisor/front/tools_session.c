/*
 * tools_session.c - what the session tools share (see tools.h): the
 * session a call names, its one-line summary, and the usage of its
 * working directory.
 */
#include "autoconf.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "clock.h"
#include "config.h"
#include "job.h"
#include "pool.h"
#include "result.h"
#include "session.h"
#include "tools.h"
#include "xmalloc.h"

/*
 * A working directory may hold hundreds of thousands of files. Counting is
 * done without pool_lock, stops at these bounds (the figures are then
 * minimums, and say so), and is kept for USAGE_TTL_S so that many callers
 * do not count the same tree again.
 */
#define WALK_MAX_FILES 100000
#define WALK_MAX_S 0.5
#define USAGE_TTL_S 10

const char tool_session_id_schema[] =
	"{\"type\":\"object\",\"properties\":{\"session_id\":{\"type\":\"string\","
	"\"description\":\"Defaults to this connection's own session.\"}}}";

/* nftw has no argument for its callback: each thread counts into its own. */
static _Thread_local struct walk {
	struct dir_usage u;
	double deadline;
} *walk;

static int
add_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	if (ftw->level == 0) {
		/* A kernel of its own uid keeps it 0700; the front has no privilege. */
		walk->u.unreadable = flag == FTW_DNR;
		return 0; /* the directory itself */
	}
	walk->u.files++;
	if (flag == FTW_F)
		walk->u.bytes += (long long)sb->st_size;
	if (walk->u.files >= WALK_MAX_FILES ||
	    (walk->u.files % 1024 == 0 && clock_mono() > walk->deadline))
		return 1; /* stop: nftw returns this */
	return 0;
}

/* Count what `dir` holds, within the bounds. Lock not held. */
static struct dir_usage
measure(const char *dir)
{
	struct walk w = {.deadline = clock_mono() + WALK_MAX_S};

	walk = &w;
	w.u.complete = nftw(dir, add_entry, 16, FTW_PHYS) != 1 && !w.u.unreadable;
	walk = NULL;
	w.u.measured = clock_mono();
	return w.u;
}

void
tool_refresh_usage(struct session **list, size_t n)
{
	double now = clock_mono();
	char **dirs = xcalloc(n ? n : 1, sizeof(*dirs));
	int any = 0;

	for (size_t i = 0; i < n; i++) {
		struct session *s = list[i];
		if (s->worker == NULL || s->worker->workdir == NULL || s->usage.measuring ||
		    (s->usage.measured > 0 && now - s->usage.measured < USAGE_TTL_S))
			continue;
		s->usage.measuring = 1;
		dirs[i] = xstrdup(s->worker->workdir);
		any = 1;
	}
	if (any) {
		pool_unlock();
		struct dir_usage *u = xcalloc(n, sizeof(*u));
		for (size_t i = 0; i < n; i++)
			if (dirs[i])
				u[i] = measure(dirs[i]);
		pool_lock();
		/* The callers' references kept every session alive meanwhile. */
		for (size_t i = 0; i < n; i++)
			if (dirs[i])
				list[i]->usage = u[i];
		free(u);
	}
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
}

static const char *
session_state(const struct session *s)
{
	if (s->busy)
		return "busy";
	if (s->hibernated)
		return "hibernated";
	if (s->worker == NULL)
		return s->kept_dir ? "dead" : "no kernel yet";
	return s->worker->state == WORKER_DEAD ? "dead" : "idle";
}

/* The working directory's usage for people: "at least ..." when cut short. */
static char *
usage_text(const struct dir_usage *u, double now)
{
	if (u->measured == 0)
		return xstrdup("being counted; ask again in a moment");
	if (u->unreadable)
		return xstrdup("not counted: the kernel has its own uid (kernel_uid_range), and the "
			       "daemon's unprivileged front may not read its directory; ask the "
			       "kernel (os.scandir, du)");
	if (u->complete)
		return xasprintf("%ld files, %lld bytes (counted %.0f s ago)", u->files, u->bytes,
				 now - u->measured);
	return xasprintf("at least %ld files, at least %lld bytes (counted %.0f s ago; counting "
			 "stops after %d files or %.1f s)",
			 u->files, u->bytes, now - u->measured, WALK_MAX_FILES, WALK_MAX_S);
}

struct json_object *
tool_session_summary(const struct session *s)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "session_id", json_object_new_string(s->id));
	json_object_object_add(o, "created", json_object_new_int64(s->created));
	json_object_object_add(o, "last_used", json_object_new_int64(s->last_used));
	json_object_object_add(o, "state", json_object_new_string(session_state(s)));
	if (s->worker && s->worker->workdir) {
		const struct dir_usage *u = &s->usage;
		char *text = usage_text(u, clock_mono());
		json_object_object_add(o, "working_directory",
				       json_object_new_string(s->worker->workdir));
		json_object_object_add(o, "working_directory_bytes",
				       u->unreadable ? NULL : json_object_new_int64(u->bytes));
		json_object_object_add(o, "working_directory_files",
				       u->unreadable ? NULL : json_object_new_int64(u->files));
		json_object_object_add(o, "working_directory_complete",
				       json_object_new_boolean(u->measured > 0 && u->complete));
		json_object_object_add(o, "working_directory_usage", json_object_new_string(text));
		free(text);
	} else if (s->kept_workdir) {
		json_object_object_add(o, "working_directory",
				       json_object_new_string(s->kept_workdir));
	}
	return o;
}

/*
 * The session's working directory (caller owns), giving it its kernel
 * first if it has none yet (a silent, empty execution). NULL on failure,
 * with *result set to the failed execution's result (caller owns).
 */
char *
tool_session_workdir(struct tool_call *tc, struct session *s, struct json_object **result)
{
	if (s->worker == NULL) {
		struct job *j = job_new(s, tc->session->id, "pass", 60, 1, NULL);
		job_run(j, -1, 0);
		if (j->status != JOB_COMPLETED || s->worker == NULL)
			*result = json_object_get(j->call.result);
		job_unref(j);
		if (*result)
			return NULL;
	}
	if (s->worker == NULL || s->worker->workdir == NULL) {
		*result = result_failed("NoKernel", "the session has no kernel");
		return NULL;
	}
	return xstrdup(s->worker->workdir);
}
