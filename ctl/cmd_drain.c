/*
 * cmd_drain.c - codeexecctl drain and undrain: the node takes no new
 * session while its existing ones go on (and /health answers 503, so a
 * load balancer sends new sessions elsewhere), or takes them again.
 */
#include "autoconf.h"

#include <stdio.h>

#include "control_proto.h"
#include "ctl.h"
#include "log.h"

/* Ask the daemon to drain (`on`) or not; report what it says. */
static int
drain_set(struct ctl *c, int on)
{
	struct json_object *req = json_object_new_object();
	struct json_object *reply;

	json_object_object_add(req, CONTROL_KEY_CMD, json_object_new_string(CONTROL_CMD_DRAIN));
	json_object_object_add(req, CONTROL_KEY_ON, json_object_new_boolean(on));
	int rc = ctl_control(c, req, &reply);
	json_object_put(req);
	if (rc == CTL_OK && !c->json) {
		if (ctl_bool(reply, CONTROL_KEY_DRAINING) == on) {
			printf(on ? "draining: no new sessions; %lld go on\n"
				  : "taking new sessions again (%lld open)\n",
			       ctl_int(reply, CONTROL_KEY_SESSIONS, 0));
		} else {
			log_warnx("%s: the daemon did not confirm it", on ? "drain" : "undrain");
			rc = CTL_FAILED;
		}
	}
	json_object_put(reply);
	return rc;
}

static int
drain_run(struct ctl *c, char **argv)
{
	(void)argv;
	return drain_set(c, 1);
}

static int
undrain_run(struct ctl *c, char **argv)
{
	(void)argv;
	return drain_set(c, 0);
}

const struct ctl_cmd cmd_drain = {
	.name = "drain",
	.args = "",
	.nargs = 0,
	.run = drain_run,
};

const struct ctl_cmd cmd_undrain = {
	.name = "undrain",
	.args = "",
	.nargs = 0,
	.run = undrain_run,
};
