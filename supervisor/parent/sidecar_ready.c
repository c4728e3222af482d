/*
 * sidecar_ready.c - whether a sidecar is ready (sidecar_int.h): its
 * address, a free port for it, the GET of its health_path, and the waits
 * for it and its relay at start-up and after a restart.
 */
#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "err.h"
#include "log.h"
#include "relay.h"
#include "sidecar_int.h"
#include "wstatus.h"
#include "xmalloc.h"

/* How long one readiness probe may take once the loop serves the front too. */
#define PROBE_MS_RUNNING 300

/* The address of host:port into ss (host an IP literal); its length. */
static socklen_t
sockaddr_of(const char *host, int port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		return sizeof(*in4);
	}
	inet_pton(AF_INET6, host, &in6->sin6_addr); /* config.c has checked it */
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons((uint16_t)port);
	return sizeof(*in6);
}

/* A free port on `host`: bind port 0 and ask. 0 with *port, or -1 with why. */
int
sidecar_pick_port(const char *host, int *port, char *why, size_t why_len)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(host, 0, &ss);
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd == -1 || bind(fd, (struct sockaddr *)&ss, len) == -1 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) == -1) {
		err_set(why, why_len, "a free port on %s: %s", host, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	close(fd);
	*port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					      : ((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

/* Wait up to `ms` for `events` on fd: 1 ready, 0 not. */
static int
wait_fd(int fd, short events, int ms)
{
	struct pollfd p = {.fd = fd, .events = events};
	int rc;

	while ((rc = poll(&p, 1, ms)) == -1 && errno == EINTR)
		;
	return rc == 1;
}

/* GET health_path; the HTTP status, or -1 if there was no answer within `ms`. */
static int
probe(const struct config_sidecar *sc, int ms)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(sc->host, sc->port, &ss);
	char req[600], resp[64];
	size_t got = 0;
	int status = -1, err = 0;
	socklen_t elen = sizeof(err);
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&ss, len) == -1 &&
	    (errno != EINPROGRESS || !wait_fd(fd, POLLOUT, ms) ||
	     getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) == -1 || err != 0))
		goto out;
	int n = snprintf(req, sizeof(req),
			 "GET %s HTTP/1.0\r\nHost: %s:%d\r\nConnection: close\r\n\r\n",
			 sc->health_path, sc->host, sc->port);
	if (n < 0 || (size_t)n >= sizeof(req) || send(fd, req, (size_t)n, MSG_NOSIGNAL) != n)
		goto out;
	/* The status line, then the rest to the end: a probe closed early would
	 * leave the sidecar a broken pipe (and its log a traceback). */
	for (size_t total = 0; total < 65536 && wait_fd(fd, POLLIN, ms);) {
		char sink[4096];
		ssize_t r = got < sizeof(resp) - 1 ? recv(fd, resp + got, sizeof(resp) - 1 - got, 0)
						   : recv(fd, sink, sizeof(sink), 0);
		if (r <= 0)
			break;
		if (got < sizeof(resp) - 1)
			got += (size_t)r;
		total += (size_t)r;
	}
	int code;
	if (strncmp(resp, "HTTP/1.", 7) == 0 && sscanf(resp + 8, " %3d", &code) == 1)
		status = code;
out:
	close(fd);
	return status;
}

/* Wait (5 s at most) until the relay of `s` listens. 0, or -1 with why. */
int
sidecar_await_relay(struct sidecar *s, char *why, size_t why_len)
{
	double end = clock_mono() + 5;
	struct stat st;
	int status;
	/* The broker's: the relay binds it second. */
	char *broker = xasprintf("%s" RELAY_BROKER_SUFFIX, s->sc->socket_path);

	while (lstat(broker, &st) == -1 || !S_ISSOCK(st.st_mode)) {
		if (waitpid(s->relay, &status, WNOHANG) == s->relay) {
			s->relay = 0;
			free(broker);
			return err_set(why, why_len, "sidecar %s: its relay exited before it "
						     "listened on %s", s->sc->name,
				       s->sc->socket_path);
		}
		if (clock_mono() > end) {
			free(broker);
			return err_set(why, why_len, "sidecar %s: its relay does not listen on %s "
						     "after 5 s", s->sc->name, s->sc->socket_path);
		}
		usleep(20 * 1000);
	}
	free(broker);
	return 0;
}

/* Why `s` is not ready, with its last output, for the start-up error. */
static int
not_ready(struct sidecar *s, const char *what, char *why, size_t why_len)
{
	return err_set(why, why_len, "sidecar %s %s; its last output: %s", s->sc->name, what,
		       s->tail[0] ? s->tail : "(none)");
}

/* Wait until every sidecar answers, one at a time. 0, or -1 with why. */
int
sidecar_await_ready(struct sidecar *s, char *why, size_t why_len)
{
	char what[300];
	int status;

	for (;;) {
		wait_fd(s->out, POLLIN, 100);
		sidecar_drain(s);
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			char *how = wstatus_text(status);
			sidecar_drain(s);
			snprintf(what, sizeof(what), "%s before it was ready", how);
			free(how);
			s->pid = 0;
			return not_ready(s, what, why, why_len);
		}
		int code = probe(s->sc, 500);
		if (code >= 200 && code < 300) {
			sidecar_set_state(s, PRIV_SC_RUNNING);
			log_info("sidecar %s is ready (GET %s answered %d)", s->sc->name,
				 s->sc->health_path, code);
			return 0;
		}
		if (code != -1)
			s->last_http = code;
		if (clock_mono() > s->ready_deadline) {
			if (s->last_http != -1)
				snprintf(what, sizeof(what),
					 "did not answer GET %s with a 2xx within %g s (last answer "
					 "%d)", s->sc->health_path, s->sc->readiness_timeout_s,
					 s->last_http);
			else
				snprintf(what, sizeof(what),
					 "did not answer GET %s within %g s (readiness_timeout_s)",
					 s->sc->health_path, s->sc->readiness_timeout_s);
			sidecar_drain(s);
			return not_ready(s, what, why, why_len);
		}
	}
}

/* A restarted sidecar: ready once it answers, killed (and backed off) at its deadline. */
void
sidecar_check_starting(struct sidecar *s)
{
	int code = probe(s->sc, PROBE_MS_RUNNING);

	if (code >= 200 && code < 300) {
		log_info("sidecar %s is ready again (GET %s answered %d)", s->sc->name,
			 s->sc->health_path, code);
		sidecar_set_state(s, PRIV_SC_RUNNING);
		return;
	}
	if (clock_mono() > s->ready_deadline) {
		log_warnx("sidecar %s did not answer GET %s with a 2xx within %g s; killing it",
			  s->sc->name, s->sc->health_path, s->sc->readiness_timeout_s);
		sidecar_kill_group(s, SIGKILL);
		s->ready_deadline = clock_mono() + 3600; /* once */
	}
}
