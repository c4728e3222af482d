/* egress.c - see egress.h. */
#include "autoconf.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "egress.h"
#include "egress_proxy.h"
#include "err.h"
#include "fsutil.h"
#include "log.h"
#include "secret_file.h"
#include "netmode.h"
#include "sidecar.h"
#include "unix_listen.h"
#include "wstatus.h"
#include "xmalloc.h"

/* How long the parent waits for the proxy's CA. */
#define CA_WAIT_MS 10000
/* A worker's socket, made and kept by us: it outlives a proxy's restart. */
struct esock {
	char *name;
	int fd;
	char *bind; /* "SESSION IDENTITY" of its last bind line, or NULL */
};

static struct {
	const struct config *cfg;
	char *dir;		/* runtime_dir/egress */
	uid_t owner;		/* a socket's owner when the kernels share our user */
	int ctl;		/* our end of the proxy's stdin; -1: no proxy runs */
	pid_t pid;
	int foreground;		/* the proxy logs to stderr, else to syslog */
	double next;		/* monotonic: when to start it again; 0: not due */
	struct esock *open;	/* the workers' sockets, to hand a new proxy again */
	size_t n_open;
} E = {.ctl = -1};

/*
 * Tell the proxy one line, with the session's listening socket when `fd`
 * is not -1; lost if it is gone (it is told again when restarted). The
 * control line is a SOCK_SEQPACKET pair: a line and its descriptor arrive
 * together.
 */
