/* relay.c - see relay.h. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"
#include "relay.h"

/* Connections relayed at once; a client beyond waits in the backlog. */
#define MAX_PAIRS 128
#define BUF_LEN 16384

/* One direction of a connection: bytes read from `from` not yet written to `to`. */
struct half {
	char buf[BUF_LEN];
	size_t len, off;
	int eof; /* `from` said EOF; `to` gets SHUT_WR once the buffer is out */
};

struct pair {
	int fd[2];	  /* [0] the client (Unix), [1] the sidecar (TCP); -1: free */
	struct half h[2]; /* h[0]: client -> sidecar, h[1]: sidecar -> client */
};

static struct pair pairs[MAX_PAIRS];
/* Connections to the broker (RELAY_BROKER_SUFFIX); -1: free. */
#define MAX_BROKERS 64
static int brokers[MAX_BROKERS];
static struct sockaddr_storage target;
static socklen_t target_len;

static int
parse_target(const char *host, const char *port)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)&target;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&target;
	int p = atoi(port);

	if (p <= 0 || p > 65535)
		return -1;
	memset(&target, 0, sizeof(target));
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)p);
		target_len = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)p);
		target_len = sizeof(*in6);
		return 0;
	}
	return -1;
}

/* Listen on `path` with file mode `mode`, replacing a socket left there. */
static int
listen_at(const char *path, mode_t mode)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path))
		fatalx("relay: socket path %s is too long", path);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1)
		fatal("relay: socket");
	/* Made with the mode it keeps: no moment when others could connect. */
	mode_t old = umask(0777 & ~mode);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		fatal("relay: bind %s", path);
	umask(old);
	if (chmod(path, mode) == -1)
		fatal("relay: chmod %s", path);
	if (listen(fd, 64) == -1)
		fatal("relay: listen %s", path);
	return fd;
}

static void
pair_close(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->fd[i] != -1)
			close(p->fd[i]);
		p->fd[i] = -1;
		p->h[i].len = p->h[i].off = 0;
		p->h[i].eof = 0;
	}
}

/* Relay client `c` (owned) to a new connection to the sidecar, or close it. 0 or -1. */
static int
relay_client(int c, const char *name)
{
	struct pair *p = NULL;

	for (int i = 0; i < MAX_PAIRS && p == NULL; i++)
		if (pairs[i].fd[0] == -1)
			p = &pairs[i];
	int s = socket(target.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* Blocking: the sidecar is on this host, and answers or refuses at once. */
	if (p == NULL || s == -1 || connect(s, (struct sockaddr *)&target, target_len) == -1) {
		if (p != NULL)
			log_warn("relay %s: connect to the sidecar", name);
		if (s != -1)
			close(s);
		close(c);
		return -1;
	}
	fcntl(s, F_SETFL, O_NONBLOCK);
	p->fd[0] = c;
	p->fd[1] = s;
	return 0;
}

/* A new client of the socket: relay it. */
static void
take(int lfd, const char *name)
{
	int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (c != -1)
		relay_client(c, name);
}

/* A new client of the broker: kept until it hangs up. */
static void
take_broker(int bfd)
{
	int c = accept4(bfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (c == -1)
		return;
	for (int i = 0; i < MAX_BROKERS; i++)
		if (brokers[i] == -1) {
			brokers[i] = c;
			return;
		}
	close(c);
}

/* Send one byte on broker client b, carrying fd (-1: none, a refusal). */
static int
send_fd(int b, int fd)
{
	char byte = fd == -1 ? 'n' : 'c';
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd != -1) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.space;
		mh.msg_controllen = sizeof(ctl.space);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	return sendmsg(b, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) == 1 ? 0 : -1;
}

/*
 * Each byte broker client `i` sent asks for a connection: a socket pair,
 * one end relayed to a new connection to the sidecar, the other sent back.
 */
static void
serve_broker(int i, const char *name)
{
	char asks[16];
	ssize_t n = read(brokers[i], asks, sizeof(asks));

	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
		close(brokers[i]);
		brokers[i] = -1;
		return;
	}
	for (ssize_t k = 0; k < n; k++) {
		int sp[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1) {
			send_fd(brokers[i], -1);
			continue;
		}
		fcntl(sp[0], F_SETFL, O_NONBLOCK);
		int rc = relay_client(sp[0], name);
		if (send_fd(brokers[i], rc == 0 ? sp[1] : -1) == -1)
			log_warn("relay %s: answer a broker client", name);
		close(sp[1]);
	}
}

