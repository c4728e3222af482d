/* cmd_status.c - codeexecctl status: the daemon, its sessions, workers and sidecars. */
#include "autoconf.h"

#include <stdio.h>

#include "control_proto.h"
#include "ctl.h"

/* One row per worker process: the pool at a glance. */
static void
status_print_workers(struct json_object *workers)
{
	struct table t;

	if (!json_object_is_type(workers, json_type_array) ||
	    json_object_array_length(workers) == 0) {
		printf("no workers\n");
		return;
	}
	table_init(&t, 4);
	table_addf(&t, "WORKER");
	table_addf(&t, "STATE");
	table_addf(&t, "KERNEL");
	table_addf(&t, "SESSION");
	for (size_t i = 0; i < json_object_array_length(workers); i++) {
		struct json_object *w = json_object_array_get_idx(workers, i);
		long long kernel = ctl_int(w, "kernel_pid", 0);
		const char *session = ctl_str(w, "session", "");

		table_addf(&t, "%lld", ctl_int(w, "pid", 0));
		table_addf(&t, "%s", ctl_str(w, "state", "?"));
		if (kernel > 0)
			table_addf(&t, "%lld", kernel);
		else
			table_addf(&t, "-");
		table_addf(&t, "%s", session[0] ? session : "-");
	}
	table_print(&t, stdout);
	table_free(&t);
}

/* One row per sidecar: state, pid, restarts, uptime, memory. */
static void
status_print_sidecars(struct json_object *sidecars)
{
	struct table t;
	char up[32];

	if (!json_object_is_type(sidecars, json_type_array) ||
	    json_object_array_length(sidecars) == 0)
		return;
	table_init(&t, 6);
	table_addf(&t, "SIDECAR");
	table_addf(&t, "STATE");
	table_addf(&t, "PID");
	table_addf(&t, "RESTARTS");
	table_addf(&t, "UPTIME");
	table_addf(&t, "RSS");
	for (size_t i = 0; i < json_object_array_length(sidecars); i++) {
		struct json_object *s = json_object_array_get_idx(sidecars, i);
		long long pid = ctl_int(s, "pid", 0);

		table_addf(&t, "%s", ctl_str(s, "name", "?"));
		table_addf(&t, "%s", ctl_str(s, "state", "?"));
		if (pid > 0)
			table_addf(&t, "%lld", pid);
		else
			table_addf(&t, "-");
		table_addf(&t, "%lld", ctl_int(s, "restarts", 0));
		ctl_duration(ctl_int(s, "uptime_s", 0), up, sizeof(up));
		table_addf(&t, "%s", pid > 0 ? up : "-");
		table_addf(&t, "%lld MiB", ctl_int(s, "rss_kb", 0) / 1024);
	}
	printf("\n");
	table_print(&t, stdout);
	table_free(&t);
}

static int
status_run(struct ctl *c, char **argv)
{
	struct json_object *req = json_object_new_object();
	struct json_object *reply, *workers = NULL, *sidecars = NULL;
	char up[32];

	json_object_object_add(req, CONTROL_KEY_CMD, json_object_new_string(CONTROL_CMD_STATUS));
	int rc = ctl_control(c, req, &reply);
	json_object_put(req);
	if (rc != CTL_OK || c->json) {
		json_object_put(reply);
		return rc;
	}
	ctl_duration(ctl_int(reply, "uptime_s", 0), up, sizeof(up));
	printf("codeexecd %s (%s), pid %lld, up %s: %s\n", ctl_str(reply, "version", "?"),
	       ctl_str(reply, "name", "?"), ctl_int(reply, "pid", 0), up,
	       ctl_str(reply, "status", "?"));
	printf("%lld sessions, %lld idle kernels\n\n", ctl_int(reply, "sessions", 0),
	       ctl_int(reply, "idle_kernels", 0));
	json_object_object_get_ex(reply, "workers", &workers);
	status_print_workers(workers);
	json_object_object_get_ex(reply, "sidecars", &sidecars);
	status_print_sidecars(sidecars);
	json_object_put(reply);
	return CTL_OK;
}

const struct ctl_cmd cmd_status = {
	.name = "status",
	.args = "",
	.nargs = 0,
	.run = status_run,
};
