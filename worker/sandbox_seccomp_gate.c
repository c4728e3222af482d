/*
 * sandbox_seccomp_gate.c - kernel_network_mode seccomp for every kernel
 * but the daemon's own ipykernel (IRkernel, xeus-python, octave_kernel,
 * any kernelspec): seccomp_filter.c's rules installed in the kernel's
 * process between fork and exec, so that they hold from its first
 * instruction on, survive the exec and bind every process it starts
 * (R's system() helpers, Octave's gnuplot).
 *
 * Why a gate: such a kernel binds and listens on its ZeroMQ endpoints
 * (transport ipc, AF_UNIX, in its runtime directory) while it starts, and
 * nothing but its own code could install a filter after that; xeus-python
 * also looks for a free TCP port on 127.0.0.1 for its debugger, binding
 * and unbinding a ZeroMQ socket, and aborts if it cannot make one. So the
 * child installs two filters: first the gate, which sends socket() of
 * another family than AF_UNIX, bind and listen to the worker
 * (SECCOMP_RET_USER_NOTIF, the listener passed back over a socket pair),
 * then the rest of the table, which refuses at once connect, addressed
 * sends, io_uring, namespaces, ptrace and the rest. While the kernel
 * starts the gate thread lets bind, listen and IP sockets through (an IP
 * socket can still connect nowhere and send to no address), gives netlink
 * EINVAL (getifaddrs() then fails with it, which libzmq takes for "no such
 * interface" where any other errno aborts it) and refuses every other
 * family with EPERM; the family is a register, read without a race. Once
 * the handshake is done (lifecycle.c) the worker closes the listener, and
 * from then on every gated call of the kernel and its children fails with
 * ENOSYS, for good: the rules deny them a listener of their own (EBUSY is
 * not enough: a closed listener leaves the place free). What the kernel's
 * start-up bound stays bound; with a uid of its own, an IP socket left
 * then off loopback fails its start (sandbox_seccomp_gate_check): on
 * loopback is where ipykernel-based kernels (octave_kernel) keep IOPub's
 * pipe for forked children.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/seccomp.h>
#include <seccomp.h>

#include "fdpass.h"
#include "log.h"
#include "sandbox.h"
#include "seccomp_filter.h"
#include "xmalloc.h"

/* The worker's side of one kernel's gate, while the kernel starts. */
struct sandbox_gate {
	int listener;	/* the gate filter's notification descriptor */
	int stop[2];	/* a pipe: written to end the thread */
	pthread_t thread;
};

int
sandbox_seccomp_gate_prepare(struct sandbox_launch *ln, char *why, size_t why_len)
{
	char text[ERR_LEN];

	if (seccomp_filter_export(1, &ln->sc_gate, text, sizeof(text)) == -1 ||
	    seccomp_filter_export(0, &ln->sc_deny, text, sizeof(text)) == -1)
		return err_set(why, why_len, "%s", text);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ln->sc_sock) == -1)
		return err_set(why, why_len, "seccomp: socketpair for the gate: %s",
			       strerror(errno));
	return 0;
}

int
sandbox_seccomp_gate_child(const struct sandbox_launch *ln)
{
	struct msghdr mh = {0};
	union fdpass_one ctl;
	char byte = 'g';
	struct iovec iov = {&byte, 1};
	int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			      SECCOMP_FILTER_FLAG_NEW_LISTENER, &ln->sc_gate);

	if (fd == -1)
		return -1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	fdpass_attach(&mh, &ctl, fd);
	/* Before the second filter, which refuses sendmsg. */
	ssize_t n = sendmsg(ln->sc_sock[1], &mh, MSG_NOSIGNAL);
	int err = errno;
	close(fd); /* the kernel must never hold its own gate */
	if (n != 1) {
		errno = n == -1 ? err : EIO;
		return -1;
	}
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &ln->sc_deny) == 0 ? 0 : -1;
}

/* The answer to one gated call of the starting kernel (see the top). */
static void
gate_answer(const struct seccomp_notif *req, struct seccomp_notif_resp *resp)
{
	int family = (int)req->data.args[0];

	memset(resp, 0, sizeof(*resp));
	resp->id = req->id;
	if (req->data.nr != SCMP_SYS(socket) || family == AF_INET || family == AF_INET6)
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	else
		resp->error = family == AF_NETLINK ? -EINVAL : -EPERM;
}

