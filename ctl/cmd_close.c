/* cmd_close.c - codeexecctl close SESSION: end a session and its kernel. */
#include "autoconf.h"

#include <stdio.h>

#include "control_proto.h"
#include "ctl.h"
#include "log.h"

static int
close_run(struct ctl *c, char **argv)
{
	struct json_object *req = json_object_new_object();
	struct json_object *reply;

	json_object_object_add(req, CONTROL_KEY_CMD, json_object_new_string(CONTROL_CMD_CLOSE));
	json_object_object_add(req, CONTROL_KEY_SESSION, json_object_new_string(argv[0]));
	int rc = ctl_control(c, req, &reply);
	json_object_put(req);
	if (rc == CTL_OK && !c->json) {
		if (ctl_bool(reply, CONTROL_KEY_CLOSED)) {
			printf("session %s closed\n", argv[0]);
		} else {
			log_warnx("close %s: the daemon did not confirm it", argv[0]);
			rc = CTL_FAILED;
		}
	}
	json_object_put(reply);
	return rc;
}

const struct ctl_cmd cmd_close = {
	.name = "close",
	.args = "SESSION",
	.nargs = 1,
	.run = close_run,
};
