/* cmd_sessions.c - codeexecctl sessions: one line per open MCP session. */
#include "autoconf.h"

#include <stdio.h>
#include <time.h>

#include "control_proto.h"
#include "ctl.h"

/* A Unix time as local "YYYY-MM-DD HH:MM:SS", or "-" when unknown. */
static void
sessions_time(long long t, char *out, size_t outlen)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || localtime_r(&tt, &tm) == NULL ||
	    strftime(out, outlen, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(out, outlen, "-");
}

static void
sessions_add_row(struct table *t, struct json_object *s, time_t now)
{
	long long worker = ctl_int(s, "worker_pid", 0), uid = ctl_int(s, "kernel_uid", 0);
	char created[32], idle[32];

	sessions_time(ctl_int(s, "created", 0), created, sizeof(created));
	ctl_duration((long long)now - ctl_int(s, "last_used", (long long)now), idle, sizeof(idle));
	table_addf(t, "%s", ctl_str(s, "id", "?"));
	table_addf(t, "%s", ctl_str(s, "identity", "-"));
	table_addf(t, "%s", created);
	table_addf(t, "%s", idle);
	table_addf(t, "%s", ctl_bool(s, "busy") ? "yes" : "no");
	if (worker > 0)
		table_addf(t, "%lld", worker);
	else
		table_addf(t, "-");
	/* Which identity holds which kernel uid of kernel_uid_range. */
	if (uid > 0)
		table_addf(t, "%lld", uid);
	else
		table_addf(t, "-");
}

static int
sessions_run(struct ctl *c, char **argv)
{
	struct json_object *req = json_object_new_object();
	struct json_object *reply, *list = NULL;
	struct table t;

	json_object_object_add(req, CONTROL_KEY_CMD,
			       json_object_new_string(CONTROL_CMD_SESSIONS));
	int rc = ctl_control(c, req, &reply);
	json_object_put(req);
	if (rc != CTL_OK || c->json) {
		json_object_put(reply);
		return rc;
	}
	if (!json_object_object_get_ex(reply, CONTROL_KEY_SESSIONS, &list) ||
	    !json_object_is_type(list, json_type_array) || json_object_array_length(list) == 0) {
		printf("no sessions\n");
		json_object_put(reply);
		return CTL_OK;
	}
	table_init(&t, 7);
	table_addf(&t, "SESSION");
	table_addf(&t, "IDENTITY");
	table_addf(&t, "CREATED");
	table_addf(&t, "IDLE");
	table_addf(&t, "BUSY");
	table_addf(&t, "WORKER");
	table_addf(&t, "UID");
	time_t now = time(NULL);
	for (size_t i = 0; i < json_object_array_length(list); i++)
		sessions_add_row(&t, json_object_array_get_idx(list, i), now);
	table_print(&t, stdout);
	table_free(&t);
	json_object_put(reply);
	return CTL_OK;
}

const struct ctl_cmd cmd_sessions = {
	.name = "sessions",
	.args = "",
	.nargs = 0,
	.run = sessions_run,
};