/* The gate thread: answers the starting kernel's gated calls until stopped. */
static void *
gate_run(void *arg)
{
	struct sandbox_gate *g = arg;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;

	if (seccomp_notify_alloc(&req, &resp) != 0)
		return NULL; /* the kernel's bind fails with ENOSYS once we close */
	for (;;) {
		struct pollfd p[2] = {{g->listener, POLLIN, 0}, {g->stop[0], POLLIN, 0}};
		if (poll(p, 2, -1) == -1 && errno != EINTR)
			break;
		if (p[1].revents || (p[0].revents & (POLLHUP | POLLERR | POLLNVAL)))
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		memset(req, 0, sizeof(*req));
		if (seccomp_notify_receive(g->listener, req) != 0)
			continue; /* the caller was interrupted or died */
		gate_answer(req, resp);
		(void)seccomp_notify_respond(g->listener, resp);
	}
	seccomp_notify_free(req, resp);
	return NULL;
}

struct sandbox_gate *
sandbox_seccomp_gate_open(struct sandbox_launch *ln, char *why, size_t why_len)
{
	struct sandbox_gate *g = xcalloc(1, sizeof(*g));
	struct msghdr mh = {0};
	union fdpass_one ctl;
	char byte;
	struct iovec iov = {&byte, 1};

	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	/* The child sent it before its exec, which kernel_spawn() waited for. */
	ssize_t n = recvmsg(ln->sc_sock[0], &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n != 1 || fdpass_take(&mh, &g->listener) != 1) {
		err_set(why, why_len, "seccomp: the kernel did not pass its gate's listener");
		free(g);
		return NULL;
	}
	if (pipe2(g->stop, O_CLOEXEC) == -1) {
		err_set(why, why_len, "seccomp: pipe for the gate: %s", strerror(errno));
		goto fail;
	}
	/* The thread takes no signal: the loop's poll must see them (main.c). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&g->thread, NULL, gate_run, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		err_set(why, why_len, "seccomp: cannot start the gate thread: %s", strerror(rc));
		close(g->stop[0]);
		close(g->stop[1]);
		goto fail;
	}
	return g;
fail:
	close(g->listener);
	free(g);
	return NULL;
}

void
sandbox_seccomp_gate_close(struct sandbox_gate **gp)
{
	struct sandbox_gate *g = *gp;
	char byte = 'x';

	if (g == NULL)
		return;
	if (write(g->stop[1], &byte, 1) != 1) {
		/* The thread goes on with g: leave it be rather than free it under it. */
		log_warn("seccomp: cannot stop the gate thread");
		*gp = NULL;
		return;
	}
	pthread_join(g->thread, NULL);
	close(g->stop[0]);
	close(g->stop[1]);
	/* From now on the kernel's bind and listen fail with ENOSYS. */
	close(g->listener);
	free(g);
	*gp = NULL;
}

/*
 * Whether a /proc/net address ("0100007F:1F90", in the kernel's byte order)
 * is on loopback: 127/8, ::1, or ::ffff:127/104.
 */
static int
loopback(const char *addr)
{
	size_t n = strcspn(addr, ":");

	if (n == 8)
		return strncmp(addr + 6, "7F", 2) == 0;
	if (n != 32)
		return 0;
	return strncmp(addr, "00000000000000000000000001000000", 32) == 0 ||
	       (strncmp(addr, "0000000000000000FFFF0000", 24) == 0 &&
		strncmp(addr + 30, "7F", 2) == 0);
}

/* 0 if /proc/PID/net/<table> lists no socket of uid off loopback; else -1 with why. */
static int
no_socket_of(pid_t pid, const char *table, uid_t uid, char *why, size_t why_len)
{
	char path[64], line[512], local[64];
	unsigned long owner;
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, table);
	if ((f = fopen(path, "re")) == NULL)
		return err_set(why, why_len, "seccomp: cannot read %s: %s", path, strerror(errno));
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, " %*s %63s %*s %*s %*s %*s %*s %lu", local, &owner) == 2 &&
		    owner == (unsigned long)uid && !loopback(local))
			rc = err_set(why, why_len,
				     "seccomp: the kernel kept an IP socket off loopback from its start-up (%s %s)",
				     table, local);
	fclose(f);
	return rc;
}

int
sandbox_seccomp_gate_check(const struct sandbox *sb, pid_t pid, char *why, size_t why_len)
{
	static const char *const tables[] = {"tcp", "tcp6", "udp", "udp6", "raw", "raw6"};

	if (!sb->has_id)
		return 0;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (no_socket_of(pid, tables[i], sb->uid, why, why_len) == -1)
			return -1;
	return 0;
}
