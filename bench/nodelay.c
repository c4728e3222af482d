/*
 * nodelay.c - a diagnostic shim, not part of codeexecd: it sets TCP_NODELAY
 * on every socket the process accepts, to show what the daemon's answers
 * cost without Nagle's algorithm (see "What the results show" in
 * README.md). Only the supervisor is affected: workers and kernels are
 * started with an environment of their own, without LD_PRELOAD.
 *
 *   cc -shared -fPIC -o /tmp/nodelay.so bench/nodelay.c -ldl
 *   CODEEXECD_BENCH_WRAP="env LD_PRELOAD=/tmp/nodelay.so" bench/run.sh -n ...
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <sys/socket.h>

static int
nodelay(int fd)
{
	int one = 1;

	if (fd >= 0)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int
accept(int s, struct sockaddr *addr, socklen_t *len)
{
	static int (*real)(int, struct sockaddr *, socklen_t *);

	if (real == NULL)
		real = (int (*)(int, struct sockaddr *, socklen_t *))dlsym(RTLD_NEXT, "accept");
	return nodelay(real(s, addr, len));
}

int
accept4(int s, struct sockaddr *addr, socklen_t *len, int flags)
{
	static int (*real)(int, struct sockaddr *, socklen_t *, int);

	if (real == NULL)
		real = (int (*)(int, struct sockaddr *, socklen_t *, int))dlsym(RTLD_NEXT, "accept4");
	return nodelay(real(s, addr, len, flags));
}
