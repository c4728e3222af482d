/* control.c - see control.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "control.h"
#include "control_proto.h"
#include "fsutil.h"
#include "health.h"
#include "log.h"
#include "sidecar_state.h"
#include "pool.h"
#include "privdrop.h"
#include "session.h"
#include "xmalloc.h"

/* A client that sends nothing in this time is dropped: the loop must not wait. */
#define CONTROL_READ_MS 1000
#define CONTROL_MAX_LINE 4096

#define CONTROL_MAX_GROUPS 256

static const struct config *cfg;
static char sock_dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static time_t started;

/*
 * Who may use the socket, fixed at start-up. Kernels run under
 * kernel_uid_range or, without it, under the daemon's own uid and gid:
 * none of those ids may ever be let in.
 */
static uid_t daemon_uid;		/* ours once privileges are dropped */
static gid_t kernel_gid;		/* without kernel_uid_range */
static int admin_ok;			/* daemon_uid is no kernel's uid */
static gid_t control_gid = (gid_t)-1;	/* control_group, or -1 */

/* Nonzero if a kernel may run under uid (or, as a group, gid). */
static int
kernel_id(unsigned id, int is_gid)
{
	if (cfg->kernel_uid_first != 0)
		return id >= cfg->kernel_uid_first && id <= cfg->kernel_uid_last;
	return is_gid ? id == kernel_gid : id == daemon_uid;
}

/* Work out daemon_uid, kernel_gid, admin_ok and control_gid; fatal on a bad control_group. */
static void
control_identities(void)
{
	char err[512];
	uid_t uid;
	gid_t gid;

	if (privdrop_lookup(cfg, &uid, &gid, err, sizeof(err)) == -1)
		fatalx("%s", err);
	daemon_uid = geteuid() == 0 && uid != (uid_t)-1 ? uid : geteuid();
	kernel_gid = geteuid() == 0 && uid != (uid_t)-1 ? gid : getegid();
	admin_ok = daemon_uid != 0 && !kernel_id(daemon_uid, 0);
	if (cfg->control_group == NULL || cfg->control_group[0] == '\0')
		return;
	struct group *gr = getgrnam(cfg->control_group);
	if (gr == NULL)
		fatalx("control_group %s: no such group", cfg->control_group);
	if (kernel_id(gr->gr_gid, 1))
		fatalx("control_group %s (gid %d) is a group kernels run as: choose a group of "
		       "operators only",
		       cfg->control_group, (int)gr->gr_gid);
	control_gid = gr->gr_gid;
}

/*
 * runtime_dir/control, 0700 (0750 with control_group's gid), so that
 * kernels of other ids cannot reach the socket at all. Made before
 * privileges are dropped: with `user` it stays root's, so even kernels
 * sharing the daemon's uid cannot enter, rename or replace it; only when
 * no kernel has the daemon's uid is it given to that uid.
 */
static int
make_control_dir(void)
{
	mode_t mode = control_gid != (gid_t)-1 ? 0750 : 0700;
	uid_t owner = admin_ok && geteuid() == 0 ? daemon_uid : geteuid();
	struct stat st;

	for (int attempt = 0;; attempt++) {
		if (mkdir(sock_dir, mode) == -1 && errno != EEXIST) {
			log_warn("mkdir %s", sock_dir);
			return -1;
		}
		if (lstat(sock_dir, &st) == -1) {
			log_warn("stat %s", sock_dir);
			return -1;
		}
		if (S_ISDIR(st.st_mode) && (st.st_uid == owner || st.st_uid == geteuid()))
			break;
		/*
		 * Left by a daemon of another configuration, or planted by a
		 * kernel that owned runtime_dir: root starts afresh, once.
		 */
		if (attempt > 0 || geteuid() != 0 || fs_remove_tree(sock_dir) == -1) {
			log_warnx("%s is not a directory of this daemon (uid %d); no control socket",
				  sock_dir, (int)st.st_uid);
			return -1;
		}
	}
	int fd = open(sock_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) == -1 || (st.st_uid != owner && st.st_uid != geteuid())) {
		log_warn("open %s", sock_dir);
		if (fd != -1)
			close(fd);
		return -1;
	}
	int rc = 0;
	if (fchown(fd, owner, control_gid) == -1 || fchmod(fd, mode) == -1) {
		log_warn("chown/chmod %s", sock_dir);
		rc = -1;
	}
	close(fd);
	return rc;
}