static void
tell(const char *verb, const char *name, const char *rest, int fd)
{
	char line[200];
	int len = snprintf(line, sizeof(line), "%s %s %s\n", verb, name, rest);
	struct iovec iov = {.iov_base = line, .iov_len = (size_t)len};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd != -1) {
		m.msg_control = u.buf;
		m.msg_controllen = sizeof(u.buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	if (E.ctl != -1 && sendmsg(E.ctl, &m, MSG_NOSIGNAL | MSG_DONTWAIT) != len)
		log_warn("egress: tell the proxy %s %s", verb, name);
}

/* The proxy's argv after our executable, as egress_proxy.h lists it. Caller frees. */
static char **
proxy_args(void)
{
	const struct config *c = E.cfg;
	size_t n = 0, max = 10 + c->egress_allow.n + c->egress_deny.n;
	char **v = xcalloc(max, sizeof(*v));

	v[n++] = xstrdup(EGRESS_PROXY_OPTION);
	v[n++] = xstrdup(E.dir);
	v[n++] = xstrdup(c->kernel_uid_first == 0 ? "600" : "666");
	v[n++] = xasprintf("%d", E.foreground);
	v[n++] = xasprintf("%d", c->egress_max_bytes);
	v[n++] = xasprintf("%d", c->egress_max_connections);
	v[n++] = xstrdup(c->egress_hosts_file[0] ? c->egress_hosts_file : "-");
	for (size_t i = 0; i < c->egress_allow.n; i++)
		v[n++] = xasprintf("+%s", c->egress_allow.v[i]);
	for (size_t i = 0; i < c->egress_deny.n; i++)
		v[n++] = xasprintf("-%s", c->egress_deny.v[i]);
	if (c->egress_inject.n > 0)
		v[n++] = xasprintf("ca=%s/ca", E.dir);
	if (c->egress_inject.n > 0 && c->egress_upstream_ca_file[0])
		v[n++] = xasprintf("upstream_ca=%s", c->egress_upstream_ca_file);
	return v;
}

/*
 * Wait for the proxy's "ready": its CA bundle exists, so a kernel started
 * from now on finds the file its SSL_CERT_FILE names (an isolated kernel's
 * namespace binds back only what exists when it starts). 0, or -1 with why.
 */
static int
wait_ca(char *why, size_t why_len)
{
	struct pollfd p = {.fd = E.ctl, .events = POLLIN};
	char line[16];
	int n;

	while ((n = poll(&p, 1, CA_WAIT_MS)) == -1 && errno == EINTR)
		;
	if (n <= 0)
		return err_set(why, why_len, "egress: the proxy made no CA in %d s",
			       CA_WAIT_MS / 1000);
	ssize_t got = recv(E.ctl, line, sizeof(line), MSG_DONTWAIT);
	if (got != 6 || memcmp(line, "ready\n", 6) != 0)
		return err_set(why, why_len, "egress: the proxy could not make its CA (its log says "
			       "why)");
	return 0;
}

/*
 * The injected headers, each "inject HOST HEADER VALUE" with the value
 * the first line of its secret file (the parent's copy, read afresh at
 * each start of the proxy), then "ready": the proxy waits for it before
 * it serves. Only the proxy's stdin carries them. -1 with why if one
 * cannot be told.
 */
static int
tell_injects(char *why, size_t why_len)
{
	const struct config *c = E.cfg;
	char key[600];

	for (size_t i = 0; i < c->egress_inject.n; i++) {
		const struct config_egress_inject *x = config_egress_inject_at(c, i);
		snprintf(key, sizeof(key), "egress.inject %s %s: secret_file", x->host, x->header);
		char *value = secret_file_line(key, x->secret_file, why, why_len);
		if (value == NULL)
			return -1;
		char *line = xasprintf("inject %s %s %s\n", x->host, x->header, value);
		size_t len = strlen(line);
		ssize_t sent = send(E.ctl, line, len, MSG_NOSIGNAL);
		explicit_bzero(line, len);
		explicit_bzero(value, strlen(value));
		free(line);
		free(value);
		if (sent != (ssize_t)len)
			return err_set(why, why_len, "egress: tell the proxy the header of %s: %s",
				       x->host, strerror(errno));
	}
	if (c->egress_inject.n == 0)
		return 0;
	if (send(E.ctl, "ready\n", 6, MSG_NOSIGNAL) != 6)
		return err_set(why, why_len, "egress: tell the proxy ready: %s", strerror(errno));
	return wait_ca(why, why_len);
}

static int
spawn(char *why, size_t why_len)
{
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == -1)
		return err_set(why, why_len, "egress: socketpair: %s", strerror(errno));
	char **args = proxy_args();
	E.pid = sidecar_spawn_self((const char *const *)args, sp[1], why, why_len);
	strv_free(args);
	close(sp[1]);
	if (E.pid == -1) {
		close(sp[0]);
		E.pid = 0;
		return -1;
	}
	E.ctl = sp[0];
	/* A proxy told no secret would intercept for nothing: it ends, and is started again. */
	if (tell_injects(why, why_len) == -1) {
		close(E.ctl);
		E.ctl = -1;
		return -1;
	}
	log_info("egress: proxy %d serves %s%s", (int)E.pid, E.dir,
		 E.cfg->egress_inject.n ? ", intercepting the injected hosts" : "");
	for (size_t i = 0; i < E.n_open; i++) {
		tell("open", E.open[i].name, "-", E.open[i].fd);
		if (E.open[i].bind)
			tell("bind", E.open[i].name, E.open[i].bind, -1);
	}
	return 0;
}

int
egress_start(const struct config *cfg, uid_t uid, int foreground, char *why, size_t why_len)
{
	if (!egress_for_kernels(cfg)) {
		if (cfg->egress_allow.n > 0)
			log_warnx("egress: egress.allow applies to isolated kernels only; with "
				  "kernel_network_mode %s no proxy runs",
				  net_mode_names[cfg->kernel_network_mode]);
		return 0;
	}
	if (uid == (uid_t)-1 && geteuid() == 0)
		return err_set(why, why_len, "the egress proxy never runs as root: set user");
	E.cfg = cfg;
	E.owner = uid != (uid_t)-1 ? uid : geteuid();
	E.foreground = foreground;
	E.dir = xasprintf("%s/egress", cfg->runtime_dir);
	why[0] = '\0';
	/* The proxy's, to make and replace its sockets in; search-only for others. */
	if (fs_mkdir_p(E.dir, 0711, why, why_len) == -1 ||
	    (uid != (uid_t)-1 && chown(E.dir, uid, (gid_t)-1) == -1) || chmod(E.dir, 0711) == -1)
		return why[0] ? -1 : err_set(why, why_len, "%s: %s", E.dir, strerror(errno));
	return spawn(why, why_len);
}

