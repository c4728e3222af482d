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

#include "err.h"
#include "log.h"
#include "pump.h"
#include "relay.h"
#include "unix_listen.h"

/* Connections relayed at once; a client beyond waits in the backlog. */
#define MAX_PAIRS 128

struct pair {
	int fd[2];	  /* [0] the client (Unix), [1] the sidecar (TCP); -1: free */
	struct pump h[2]; /* h[0]: client -> sidecar, h[1]: sidecar -> client */
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

/* Listen on `path` with file mode `mode`, or die. */
static int
listen_at(const char *path, mode_t mode)
{
	char why[ERR_LEN];
	int fd = unix_listen_at(path, mode, why, sizeof(why));

	if (fd == -1)
		fatalx("relay: %s", why);
	return fd;
}

static void
pair_close(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->fd[i] != -1)
			close(p->fd[i]);
		p->fd[i] = -1;
		pump_reset(&p->h[i]);
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
				short ev = pump_wants_in(&p->h[d]) | pump_wants_out(&p->h[1 - d]);
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
			if (pump_move(&p->h[0], p->fd[0], p->fd[1]) == -1 ||
			    pump_move(&p->h[1], p->fd[1], p->fd[0]) == -1 ||
			    (p->h[0].eof > 1 && p->h[1].eof > 1))
				pair_close(p);
		}
	}
}
