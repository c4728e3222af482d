/* control.c - see control.h. */
#include "autoconf.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "control.h"
#include "control_access.h"
#include "control_proto.h"
#include "health.h"
#include "log.h"
#include "pool.h"
#include "session.h"
#include "sidecar_view.h"

/* A client that sends nothing in this time is dropped: the loop must not wait. */
#define CONTROL_READ_MS 1000
#define CONTROL_MAX_LINE 4096

#define CONTROL_MAX_GROUPS 256

/* The socket as the parent made it, and who may use it; borrowed. */
static const struct control_access *acc;

void
control_init(const struct control_access *a)
{
	acc = a;
}

struct json_object *
control_status(void)
{
	struct json_object *r = json_object_new_object();
	char why[512];
	int degraded = health_degraded(why, sizeof(why));

	if (!degraded)
		degraded = sidecar_view_down(why, sizeof(why));
	json_object_object_add(r, "status",
			       json_object_new_string(degraded		? "degraded"
						      : health_draining() ? "draining"
						      : pool_ready()	? "ok"
									: "starting"));
	json_object_object_add(r, CONTROL_KEY_DRAINING,
			       json_object_new_boolean(health_draining()));
	if (degraded)
		json_object_object_add(r, "reason", json_object_new_string(why));
	json_object_object_add(r, "name", json_object_new_string(acc->cfg->name));
	json_object_object_add(r, "version", json_object_new_string(PACKAGE_VERSION));
	/* The daemon's pid: the privileged parent's, which the pid file holds. */
	json_object_object_add(r, "pid", json_object_new_int(getppid()));
	json_object_object_add(r, "uptime_s", json_object_new_int64(time(NULL) - acc->started));
	json_object_object_add(r, "sessions", json_object_new_int(session_count()));
	json_object_object_add(r, "idle_kernels", json_object_new_int(pool_idle_count()));
	json_object_object_add(r, "workers", pool_describe());
	json_object_object_add(r, "sidecars", sidecar_view_json());
	return r;
}

/*
 * The answer to a request of another protocol version (`v`, borrowed):
 * an error that names ours, and nothing else. Caller owns.
 */
static struct json_object *
control_other_version(struct json_object *v)
{
	struct json_object *r = json_object_new_object();
	char text[200];

	snprintf(text, sizeof(text),
		 "control protocol %.20s is not this daemon's (it speaks %d): use the "
		 "codeexecctl of the same release", json_object_to_json_string(v),
		 CONTROL_PROTO_VERSION);
	json_object_object_add(r, CONTROL_KEY_ERROR, json_object_new_string(text));
	json_object_object_add(r, CONTROL_KEY_PROTOCOL, json_object_new_int(CONTROL_PROTO_VERSION));
	return r;
}

/* Run one request; the answer is owned by the caller. Lock held. */
static struct json_object *
control_run(struct json_object *req)
{
	struct json_object *cmd, *id, *v, *r;

	/* Without "protocol": a line written by hand, taken as ours. */
	if (json_object_object_get_ex(req, CONTROL_KEY_PROTOCOL, &v) &&
	    (!json_object_is_type(v, json_type_int) ||
	     json_object_get_int64(v) != CONTROL_PROTO_VERSION))
		return control_other_version(v);
	if (!json_object_object_get_ex(req, CONTROL_KEY_CMD, &cmd))
		goto bad;
	const char *name = json_object_get_string(cmd);
	if (strcmp(name, CONTROL_CMD_STATUS) == 0)
		return control_status();
	if (strcmp(name, CONTROL_CMD_SESSIONS) == 0) {
		r = json_object_new_object();
		json_object_object_add(r, CONTROL_KEY_SESSIONS, session_describe());
		return r;
	}
	if (strcmp(name, CONTROL_CMD_CLOSE) == 0 &&
	    json_object_object_get_ex(req, CONTROL_KEY_SESSION, &id)) {
		struct session *s = session_get(json_object_get_string(id));
		r = json_object_new_object();
		if (s == NULL) {
			json_object_object_add(r, CONTROL_KEY_ERROR,
					       json_object_new_string("session not found"));
			return r;
		}
		log_info("session %.8s closed by the operator", s->id);
		session_close(s);
		session_put(s);
		json_object_object_add(r, CONTROL_KEY_CLOSED, json_object_new_boolean(1));
		return r;
	}
	if (strcmp(name, CONTROL_CMD_DRAIN) == 0 &&
	    json_object_object_get_ex(req, CONTROL_KEY_ON, &v) &&
	    json_object_is_type(v, json_type_boolean)) {
		health_set_draining(json_object_get_boolean(v));
		r = json_object_new_object();
		json_object_object_add(r, CONTROL_KEY_DRAINING,
				       json_object_new_boolean(health_draining()));
		json_object_object_add(r, CONTROL_KEY_SESSIONS,
				       json_object_new_int(session_count()));
		return r;
	}
bad:
	r = json_object_new_object();
	json_object_object_add(r, CONTROL_KEY_ERROR, json_object_new_string(
		"unknown request: send {\"cmd\":\"status\"}, {\"cmd\":\"sessions\"}, "
		"{\"cmd\":\"close\",\"session\":ID} or {\"cmd\":\"drain\",\"on\":BOOL}"));
	return r;
}

