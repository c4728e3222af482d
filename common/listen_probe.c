/* listen_probe.c - see listen_probe.h. */
#include "autoconf.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "err.h"
#include "listen_probe.h"

/* Bind one address: 0, or the errno. */
static int
bind_one(const struct addrinfo *a)
{
	int one = 1, e = 0;
	int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);

	if (fd == -1)
		return errno;
	/* As civetweb does: a port left in TIME_WAIT is free to listen on. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, a->ai_addr, a->ai_addrlen) == -1)
		e = errno;
	close(fd);
	return e;
}

int
listen_probe(const char *host, int port, int in_use_ok, char *why, size_t why_len)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *res;
	char service[16];
	int v6 = strchr(host, ':') != NULL;

	snprintf(service, sizeof(service), "%d", port);
	int rc = getaddrinfo(host, service, &hints, &res);
	if (rc != 0)
		return err_set(why, why_len, "cannot listen on %s%s%s:%d: %s", v6 ? "[" : "", host,
			       v6 ? "]" : "", port, gai_strerror(rc));
	int e = 0;
	for (const struct addrinfo *a = res; a != NULL && e == 0; a = a->ai_next)
		e = bind_one(a);
	freeaddrinfo(res);
	if (e == 0 || (e == EADDRINUSE && in_use_ok))
		return 0;
	return err_set(why, why_len, "cannot listen on %s%s%s:%d: %s", v6 ? "[" : "", host,
		       v6 ? "]" : "", port, strerror(e));
}
