/*
 * control.c - the client side of the daemon's control socket.
 *
 * The protocol is one line of JSON each way (common/control_proto.h): we
 * send a request naming our protocol version, the daemon answers one line
 * and closes; a daemon of another version is refused. The socket is in
 * runtime_dir/control, a
 * directory of root's (or the daemon's user's) that only they and
 * control_group may enter; the daemon then checks the caller's uid and
 * answers {"error": ...} to anyone else.
 */
#include "autoconf.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "control_proto.h"
#include "ctl.h"
#include "log.h"
#include "xmalloc.h"

/* A daemon that takes longer than this to answer is stuck; say so. */
#define CONTROL_TIMEOUT_MS 30000
/* A sessions list is a few hundred bytes per session; this is plenty. */
#define CONTROL_MAX_REPLY (16 * 1024 * 1024)

/* Connect to `path`; returns the socket or -1 (logged). */
static int
control_connect(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_warnx("control socket %s: path too long", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		log_warn("socket for %s", path);
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		int saved = errno;
		close(fd);
		errno = saved;
		if (errno == ENOENT || errno == ECONNREFUSED)
			log_warn("control socket %s (is codeexecd running?)", path);
		else
			log_warn("control socket %s", path);
		return -1;
	}
	return fd;
}

/*
 * Write all of `data`; returns 0 or -1 (logged). EPIPE is not logged: a
 * daemon that refuses a caller answers and closes without reading, and that
 * answer is still there for control_read.
 */
static int
control_write(int fd, const char *path, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			if (errno != EPIPE)
				log_warn("write to control socket %s", path);
			return -1;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read until the daemon closes or sends a newline; returns 0 or -1 (logged). */
static int
control_read(int fd, const char *path, struct buf *reply)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	char chunk[4096];

	for (;;) {
		int r = poll(&pfd, 1, CONTROL_TIMEOUT_MS);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			log_warn("poll on control socket %s", path);
			return -1;
		}
		if (r == 0) {
			log_warnx("control socket %s: no answer in %d s", path,
				  CONTROL_TIMEOUT_MS / 1000);
			return -1;
		}
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			log_warn("read from control socket %s", path);
			return -1;
		}
		if (n == 0 || memchr(chunk, '\n', (size_t)n) != NULL) {
			buf_add(reply, chunk, (size_t)n);
			return 0;
		}
		buf_add(reply, chunk, (size_t)n);
		if (reply->len > CONTROL_MAX_REPLY) {
			log_warnx("control socket %s: answer longer than %d bytes", path,
				  CONTROL_MAX_REPLY);
			return -1;
		}
	}
}

char *
control_exchange(const char *path, const char *line)
{
	struct buf out, reply;
	int fd;

	if ((fd = control_connect(path)) == -1)
		return NULL;
	buf_init(&out);
	buf_init(&reply);
	buf_printf(&out, "%s\n", line);
	if ((control_write(fd, path, out.data, out.len) == -1 && errno != EPIPE) ||
	    control_read(fd, path, &reply) == -1) {
		close(fd);
		buf_free(&out);
		buf_free(&reply);
		return NULL;
	}
	close(fd);
	buf_free(&out);
	/* One line: drop the newline and anything a confused daemon sent after it. */
	char *nl = memchr(reply.data, '\n', reply.len);
	if (nl)
		*nl = '\0';
	return buf_release(&reply);
}

/* Parse the daemon's answer; NULL (logged) unless it is a JSON object. */
static struct json_object *
control_parse(const char *path, const char *line)
{
	struct json_object *o = json_tokener_parse(line);

	if (o == NULL || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		if (line[0] == '\0')
			log_warnx("control socket %s: the daemon closed without answering", path);
		else
			log_warnx("control socket %s: the answer is not a JSON object: %.80s", path,
				  line);
		return NULL;
	}
	return o;
}

/*
 * Whether `reply` (borrowed) comes from a daemon of another control
 * protocol version: it names one that is not ours. Said (logged) if so.
 */
static int
control_other_version(const char *path, struct json_object *reply)
{
	struct json_object *v;

	if (!json_object_object_get_ex(reply, CONTROL_KEY_PROTOCOL, &v) ||
	    (json_object_is_type(v, json_type_int) &&
	     json_object_get_int64(v) == CONTROL_PROTO_VERSION))
		return 0;
	log_warnx("control socket %s: the daemon speaks control protocol %.20s, this codeexecctl "
		  "%d: use the codeexecctl of the daemon's release", path,
		  json_object_to_json_string(v), CONTROL_PROTO_VERSION);
	return 1;
}

int
ctl_control(struct ctl *c, struct json_object *request, struct json_object **reply)
{
	const char *path = ctl_socket_path(c);
	struct json_object *err;
	char *line;

	*reply = NULL;
	if (path == NULL)
		return CTL_USAGE;
	json_object_object_add(request, CONTROL_KEY_PROTOCOL,
			       json_object_new_int(CONTROL_PROTO_VERSION));
	line = control_exchange(path,
				json_object_to_json_string_ext(request, JSON_C_TO_STRING_PLAIN));
	if (line == NULL)
		return CTL_USAGE;
	*reply = control_parse(path, line);
	if (*reply && control_other_version(path, *reply)) {
		json_object_put(*reply);
		*reply = NULL;
	}
	if (*reply && c->json)
		printf("%s\n", line);
	free(line);
	if (*reply == NULL)
		return CTL_USAGE;
	if (json_object_object_get_ex(*reply, CONTROL_KEY_ERROR, &err)) {
		const char *session = ctl_str(request, CONTROL_KEY_SESSION, NULL);
		if (c->json)
			return CTL_FAILED;
		if (session)
			log_warnx("%s %s: %s", ctl_str(request, CONTROL_KEY_CMD, "?"), session,
				  json_object_get_string(err));
		else
			log_warnx("%s: %s", ctl_str(request, CONTROL_KEY_CMD, "?"),
				  json_object_get_string(err));
		return CTL_FAILED;
	}
	return CTL_OK;
}
