/* tool_inspect_session.c - {name}_inspect_session: variables, files, kernel state. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "checkpoint_cell.h"
#include "config.h"
#include "job.h"
#include "pool.h"
#include "pylit.h"
#include "session.h"
#include "tools.h"
#include "xmalloc.h"

/* Seconds inspect_session's variable listing may take in the kernel. */
#define INSPECT_TIMEOUT_S 10
/* Entries of the working directory listed with their sizes; and counted. */
#define LIST_MAX_FILES 500
#define COUNT_MAX_FILES 100000

/*
 * Lists globals by name and type, and the checkpoints of directory %s
 * (tool_checkpoint.c), without leaving a name behind.
 */
static const char inspect_code[] =
	"(lambda j, o, d: print(j.dumps({'variables': {k: type(v).__name__ for k, v in "
	"globals().items() if not k.startswith('_') and k not in ('In', 'Out', 'exit', 'quit', "
	"'get_ipython')}, 'checkpoints': [j.load(open(o.path.join(d, n))) for n in "
	"sorted(o.listdir(d) if o.path.isdir(d) else []) if n.endswith('.json') and "
	"not n.startswith('.')]})))(__import__('json'), __import__('os'), %s)";

/*
 * Files at the top of the working directory, with sizes: the first
 * LIST_MAX_FILES, and how many there are (at least) when there are more.
 * Adds "files" and maybe "files_truncated" and "files_note" to `o`. Runs
 * without the lock.
 */
static void
list_files(const char *dir, struct json_object *o)
{
	struct json_object *files = json_object_new_array();
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	long seen = 0;

	if (d == NULL && errno == EACCES) {
		/* A kernel of its own uid keeps it 0700; the front has no privilege. */
		json_object_object_add(o, "files", NULL);
		json_object_object_add(o, "files_note",
				       json_object_new_string("not listed: the kernel has its own uid "
							      "(kernel_uid_range), and the daemon's "
							      "unprivileged front may not read its "
							      "directory; ask the kernel (os.scandir)"));
		json_object_put(files);
		return;
	}
	while (d && seen < COUNT_MAX_FILES && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (++seen > LIST_MAX_FILES)
			continue;
		struct json_object *f = json_object_new_object();
		json_object_object_add(f, "name", json_object_new_string(e->d_name));
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			json_object_object_add(f, "bytes", json_object_new_int64(st.st_size));
			json_object_object_add(f, "directory",
					       json_object_new_boolean(S_ISDIR(st.st_mode)));
		}
		json_object_array_add(files, f);
	}
	int more = d && seen == COUNT_MAX_FILES && readdir(d) != NULL;
	if (d)
		closedir(d);
	json_object_object_add(o, "files", files);
	if (seen > LIST_MAX_FILES) {
		char *note = xasprintf("%s%ld entries at the top of the working directory; the "
				       "first %d are listed",
				       more ? "at least " : "", seen, LIST_MAX_FILES);
		json_object_object_add(o, "files_truncated", json_object_new_boolean(1));
		json_object_object_add(o, "files_note", json_object_new_string(note));
		free(note);
	}
}

/*
 * Add "variables" (names and types) and "checkpoints" to `o`, asked of the
 * kernel itself, whose directory the front may not read.
 */
static void
kernel_variables(struct tool_call *tc, struct session *s, struct json_object *o)
{
	char *dir = xasprintf("%s/%s", s->worker->workdir, CHECKPOINT_DIR), *lit = pylit(dir);
	char *code = xasprintf(inspect_code, lit);
	/* Run on this thread; its stdout comes in the result. */
	struct job *j = job_new(s, tc->session->id, code, INSPECT_TIMEOUT_S, 1, NULL);
	job_run(j, -1, 0);
	struct json_object *got = NULL, *out, *v;
	if (j->status == JOB_COMPLETED && json_object_object_get_ex(j->call.result, "stdout", &out))
		got = json_tokener_parse(json_object_get_string(out));
	job_unref(j);
	/* The kernel is the session's own: take only what has the expected type. */
	const char *keys[] = {"variables", "checkpoints"};
	json_type types[] = {json_type_object, json_type_array};
	for (int i = 0; i < 2; i++) {
		int fine = json_object_is_type(got, json_type_object) &&
			   json_object_object_get_ex(got, keys[i], &v) && json_object_is_type(v, types[i]);
		json_object_object_add(o, keys[i], fine ? json_object_get(v)
						      : i == 0 ? json_object_new_object()
							       : json_object_new_array());
	}
	json_object_put(got);
	free(code);
	free(lit);
	free(dir);
}

static void
inspect_describe(const struct config *cfg, struct json_object *tool)
{
	json_object_object_add(tool, "description",
			       json_object_new_string("Inspect a session: its variables by name "
						      "and type, its checkpoints, the files in "
						      "its working directory, and its kernel's "
						      "state."));
	json_object_object_add(tool, "inputSchema", tool_schema(tool_session_id_schema));
}

static struct json_object *
inspect_call(struct tool_call *tc)
{
	struct session *s = tool_session_arg(tc, "session_id");
	if (s == NULL)
		return NULL;
	tool_refresh_usage(&s, 1);
	struct json_object *o = tool_session_summary(s);
	/* A busy kernel cannot answer now; a missing one has nothing to tell. */
	if (!s->busy && s->worker && s->worker->state != WORKER_DEAD)
		kernel_variables(tc, s, o);
	if (s->worker && s->worker->workdir) {
		/* The session's reference keeps its worker, and so the path. */
		char *dir = xstrdup(s->worker->workdir);
		pool_unlock();
		list_files(dir, o);
		pool_lock();
		free(dir);
	}
	session_put(s);
	return tool_result(o, NULL, 0);
}

const struct tool tool_inspect_session = {
	.name_format = "{name}_inspect_session",
	.describe = inspect_describe,
	.call = inspect_call,
	.session_arg = "session_id",
};