int
control_open(const struct config *c)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd;

	cfg = c;
	started = time(NULL);
	control_identities();
	if ((size_t)snprintf(sock_dir, sizeof(sock_dir), "%s/" CONTROL_SOCKET_DIR, c->runtime_dir) >=
		    sizeof(sock_dir) ||
	    (size_t)snprintf(sock_path, sizeof(sock_path), "%s/" CONTROL_SOCKET_FILE, sock_dir) >=
		    sizeof(sock_path)) {
		log_warnx("control socket path under %s is too long; no control socket",
			  c->runtime_dir);
		return -1;
	}
	if (make_control_dir() == -1)
		return -1;
	memcpy(sun.sun_path, sock_path, sizeof(sock_path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1) {
		log_warn("control socket");
		return -1;
	}
	unlink(sock_path);
	mode_t old = umask(0177);
	int rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	uid_t owner = admin_ok && geteuid() == 0 ? daemon_uid : geteuid();
	if (rc == 0 && (chown(sock_path, owner, control_gid) == -1 ||
			(control_gid != (gid_t)-1 && chmod(sock_path, 0660) == -1)))
		rc = -1;
	if (rc == -1 || listen(fd, 8) == -1) {
		log_warn("control socket %s", sock_path);
		close(fd);
		return -1;
	}
	return fd;
}

int
control_present(void)
{
	struct stat st;
	if (sock_path[0] == '\0')
		return 0;
	/* Made as root before the drop, its directory is closed to us now: there. */
	if (lstat(sock_path, &st) == -1)
		return errno == EACCES;
	return S_ISSOCK(st.st_mode);
}

void
control_close(int fd)
{
	if (fd == -1)
		return;
	close(fd);
	unlink(sock_path);
}

struct json_object *
control_status(void)
{
	struct json_object *r = json_object_new_object();
	char why[512];
	int degraded = health_degraded(why, sizeof(why));

	if (!degraded)
		degraded = sidecar_state_down(why, sizeof(why));
	json_object_object_add(r, "status", json_object_new_string(degraded      ? "degraded"
								    : pool_ready() ? "ok"
										   : "starting"));
	if (degraded)
		json_object_object_add(r, "reason", json_object_new_string(why));
	json_object_object_add(r, "name", json_object_new_string(cfg->name));
	json_object_object_add(r, "version", json_object_new_string(PACKAGE_VERSION));
	/* The daemon's pid: the privileged parent's, which the pid file holds. */
	json_object_object_add(r, "pid", json_object_new_int(getppid()));
	json_object_object_add(r, "uptime_s", json_object_new_int64(time(NULL) - started));
	json_object_object_add(r, "sessions", json_object_new_int(session_count()));
	json_object_object_add(r, "idle_kernels", json_object_new_int(pool_idle_count()));
	json_object_object_add(r, "workers", pool_describe());
	json_object_object_add(r, "sidecars", sidecar_state_json());
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
bad:
	r = json_object_new_object();
	json_object_object_add(r, CONTROL_KEY_ERROR, json_object_new_string(
		"unknown request: send {\"cmd\":\"status\"}, {\"cmd\":\"sessions\"} or "
		"{\"cmd\":\"close\",\"session\":ID}"));
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

	if (control_gid == (gid_t)-1)
		return 0;
	if (cred->gid == control_gid)
		return 1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == -1)
		return 0;
	for (size_t i = 0; i < len / sizeof(groups[0]); i++)
		if (groups[i] == control_gid)
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
	if (kernel_id(cred.uid, 0))
		return 0;
	return (cred.uid == daemon_uid && admin_ok) || in_control_group(fd, &cred);
}

void
control_accept(int lfd)
{
	struct buf line;
	struct json_object *req, *answer;

	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd == -1) {
		if (errno != EAGAIN)
			log_warn("accept on %s", sock_path);
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
