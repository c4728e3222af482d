/*
 * tool_sessions.c - the session tools: {name}_list_sessions,
 * {name}_inspect_session and {name}_close_session.
 */
#include "autoconf.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "job.h"
#include "pool.h"
#include "session.h"
#include "tools.h"

/* Seconds inspect_session's variable listing may take in the kernel. */
#define INSPECT_TIMEOUT_S 10

/* Lists globals by name and type without leaving a name behind. */
static const char inspect_code[] =
	"(lambda j: print(j.dumps({k: type(v).__name__ for k, v in globals().items() "
	"if not k.startswith('_') and k not in ('In', 'Out', 'exit', 'quit', "
	"'get_ipython')})))(__import__('json'))";

static const char session_id_schema[] =
	"{\"type\":\"object\",\"properties\":{\"session_id\":{\"type\":\"string\","
	"\"description\":\"Defaults to this connection's own session.\"}}}";

static long long tree_bytes;

static int
add_size(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	if (flag == FTW_F)
		tree_bytes += (long long)sb->st_size;
	return 0;
}

/* Bytes of the regular files under `dir`. */
static long long
dir_size(const char *dir)
{
	tree_bytes = 0; /* callers hold pool_lock, so this static is not shared */
	nftw(dir, add_size, 16, FTW_PHYS);
	return tree_bytes;
}

static const char *
session_state(const struct session *s)
{
	if (s->busy)
		return "busy";
	if (s->worker == NULL)
		return "no kernel yet";
	return s->worker->state == WORKER_DEAD ? "dead" : "idle";
}

/* The session named by argument session_id, or the caller's; referenced. */
static struct session *
named_session(struct tool_call *tc)
{
	const char *id = tool_arg_string(tc, "session_id");
	if (id == NULL || strcmp(id, tc->session->id) == 0) {
		tc->session->refs++;
		return tc->session;
	}
	struct session *s = session_get(id);
	if (s && !session_may_use(tc->session, s)) {
		session_put(s);
		s = NULL;
	}
	if (s == NULL)
		tool_bad_params(tc, "unknown session_id");
	return s;
}

static struct json_object *
session_summary(const struct session *s)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "session_id", json_object_new_string(s->id));
	json_object_object_add(o, "created", json_object_new_int64(s->created));
	json_object_object_add(o, "last_used", json_object_new_int64(s->last_used));
	json_object_object_add(o, "state", json_object_new_string(session_state(s)));
	if (s->worker && s->worker->workdir) {
		json_object_object_add(o, "working_directory",
				       json_object_new_string(s->worker->workdir));
		json_object_object_add(o, "working_directory_bytes",
				       json_object_new_int64(dir_size(s->worker->workdir)));
	}
	return o;
}

static void
list_describe(const struct config *cfg, struct json_object *tool)
{
	json_object_object_add(tool, "description",
			       json_object_new_string("List your sessions: id, created, last "
						      "used, state and working directory size."));
	json_object_object_add(tool, "inputSchema",
			       tool_schema("{\"type\":\"object\",\"properties\":{}}"));
}

static struct json_object *
list_call(struct tool_call *tc)
{
	struct json_object *list = session_list_visible(tc->session, session_summary);
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "sessions", list);
	return tool_result(o, NULL, 0);
}

/* Files at the top of the working directory, with sizes. */
static struct json_object *
list_files(const char *dir)
{
	struct json_object *files = json_object_new_array();
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;

	while (d && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
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
	if (d)
		closedir(d);
	return files;
}

/* Names and types of the kernel's variables, asked of the kernel itself. */
static struct json_object *
kernel_variables(struct tool_call *tc, struct session *s)
{
	struct job *j = job_start(s, tc->session->id, inspect_code, INSPECT_TIMEOUT_S, 1, NULL);
	job_wait(j, -1, 0);
	struct json_object *vars = NULL;
	if (j->status == JOB_COMPLETED && j->call.out.data)
		vars = json_tokener_parse(j->call.out.data);
	job_put(j);
	return vars ? vars : json_object_new_object();
}

static void
inspect_describe(const struct config *cfg, struct json_object *tool)
{
	json_object_object_add(tool, "description",
			       json_object_new_string("Inspect a session: its variables by name "
						      "and type, the files in its working "
						      "directory, and its kernel's state."));
	json_object_object_add(tool, "inputSchema", tool_schema(session_id_schema));
}

static struct json_object *
inspect_call(struct tool_call *tc)
{
	struct session *s = named_session(tc);
	if (s == NULL)
		return NULL;
	struct json_object *o = session_summary(s);
	/* A busy kernel cannot answer now; a missing one has nothing to tell. */
	if (!s->busy && s->worker && s->worker->state != WORKER_DEAD)
		json_object_object_add(o, "variables", kernel_variables(tc, s));
	if (s->worker && s->worker->workdir)
		json_object_object_add(o, "files", list_files(s->worker->workdir));
	session_put(s);
	return tool_result(o, NULL, 0);
}

static void
close_describe(const struct config *cfg, struct json_object *tool)
{
	json_object_object_add(tool, "description",
			       json_object_new_string("Close a session: its kernel is ended and "
						      "its working directory removed."));
	json_object_object_add(tool, "inputSchema", tool_schema(session_id_schema));
}

static struct json_object *
close_call(struct tool_call *tc)
{
	struct session *s = named_session(tc);
	if (s == NULL)
		return NULL;
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "session_id", json_object_new_string(s->id));
	json_object_object_add(o, "closed", json_object_new_boolean(1));
	session_close(s);
	session_put(s);
	return tool_result(o, NULL, 0);
}

const struct tool tool_list_sessions = {
	.name_format = "{name}_list_sessions",
	.describe = list_describe,
	.call = list_call,
};

const struct tool tool_inspect_session = {
	.name_format = "{name}_inspect_session",
	.describe = inspect_describe,
	.call = inspect_call,
};

const struct tool tool_close_session = {
	.name_format = "{name}_close_session",
	.describe = close_describe,
	.call = close_call,
};