/* Move what can be moved of half `d` of p; -1 when the pair is done. */
static int
pump(struct pair *p, int d)
{
	struct half *h = &p->h[d];
	int from = p->fd[d], to = p->fd[1 - d];

	if (h->len == 0 && !h->eof) {
		ssize_t n = read(from, h->buf, sizeof(h->buf));
		if (n == 0)
			h->eof = 1;
		else if (n > 0)
			h->len = (size_t)n, h->off = 0;
		else if (errno != EAGAIN && errno != EINTR)
			return -1;
	}
	while (h->off < h->len) {
		ssize_t n = send(to, h->buf + h->off, h->len - h->off, MSG_NOSIGNAL);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n == -1)
			return -1;
		h->off += (size_t)n;
	}
	h->len = h->off = 0;
	if (h->eof == 1) {
		shutdown(to, SHUT_WR);
		h->eof = 2;
	}
	return 0;
}

int
relay_main(int argc, char *argv[])
{
	struct pollfd pfd[2 + MAX_BROKERS + 2 * MAX_PAIRS];

	if (argc != 8)
		return 2;
	const char *name = argv[2], *path = argv[3];
	log_init("codeexecd-relay", atoi(argv[7]), LOG_DAEMON);
	/* Exec made us dumpable: no kernel of our uid may trace or write into us. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		fatal("relay %s: prctl PR_SET_DUMPABLE", name);
	if (parse_target(argv[4], argv[5]) == -1)
		fatalx("relay %s: bad address %s port %s", name, argv[4], argv[5]);
	for (int i = 0; i < MAX_PAIRS; i++)
		pairs[i].fd[0] = pairs[i].fd[1] = -1;
	for (int i = 0; i < MAX_BROKERS; i++)
		brokers[i] = -1;
	mode_t mode = (mode_t)strtol(argv[6], NULL, 8);
	int lfd = listen_at(path, mode);
	char bpath[sizeof(((struct sockaddr_un *)0)->sun_path) + 8];
	snprintf(bpath, sizeof(bpath), "%s%s", path, RELAY_BROKER_SUFFIX);
	int bfd = listen_at(bpath, mode);
	log_info("relay %s: %s (and its broker) to %s port %s", name, path, argv[4], argv[5]);
	for (;;) {
		int n = 2 + MAX_BROKERS;
		pfd[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
		pfd[1] = (struct pollfd){.fd = bfd, .events = POLLIN};
		for (int i = 0; i < MAX_BROKERS; i++)
			pfd[2 + i] = (struct pollfd){.fd = brokers[i], .events = POLLIN};
		for (int i = 0; i < MAX_PAIRS; i++)
			for (int d = 0; d < 2; d++) {
				struct pair *p = &pairs[i];
				/* Read into an empty buffer; write out the other's. */
				short ev = (p->h[d].len == 0 && !p->h[d].eof ? POLLIN : 0) |
					   (p->h[1 - d].len > p->h[1 - d].off ? POLLOUT : 0);
				pfd[n++] = (struct pollfd){.fd = p->fd[d], .events = ev};
			}
		if (poll(pfd, (nfds_t)n, -1) == -1 && errno != EINTR)
			fatal("relay %s: poll", name);
		if (pfd[0].revents & POLLIN)
			take(lfd, name);
		if (pfd[1].revents & POLLIN)
			take_broker(bfd);
		for (int i = 0; i < MAX_BROKERS; i++)
			if (brokers[i] != -1 && pfd[2 + i].revents)
				serve_broker(i, name);
		for (int i = 0; i < MAX_PAIRS; i++) {
			struct pair *p = &pairs[i];
			if (p->fd[0] == -1)
				continue;
			if (pump(p, 0) == -1 || pump(p, 1) == -1 ||
			    (p->h[0].eof > 1 && p->h[1].eof > 1))
				pair_close(p);
		}
	}
}
