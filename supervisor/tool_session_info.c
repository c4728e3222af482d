/* tool_session_info.c - what the session tools share; see tools.h. */
#include "autoconf.h"

#include <ftw.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "pool.h"
#include "session.h"
#include "tools.h"

const char tool_session_id_schema[] =
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

struct session *
tool_named_session(struct tool_call *tc)
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

struct json_object *
tool_session_summary(const struct session *s)
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