/* Read one line (bounded in size and time). Returns 0 with it in `line`. */
static int
read_line(int fd, struct buf *line)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char chunk[512];

	while (line->len < CONTROL_MAX_LINE && !memchr(line->data ? line->data : "", '\n', line->len)) {
		if (poll(&p, 1, CONTROL_READ_MS) <= 0)
			return -1;
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		buf_add(line, chunk, (size_t)n);
	}
	return line->len > 0 ? 0 : -1;
}

/*
 * Nonzero if the peer on `fd` (its credentials `cred`) has control_group as
 * its group or one of its supplementary groups. The socket says so itself
 * (SO_PEERGROUPS): the user database is never consulted, since its modules
 * (NSS) may do what the front's seccomp filter does not allow.
 */
static int
in_control_group(int fd, const struct ucred *cred)
{
	gid_t groups[CONTROL_MAX_GROUPS];
	socklen_t len = sizeof(groups);

	if (acc->control_gid == (gid_t)-1)
		return 0;
	if (cred->gid == acc->control_gid)
		return 1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == -1)
		return 0;
	for (size_t i = 0; i < len / sizeof(groups[0]); i++)
		if (groups[i] == acc->control_gid)
			return 1;
	return 0;
}

/*
 * Whether the peer on `fd` may steer the daemon, by its uid alone
 * (SO_PEERCRED): root; the daemon's own uid when no kernel has it; a member
 * of control_group. A uid a kernel may run under never, whatever its
 * groups and however it was started (a detached kernel child included).
 * The peer's uid goes to *uid (-1 if unknown).
 */
static int
peer_allowed(int fd, uid_t *uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	*uid = (uid_t)-1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return 0;
	*uid = cred.uid;
	if (cred.uid == 0)
		return 1;
	if (control_kernel_id(acc, cred.uid, 0))
		return 0;
	return (cred.uid == acc->daemon_uid && acc->admin_ok) || in_control_group(fd, &cred);
}

void
control_accept(int lfd)
{
	struct buf line;
	struct json_object *req, *answer;

	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd == -1) {
		if (errno != EAGAIN)
			log_warn("accept on %s", acc->path);
		return;
	}
	buf_init(&line);
	uid_t uid;
	if (!peer_allowed(fd, &uid)) {
		log_warnx("control socket: refused uid %d (only root, control_group, and the "
			  "daemon's user when kernels do not share it)",
			  (int)uid);
		answer = json_object_new_object();
		json_object_object_add(answer, CONTROL_KEY_ERROR,
				       json_object_new_string(
					       "not allowed: only root, members of control_group, "
					       "and the daemon's user when kernels do not share it"));
	} else if (read_line(fd, &line) == 0 && (req = json_tokener_parse(line.data)) != NULL) {
		pool_lock();
		answer = control_run(req);
		pool_unlock();
		json_object_put(req);
	} else {
		answer = json_object_new_object();
		json_object_object_add(answer, CONTROL_KEY_ERROR,
				       json_object_new_string("expected one line of JSON"));
	}
	const char *text = json_object_to_json_string_ext(answer, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (write(fd, text, strlen(text)) == -1 || write(fd, "\n", 1) == -1)
		log_warn("write to a control client");
	json_object_put(answer);
	buf_free(&line);
	close(fd);
}
