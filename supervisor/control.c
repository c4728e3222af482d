/* control.c - see control.h. */
#include "autoconf.h"

#include <errno.h>
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
#include "health.h"
#include "log.h"
#include "pool.h"
#include "session.h"
#include "xmalloc.h"

/* A client that sends nothing in this time is dropped: the loop must not wait. */
#define CONTROL_READ_MS 1000
#define CONTROL_MAX_LINE 4096

static const struct config *cfg;
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static time_t started;

int
control_open(const struct config *c)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd;

	cfg = c;
	started = time(NULL);
	if ((size_t)snprintf(sock_path, sizeof(sock_path), "%s/codeexecd.sock", c->runtime_dir) >=
	    sizeof(sock_path)) {
		log_warnx("control socket path under %s is too long; no control socket",
			  c->runtime_dir);
		return -1;
	}
	memcpy(sun.sun_path, sock_path, sizeof(sock_path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1) {
		log_warn("control socket");
		return -1;
	}
	unlink(sock_path);
	mode_t old = umask(0177);
	int rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
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
	return sock_path[0] && lstat(sock_path, &st) == 0 && S_ISSOCK(st.st_mode);
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

	json_object_object_add(r, "status", json_object_new_string(degraded      ? "degraded"
								    : pool_ready() ? "ok"
										   : "starting"));
	if (degraded)
		json_object_object_add(r, "reason", json_object_new_string(why));
	json_object_object_add(r, "name", json_object_new_string(cfg->name));
	json_object_object_add(r, "version", json_object_new_string(PACKAGE_VERSION));
	json_object_object_add(r, "pid", json_object_new_int(getpid()));
	json_object_object_add(r, "uptime_s", json_object_new_int64(time(NULL) - started));
	json_object_object_add(r, "sessions", json_object_new_int(session_count()));
	json_object_object_add(r, "idle_kernels", json_object_new_int(pool_idle_count()));
	json_object_object_add(r, "workers", pool_describe());
	return r;
}

/* Run one request; the answer is owned by the caller. Lock held. */
static struct json_object *
control_run(struct json_object *req)
{
	struct json_object *cmd, *id, *r;

	if (!json_object_object_get_ex(req, "cmd", &cmd))
		goto bad;
	const char *name = json_object_get_string(cmd);
	if (strcmp(name, "status") == 0)
		return control_status();
	if (strcmp(name, "sessions") == 0) {
		r = json_object_new_object();
		json_object_object_add(r, "sessions", session_describe());
		return r;
	}
	if (strcmp(name, "close") == 0 && json_object_object_get_ex(req, "session", &id)) {
		struct session *s = session_get(json_object_get_string(id));
		r = json_object_new_object();
		if (s == NULL) {
			json_object_object_add(r, "error",
					       json_object_new_string("session not found"));
			return r;
		}
		log_info("session %.8s closed by the operator", s->id);
		session_close(s);
		session_put(s);
		json_object_object_add(r, "closed", json_object_new_boolean(1));
		return r;
	}
bad:
	r = json_object_new_object();
	json_object_object_add(r, "error", json_object_new_string(
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
 * Nonzero if the peer on `fd` descends from this daemon: a kernel, or
 * something a kernel started, sharing the daemon's identity by default.
 * Those may not steer the daemon. (A kernel process that detaches itself
 * escapes this check; only kernel_uid_range keeps such code out for good.)
 */
static int
peer_is_ours(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return 1;
	for (pid_t pid = cred.pid; pid > 1;) {
		char path[64], line[512];
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		FILE *f = fopen(path, "re");
		if (f == NULL)
			return 0;
		char *ok = fgets(line, sizeof(line), f);
		fclose(f);
		/* Field 4, after the parenthesized name, is the parent's pid. */
		char *paren = ok ? strrchr(line, ')') : NULL;
		int ppid;
		if (paren == NULL || sscanf(paren + 2, "%*c %d", &ppid) != 1)
			return 0;
		if (ppid == getpid())
			return 1;
		pid = ppid;
	}
	return 0;
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
	if (peer_is_ours(fd)) {
		log_warnx("control socket: refused a process started by this daemon");
		answer = json_object_new_object();
		json_object_object_add(answer, "error",
				       json_object_new_string("not from a kernel"));
	} else if (read_line(fd, &line) == 0 && (req = json_tokener_parse(line.data)) != NULL) {
		pool_lock();
		answer = control_run(req);
		pool_unlock();
		json_object_put(req);
	} else {
		answer = json_object_new_object();
		json_object_object_add(answer, "error",
				       json_object_new_string("expected one line of JSON"));
	}
	const char *text = json_object_to_json_string_ext(answer, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (write(fd, text, strlen(text)) == -1 || write(fd, "\n", 1) == -1)
		log_warn("write to a control client");
	json_object_put(answer);
	buf_free(&line);
	close(fd);
}