/*
 * Worker `name`'s socket, DIR/NAME.sock: the kernel's uid's (ours when
 * kernels share it), mode 0600, so that no other session's kernel or
 * forwarder can connect to it. The listening descriptor, or -1 logged.
 */
static int
socket_for(const char *name, uid_t uid)
{
	char why[ERR_LEN];
	char *path = xasprintf("%s/%s.sock", E.dir, name);
	uid_t owner = uid != 0 ? uid : E.owner;
	int fd = unix_listen_at(path, 0600, why, sizeof(why));

	if (fd == -1) {
		log_warnx("egress: worker %s: %s", name, why);
	} else if (owner != geteuid() && chown(path, owner, (gid_t)-1) == -1) {
		log_warn("egress: chown %s to uid %d", path, (int)owner);
		unlink(path);
		close(fd);
		fd = -1;
	}
	free(path);
	return fd;
}

void
egress_open(const char *name, uid_t uid)
{
	if (E.cfg == NULL)
		return;
	int fd = socket_for(name, uid);
	if (fd == -1)
		return;
	E.open = xreallocarray(E.open, E.n_open + 1, sizeof(*E.open));
	E.open[E.n_open++] = (struct esock){xstrdup(name), fd, NULL};
	tell("open", name, "-", fd);
}

void
egress_bind(const char *name, const char *session, const char *identity)
{
	for (size_t i = 0; i < E.n_open; i++) {
		if (strcmp(E.open[i].name, name) != 0)
			continue;
		/* The proxy takes words of its own alphabet: others become '_'. */
		char *id = xstrndup(identity, 64);
		for (char *p = id; *p; p++)
			if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.@:",
				    *p))
				*p = '_';
		free(E.open[i].bind);
		E.open[i].bind = xasprintf("%s %s", session, id);
		free(id);
		tell("bind", name, E.open[i].bind, -1);
		return;
	}
}

void
egress_close(const char *name)
{
	for (size_t i = 0; i < E.n_open; i++)
		if (strcmp(E.open[i].name, name) == 0) {
			tell("close", name, "", -1);
			char *path = xasprintf("%s/%s.sock", E.dir, name);
			unlink(path);
			free(path);
			close(E.open[i].fd);
			free(E.open[i].name);
			free(E.open[i].bind);
			E.open[i] = E.open[--E.n_open];
			return;
		}
}

char *
egress_socket_for(const struct config *cfg, const char *name)
{
	if (!egress_for_kernels(cfg))
		return NULL;
	return xasprintf("%s/egress/%s.sock", cfg->runtime_dir, name);
}

int
egress_child_exited(pid_t pid, int status)
{
	if (E.pid == 0 || pid != E.pid)
		return 0;
	char *how = wstatus_text(status);
	log_warnx("egress: the proxy %s; starting it again in 1 s", how);
	free(how);
	close(E.ctl);
	E.ctl = -1;
	E.pid = 0;
	E.next = clock_mono() + 1;
	return 1;
}

void
egress_tick(void)
{
	char why[ERR_LEN];

	if (E.next == 0 || clock_mono() < E.next)
		return;
	E.next = 0;
	if (spawn(why, sizeof(why)) == -1) {
		log_warnx("%s; trying again in 5 s", why);
		E.next = clock_mono() + 5;
	}
}

void
egress_stop(void)
{
	int status;

	E.next = 0;
	if (E.pid == 0)
		return;
	/* Its input closing ends it. */
	close(E.ctl);
	E.ctl = -1;
	kill(-E.pid, SIGTERM);
	while (waitpid(E.pid, &status, 0) == -1 && errno == EINTR)
		;
	E.pid = 0;
}
