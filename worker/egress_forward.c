/* egress_forward.c - see egress_forward.h. */
#include "autoconf.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "egress_forward.h"
#include "netmode.h"

/* Connections relayed at once; the proxy bounds a session's far lower by default. */
#define FWD_CONNS 64
#define FWD_BUF 16384
/* The listening socket, moved here in the forwarder. */
#define FWD_LFD 3

/* One direction: read from one end, not yet written to the other. */
struct half {
	char buf[FWD_BUF];
	size_t len, off;
	int eof; /* 1: the reader's end said EOF; 2: passed on as SHUT_WR */
};

struct fconn {
	int c, u; /* the kernel's TCP connection, the proxy's; c == -1: free */
	struct half h[2]; /* h[0]: c -> u, h[1]: u -> c */
};

/* Zero pages until used: the worker's copy costs nothing. */
static struct fconn C[FWD_CONNS];

int
egress_forward_listen(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(NET_EGRESS_PORT),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd == -1)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) == -1 || listen(fd, 64) == -1) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

static void
fconn_close(struct fconn *k)
{
	close(k->c);
	close(k->u);
	k->c = k->u = -1;
}

/* Move what h can from `from` to `to`; -1 when the stream failed. */
static int
half_move(struct half *h, int from, int to)
{
	if (h->len == 0 && h->eof == 0) {
		ssize_t n = read(from, h->buf, sizeof(h->buf));
		if (n > 0)
			h->len = (size_t)n, h->off = 0;
		else if (n == 0)
			h->eof = 1;
		else if (errno != EAGAIN && errno != EINTR)
			return -1;
	}
	if (h->off < h->len) {
		ssize_t n = send(to, h->buf + h->off, h->len - h->off, MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (n > 0 && (h->off += (size_t)n) == h->len)
			h->len = h->off = 0;
	}
	if (h->eof == 1 && h->len == 0) {
		shutdown(to, SHUT_WR);
		h->eof = 2;
	}
	return 0;
}

static short
wants(const struct half *in, const struct half *out)
{
	return (short)((in->len == 0 && in->eof == 0 ? POLLIN : 0) |
		       (out->off < out->len ? POLLOUT : 0));
}

/* A new connection of the kernel's, joined to a new one to the proxy. */
static void
take(const char *name)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct fconn *k = NULL;
	int c = accept4(FWD_LFD, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (c == -1)
		return;
	for (int i = 0; i < FWD_CONNS && k == NULL; i++)
		if (C[i].c == -1)
			k = &C[i];
	/* Relative to our cwd, the socket's directory: its path is hidden here. */
	memcpy(sun.sun_path, name, strlen(name));
	int u = k ? socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0) : -1;
	if (u == -1 || connect(u, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    fcntl(u, F_SETFL, O_NONBLOCK) == -1) {
		/* The client sees a reset: no proxy, or too many connections. */
		if (u != -1)
			close(u);
		close(c);
		return;
	}
	memset(k->h, 0, sizeof(k->h));
	k->c = c;
	k->u = u;
}

static void __attribute__((noreturn))
serve(const char *name)
{
	static struct pollfd pfd[1 + 2 * FWD_CONNS];

	for (int i = 0; i < FWD_CONNS; i++)
		C[i].c = C[i].u = -1;
	for (;;) {
		int free_slot = 0;
		for (int i = 0; i < FWD_CONNS; i++) {
			struct fconn *k = &C[i];
			free_slot |= k->c == -1;
			pfd[1 + 2 * i] = (struct pollfd){k->c, wants(&k->h[0], &k->h[1]), 0};
			pfd[2 + 2 * i] = (struct pollfd){k->u, wants(&k->h[1], &k->h[0]), 0};
		}
		/* With no free slot, new clients wait in the backlog. */
		pfd[0] = (struct pollfd){free_slot ? FWD_LFD : -1, POLLIN, 0};
		if (poll(pfd, 1 + 2 * FWD_CONNS, -1) == -1) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (pfd[0].revents)
			take(name);
		for (int i = 0; i < FWD_CONNS; i++) {
			struct fconn *k = &C[i];
			if (k->c == -1 || (pfd[1 + 2 * i].revents | pfd[2 + 2 * i].revents) == 0)
				continue;
			if (half_move(&k->h[0], k->c, k->u) == -1 ||
			    half_move(&k->h[1], k->u, k->c) == -1 ||
			    (k->h[0].eof == 2 && k->h[1].eof == 2))
				fconn_close(k);
		}
	}
}

/*
 * We are root of the kernel's outer user namespace, with every capability
 * there: relaying bytes needs none. Drop them for good (no root fix-ups on
 * an exec, no new privileges) before touching a byte the kernel sent.
 */
static int
drop_privileges(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {{0}};
	int bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
		   SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED;

	for (int c = 0; c <= CAP_LAST_CAP; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == -1 && errno != EINVAL)
			return -1;
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) == -1 ||
	    syscall(SYS_capset, &hdr, none) == -1)
		return -1;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

int
egress_forward_start(int lfd, int dir, const char *name)
{
	pid_t parent = getpid();
	pid_t pid = fork();

	if (pid != 0)
		return pid == -1 ? -1 : 0;
	/* The kernel's signals reach its whole process group, us with it: not ours. */
	struct sigaction sa = {.sa_handler = SIG_IGN};
	static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE};
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		sigaction(ignored[i], &sa, NULL);
	/* The waiter's end is the kernel's: ours follows. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent ||
	    strlen(name) >= sizeof(((struct sockaddr_un *)0)->sun_path) || fchdir(dir) == -1 ||
	    (lfd != FWD_LFD && dup2(lfd, FWD_LFD) == -1) || drop_privileges() == -1)
		_exit(1);
	/* Named only once confined: a process of that name never holds a capability. */
	prctl(PR_SET_NAME, "codeexec-egress", 0, 0, 0);
	/* Nothing of the kernel's: not its output pipe, whose end the worker waits for. */
	close_range(0, FWD_LFD - 1, 0);
	close_range(FWD_LFD + 1, ~0U, 0);
	serve(name);
}
