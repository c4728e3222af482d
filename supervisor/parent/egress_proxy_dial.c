/*
 * egress_proxy_dial.c - resolving an allowed name and connecting to it
 * (egress_proxy_int.h): the hosts file, else getaddrinfo; each address
 * checked by egress_check_addr before the proxy connects to it.
 */
#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "egress_proxy_int.h"
#include "err.h"

/* Seconds one connect may take: the proxy serves its clients in one loop. */
#define CONNECT_TIMEOUT_S 5

/* The addresses of `host`: an IP literal's own, the hosts file's, else DNS's. */
static size_t
resolve(const char *host, struct egress_addr *out, char *why, size_t why_len)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	size_t n = 0;
	int rc;

	if (egress_ip_parse(host, out[0].a) == 0)
		return 1;
	if ((n = egress_hosts_lookup(host, out, EGRESS_ADDRS_MAX)) > 0)
		return n;
	if ((rc = getaddrinfo(host, NULL, &hints, &res)) != 0) {
		err_set(why, why_len, "cannot resolve %s: %s", host, gai_strerror(rc));
		return 0;
	}
	for (struct addrinfo *ai = res; ai != NULL && n < EGRESS_ADDRS_MAX; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET) {
			const struct sockaddr_in *in = (const void *)ai->ai_addr;
			char text[INET_ADDRSTRLEN];
			inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
			egress_ip_parse(text, out[n++].a);
		} else if (ai->ai_family == AF_INET6) {
			const struct sockaddr_in6 *in6 = (const void *)ai->ai_addr;
			memcpy(out[n++].a, &in6->sin6_addr, 16);
		}
	}
	freeaddrinfo(res);
	if (n == 0)
		err_set(why, why_len, "%s has no IPv4 or IPv6 address", host);
	return n;
}

/* Connect to a:port; the descriptor (non-blocking), or -1 with errno. */
static int
connect_to(const struct egress_addr *a, int port)
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	struct sockaddr_storage ss;
	socklen_t len;
	struct timeval tv = {.tv_sec = CONNECT_TIMEOUT_S};

	memset(&ss, 0, sizeof(ss));
	if (memcmp(a->a, mapped, sizeof(mapped)) == 0) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		memcpy(&in->sin_addr, a->a + 12, 4);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		memcpy(&in6->sin6_addr, a->a, 16);
		len = sizeof(*in6);
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	/* On Linux a send timeout bounds a blocking connect. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&ss, len) == -1) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	tv.tv_sec = 0;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

int
egress_dial(const struct egress_rules *rules, const char *host, int port,
	    struct egress_verdict *v, char *why, size_t why_len)
{
	struct egress_addr addrs[EGRESS_ADDRS_MAX];
	struct egress_verdict first_refusal = {.allowed = 1};
	int saved = 0;

	v->allowed = 1;
	size_t n = resolve(host, addrs, why, why_len);
	for (size_t i = 0; i < n; i++) {
		struct egress_verdict av;
		egress_check_addr(rules, addrs[i].a, 16, &av);
		if (!av.allowed) {
			if (first_refusal.allowed)
				first_refusal = av;
			continue;
		}
		int fd = connect_to(&addrs[i], port);
		if (fd != -1)
			return fd;
		saved = errno;
	}
	if (!first_refusal.allowed) {
		*v = first_refusal;
		return -1;
	}
	if (n > 0)
		err_set(why, why_len, "cannot connect to %s port %d: %s", host, port,
			strerror(saved));
	return -1;
}
