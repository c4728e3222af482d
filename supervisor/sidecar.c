/* sidecar.c - see sidecar.h. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "clock.h"
#include "config.h"
#include "err.h"
#include "fsutil.h"
#include "log.h"
#include "relay.h"
#include "sidecar.h"
#include "wstatus.h"
#include "xmalloc.h"

/* Back-off before a restart: doubled from 1 s up to this, reset after a long run. */
#define BACKOFF_MAX_S 60
#define BACKOFF_RESET_S 60
/* How long one readiness probe may take once the loop serves the front too. */
#define PROBE_MS_RUNNING 300
/* Bytes of a sidecar's last output kept for the message when it fails. */
#define TAIL_LEN 600
/* Seconds between reports of the sidecars' memory to the front. */
#define REPORT_S 5

struct sidecar {
	struct config_sidecar *sc; /* borrowed from the configuration */
	const struct config *cfg;
	pid_t pid;		/* leads its own process group; 0: none runs */
	int out;		/* read end of its stdout and stderr; -1: none */
	enum priv_sidecar_run state;
	double started;		/* monotonic */
	time_t started_wall;
	double ready_deadline;	/* monotonic, while STARTING */
	double next_start;	/* monotonic, while BACKOFF */
	int backoff_s;
	unsigned restarts;
	char partial[512];	/* a line not ended yet */
	size_t partial_len;
	char tail[TAIL_LEN];	/* the last lines, for the failure message */
	int last_http;		/* the last probe's status, or -1 */
	struct cgroup *cg;	/* its own group, or NULL */
	int changed;		/* to be reported to the front */
	int reloaded;		/* SIGHUP changed it: its exit starts it again at once */
	int regroup;		/* its limits changed: a new control group at the restart */
	pid_t relay;		/* its Unix socket's relay (socket: true); 0: none runs */
	double relay_next;	/* monotonic: when a relay that exited starts again */
};

static struct {
	struct sidecar *v;
	size_t n;
	uid_t uid;
	gid_t gid;
	const struct cgroup_layout *cgroups;
	int stopping;
	double last_report;
	char *self;		/* our own executable, which is also the relay */
	int foreground;		/* the relay logs to our stderr, else to syslog */
	int relay_mode;		/* the sockets' file mode */
} S;

size_t
sidecars_count(void)
{
	return S.n;
}

/* ---- output ---- */

/* Keep `line` as the newest of the tail, dropping the oldest bytes. */
static void
tail_add(struct sidecar *s, const char *line)
{
	size_t have = strlen(s->tail), add = strlen(line) + 1;

	if (add >= TAIL_LEN) {
		snprintf(s->tail, TAIL_LEN, "%s", line + (add - TAIL_LEN / 2));
		return;
	}
	if (have + add + 1 > TAIL_LEN) {
		const char *cut = s->tail + (have + add + 1 - TAIL_LEN);
		const char *nl = strchr(cut, '\n');
		memmove(s->tail, nl ? nl + 1 : cut, strlen(nl ? nl + 1 : cut) + 1);
		have = strlen(s->tail);
	}
	snprintf(s->tail + have, TAIL_LEN - have, "%s%s", have ? "\n" : "", line);
}

static void
emit_line(struct sidecar *s)
{
	s->partial[s->partial_len] = '\0';
	log_info("sidecar %s: %s", s->sc->name, s->partial);
	tail_add(s, s->partial);
	s->partial_len = 0;
}

/* Log what the sidecar wrote, line by line; at EOF, close the pipe. */
static void
drain(struct sidecar *s)
{
	char buf[4096];
	ssize_t n;

	while (s->out != -1 && (n = read(s->out, buf, sizeof(buf))) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				log_warn("read the output of sidecar %s", s->sc->name);
			if (errno == EAGAIN)
				return;
			break;
		}
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n' || s->partial_len == sizeof(s->partial) - 1)
				emit_line(s);
			if (buf[i] != '\n')
				s->partial[s->partial_len++] = buf[i];
		}
	}
	if (s->partial_len)
		emit_line(s);
	close(s->out);
	s->out = -1;
}

/* ---- addresses and probes ---- */

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
static int
pick_port(const char *host, int *port, char *why, size_t why_len)
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

/* ---- starting ---- */

/* The sidecar's argv and environment, made before fork. */
struct launch {
	char **argv;
	char **env;
};

static char **
add(char **v, size_t *n, char *s)
{
	v = xreallocarray(v, *n + 2, sizeof(*v));
	v[(*n)++] = s;
	v[*n] = NULL;
	return v;
}

static int
env_sets(const struct config_sidecar *sc, const char *name)
{
	for (size_t i = 0; i < sc->nenv; i++)
		if (strcmp(sc->env_keys[i], name) == 0)
			return 1;
	return 0;
}

static void
launch_make(const struct sidecar *s, struct launch *l)
{
	const struct config_sidecar *sc = s->sc;
	size_t na = 0, ne = 0;
	struct passwd *pw = getpwuid(S.uid != (uid_t)-1 ? S.uid : getuid());

	l->argv = NULL;
	l->env = NULL;
	if (sc->use_env_python)
		l->argv = add(l->argv, &na, xasprintf("%s/bin/python", s->cfg->build_dir));
	for (size_t i = 0; i < sc->ncommand; i++)
		l->argv = add(l->argv, &na, xstrdup(sc->command[i]));
	/* A sanitized baseline, as kernels get: nothing of the daemon's own. */
	l->env = add(l->env, &ne,
		     xasprintf("PATH=%s/bin:/usr/local/bin:/usr/bin:/bin", s->cfg->build_dir));
	l->env = add(l->env, &ne,
		     xasprintf("HOME=%s", pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir
										   : "/"));
	if (!env_sets(sc, "LANG"))
		l->env = add(l->env, &ne, xstrdup("LANG=C.UTF-8"));
	/* Its lines reach the log as they are written, not at exit. */
	l->env = add(l->env, &ne, xstrdup("PYTHONUNBUFFERED=1"));
	l->env = add(l->env, &ne, xasprintf("SIDECAR_NAME=%s", sc->name));
	l->env = add(l->env, &ne, xasprintf("SIDECAR_HOST=%s", sc->host));
	l->env = add(l->env, &ne, xasprintf("SIDECAR_PORT=%d", sc->port));
	l->env = add(l->env, &ne, xasprintf("MCP_ASSET_CACHE_DIR=%s", s->cfg->asset_cache_dir));
	for (size_t i = 0; i < sc->nenv; i++)
		l->env = add(l->env, &ne, xasprintf("%s=%s", sc->env_keys[i], sc->env_values[i]));
}

static void
launch_free(struct launch *l)
{
	for (char **p = l->argv; p && *p; p++)
		free(*p);
	for (char **p = l->env; p && *p; p++)
		free(*p);
	free(l->argv);
	free(l->env);
}

static void __attribute__((noreturn))
child_fail(const char *why)
{
	ssize_t n = write(2, why, strlen(why));
	(void)n;
	_exit(126);
}

/*
 * In the child: its own process group and control group, output to the
 * pipe, the daemon's unprivileged user with no capability to keep or gain,
 * then exec. The parent may have remover.c's thread: async-signal-safe
 * calls only.
 */
static void __attribute__((noreturn))
exec_sidecar(const struct launch *l, int out, const int *procs, int nprocs)
{
	sigset_t none;
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	setpgid(0, 0);
	for (int i = 0; procs && i < nprocs; i++)
		if (write(procs[i], "0", 1) != 1)
			child_fail("codeexecd: sidecar: cannot enter its control group\n");
	if (null == -1 || dup2(null, 0) == -1 || dup2(out, 1) == -1 || dup2(out, 2) == -1)
		_exit(126);
	close_range(3, ~0U, 0);
	if (chdir("/") == -1)
		child_fail("codeexecd: sidecar: cannot enter /\n");
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (S.uid != (uid_t)-1 && getuid() != S.uid &&
	    ((geteuid() == 0 && setgroups(0, NULL) == -1) || setresgid(S.gid, S.gid, S.gid) == -1 ||
	     setresuid(S.uid, S.uid, S.uid) == -1))
		child_fail("codeexecd: sidecar: cannot become the daemon's user\n");
	if (getuid() == 0 || geteuid() == 0)
		child_fail("codeexecd: sidecar: refusing to run it as root\n");
	/* The parent's ambient capabilities (privdrop.c) would survive exec. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 && errno != EINVAL)
		child_fail("codeexecd: sidecar: cannot clear ambient capabilities\n");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		child_fail("codeexecd: sidecar: cannot set no_new_privs\n");
	/* After the uid change, which clears it: no sidecar outlives the daemon. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1)
		child_fail("codeexecd: sidecar: cannot set its parent-death signal\n");
	execve(l->argv[0], l->argv, l->env);
	child_fail("codeexecd: sidecar: cannot execute its command\n");
}

static void
set_state(struct sidecar *s, enum priv_sidecar_run st)
{
	s->state = st;
	s->changed = 1;
}

/* Fork and exec sidecar `s`. 0, or -1 with why. */
static int
spawn(struct sidecar *s, char *why, size_t why_len)
{
	struct launch l;
	int pipefd[2], procs[CGROUP_NCTL], nprocs = 0;
	char cgwhy[256];

	if (pipe2(pipefd, O_CLOEXEC) == -1)
		return err_set(why, why_len, "sidecar %s: pipe: %s", s->sc->name, strerror(errno));
	if (s->cg && (nprocs = cgroup_procs_fds(s->cg, procs, cgwhy, sizeof(cgwhy))) == -1) {
		log_warnx("sidecar %s runs outside its control group: %s", s->sc->name, cgwhy);
		nprocs = 0;
	}
	launch_make(s, &l);
	pid_t pid = fork();
	if (pid == 0)
		exec_sidecar(&l, pipefd[1], procs, nprocs);
	int saved = errno;
	launch_free(&l);
	for (int i = 0; i < nprocs; i++)
		close(procs[i]);
	close(pipefd[1]);
	if (pid == -1) {
		close(pipefd[0]);
		return err_set(why, why_len, "sidecar %s: fork: %s", s->sc->name, strerror(saved));
	}
	setpgid(pid, pid); /* also here: a kill may come before the child's own */
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	s->out = pipefd[0];
	s->pid = pid;
	s->started = clock_mono();
	s->started_wall = time(NULL);
	s->ready_deadline = s->started + s->sc->readiness_timeout_s;
	s->last_http = -1;
	set_state(s, PRIV_SC_STARTING);
	log_info("sidecar %s started (pid %d) on %s port %d", s->sc->name, (int)pid, s->sc->host,
		 s->sc->port);
	return 0;
}

/* Start the relay of `s`'s Unix socket (relay.h), as the sidecar's user. 0, or -1 with why. */
static int
spawn_relay(struct sidecar *s, char *why, size_t why_len)
{
	struct launch l = {NULL, NULL};
	size_t na = 0, ne = 0;

	l.argv = add(l.argv, &na, xstrdup(S.self));
	l.argv = add(l.argv, &na, xstrdup(RELAY_OPTION));
	l.argv = add(l.argv, &na, xstrdup(s->sc->name));
	l.argv = add(l.argv, &na, xstrdup(s->sc->socket_path));
	l.argv = add(l.argv, &na, xstrdup(s->sc->host));
	l.argv = add(l.argv, &na, xasprintf("%d", s->sc->port));
	l.argv = add(l.argv, &na, xasprintf("%o", (unsigned)S.relay_mode));
	l.argv = add(l.argv, &na, xasprintf("%d", S.foreground));
	l.env = add(l.env, &ne, xstrdup("PATH=/usr/bin:/bin"));
	pid_t pid = fork();
	if (pid == 0)
		exec_sidecar(&l, 2, NULL, 0);
	int saved = errno;
	launch_free(&l);
	if (pid == -1)
		return err_set(why, why_len, "sidecar %s: fork its relay: %s", s->sc->name,
			       strerror(saved));
	setpgid(pid, pid);
	s->relay = pid;
	log_info("sidecar %s: relay %d serves %s", s->sc->name, (int)pid, s->sc->socket_path);
	return 0;
}

/* Wait (5 s at most) until the relay of `s` listens. 0, or -1 with why. */
static int
await_relay(struct sidecar *s, char *why, size_t why_len)
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

/*
 * runtime_dir/sidecars, for the relays' sockets: the sidecars' user's, so
 * that its relays can make and replace them; search-only for the others.
 */
static int
make_socket_dir(const struct config *cfg, char *why, size_t why_len)
{
	char *dir = xasprintf("%s/sidecars", cfg->runtime_dir);
	int rc = 0;

	if (fs_mkdir_p(dir, 0711, why, why_len) == -1 ||
	    (S.uid != (uid_t)-1 && chown(dir, S.uid, S.gid) == -1) || chmod(dir, 0711) == -1)
		rc = why[0] ? -1 : err_set(why, why_len, "%s: %s", dir, strerror(errno));
	free(dir);
	return rc;
}

/* The sidecar's own control group, with its limits. NULL (logged) if none. */
static struct cgroup *
make_group(const struct config_sidecar *sc, char *why, size_t why_len)
{
	struct cgroup_limits lim = {(uint64_t)sc->limit_memory_mb, (uint64_t)sc->limit_pids,
				    sc->limit_cpu};
	char *name = xasprintf("sidecar-%s", sc->name);
	struct cgroup *g = NULL;

	if (S.cgroups)
		g = cgroup_create(S.cgroups, name, &lim, why, why_len);
	free(name);
	return g;
}

static void
kill_group(struct sidecar *s, int sig)
{
	if (s->pid > 0 && kill(-s->pid, sig) == -1 && errno != ESRCH)
		log_warn("kill sidecar %s (%d)", s->sc->name, (int)s->pid);
}

/* Why `s` is not ready, with its last output, for the start-up error. */
static int
not_ready(struct sidecar *s, const char *what, char *why, size_t why_len)
{
	return err_set(why, why_len, "sidecar %s %s; its last output: %s", s->sc->name, what,
		       s->tail[0] ? s->tail : "(none)");
}

/* Wait until every sidecar answers, one at a time. 0, or -1 with why. */
static int
await_ready(struct sidecar *s, char *why, size_t why_len)
{
	char what[300];
	int status;

	for (;;) {
		wait_fd(s->out, POLLIN, 100);
		drain(s);
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			char *how = wstatus_text(status);
			drain(s);
			snprintf(what, sizeof(what), "%s before it was ready", how);
			free(how);
			s->pid = 0;
			return not_ready(s, what, why, why_len);
		}
		int code = probe(s->sc, 500);
		if (code >= 200 && code < 300) {
			set_state(s, PRIV_SC_RUNNING);
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
			drain(s);
			return not_ready(s, what, why, why_len);
		}
	}
}

/* Kill and reap every sidecar started: start-up failed. */
static void
abandon_all(void)
{
	int status;

	for (size_t i = 0; i < S.n; i++) {
		struct sidecar *s = &S.v[i];
		if (s->pid > 0) {
			kill_group(s, SIGKILL);
			while (waitpid(s->pid, &status, 0) == -1 && errno == EINTR)
				;
			s->pid = 0;
		}
		if (s->relay > 0) {
			kill(-s->relay, SIGKILL);
			while (waitpid(s->relay, &status, 0) == -1 && errno == EINTR)
				;
			s->relay = 0;
		}
		if (s->out != -1)
			close(s->out);
		s->out = -1;
		if (s->cg)
			cgroup_destroy(&s->cg);
	}
}

int
sidecars_start(struct config *cfg, const struct cgroup_layout *cgroups, uid_t uid, gid_t gid,
	       int foreground, char *why, size_t why_len)
{
	int sockets = 0;

	S.n = cfg->sidecars.n;
	S.uid = uid;
	S.gid = gid;
	S.foreground = foreground;
	/* Kernels of the daemon's uid: only that uid. Kernels of kernel_uid_range
	 * have no group in common: every local user, who reaches the TCP port too. */
	S.relay_mode = cfg->kernel_uid_first == 0 ? 0600 : 0666;
	for (size_t i = 0; i < S.n; i++)
		sockets += cfg->sidecars.v[i].socket;
	if (sockets) {
		S.self = realpath("/proc/self/exe", NULL);
		if (S.self == NULL)
			return err_set(why, why_len, "/proc/self/exe: %s", strerror(errno));
		why[0] = '\0';
		if (make_socket_dir(cfg, why, why_len) == -1)
			return -1;
	}
	S.v = xcalloc(S.n + 1, sizeof(*S.v));
	S.cgroups = cgroups;
	if (uid == (uid_t)-1 && geteuid() == 0 && S.n > 0)
		return err_set(why, why_len, "sidecars never run as root: set user");
	for (size_t i = 0; i < S.n; i++) {
		struct sidecar *s = &S.v[i];
		char cgwhy[512];
		s->sc = &cfg->sidecars.v[i];
		s->cfg = cfg;
		s->out = -1;
		s->backoff_s = 1;
		if (s->sc->port == 0 && pick_port(s->sc->host, &s->sc->port, why, why_len) == -1)
			goto fail;
		s->cg = make_group(s->sc, cgwhy, sizeof(cgwhy));
		if (s->cg == NULL && cgroups &&
		    (s->sc->limit_memory_mb || s->sc->limit_pids || s->sc->limit_cpu)) {
			err_set(why, why_len, "sidecar %s: %s", s->sc->name, cgwhy);
			goto fail;
		}
		if (s->cg == NULL && cgroups)
			log_warnx("sidecar %s runs without its control group: %s", s->sc->name,
				  cgwhy);
		if (s->cg == NULL && !cgroups &&
		    (s->sc->limit_memory_mb || s->sc->limit_pids || s->sc->limit_cpu))
			log_warnx("sidecar %s runs without its limits: there are no control "
				  "groups here", s->sc->name);
		if (spawn(s, why, why_len) == -1)
			goto fail;
		if (s->sc->socket) {
			free(s->sc->socket_path);
			s->sc->socket_path =
				xasprintf("%s/sidecars/%s.sock", cfg->runtime_dir, s->sc->name);
			if (spawn_relay(s, why, why_len) == -1)
				goto fail;
		}
	}
	for (size_t i = 0; i < S.n; i++)
		if (await_ready(&S.v[i], why, why_len) == -1 ||
		    (S.v[i].relay && await_relay(&S.v[i], why, why_len) == -1))
			goto fail;
	return 0;
fail:
	abandon_all();
	return -1;
}

/* ---- watching ---- */

int
sidecars_pollfds(struct pollfd *pfd, int max)
{
	int n = 0;

	for (size_t i = 0; i < S.n && n < max; i++)
		if (S.v[i].out != -1) {
			pfd[n].fd = S.v[i].out;
			pfd[n].events = POLLIN;
			pfd[n].revents = 0;
			n++;
		}
	return n;
}

int
sidecars_child_exited(pid_t pid, int status)
{
	for (size_t i = 0; i < S.n; i++) {
		struct sidecar *s = &S.v[i];
		if (s->relay == pid) {
			char *how = wstatus_text(status);
			s->relay = 0;
			s->relay_next = clock_mono() + 1;
			if (!S.stopping)
				log_warnx("sidecar %s: its relay %s; starting it again in 1 s",
					  s->sc->name, how);
			free(how);
			return 1;
		}
		if (s->pid != pid)
			continue;
		char *how = wstatus_text(status);
		drain(s);
		/* A process it left may hold the pipe open: its output goes unread. */
		if (s->out != -1)
			close(s->out);
		s->out = -1;
		s->pid = 0;
		if (s->cg)
			cgroup_kill_all(s->cg); /* what it left in its group */
		if (S.stopping) {
			log_info("sidecar %s %s", s->sc->name, how);
			set_state(s, PRIV_SC_STOPPED);
		} else if (s->reloaded) {
			log_info("sidecar %s %s; starting it with its new settings", s->sc->name,
				 how);
			s->reloaded = 0;
			s->backoff_s = 1;
			s->next_start = clock_mono();
			set_state(s, PRIV_SC_BACKOFF);
		} else if (s->sc->restart == SIDECAR_RESTART_NEVER ||
			   (s->sc->restart == SIDECAR_RESTART_ON_FAILURE && WIFEXITED(status) &&
			    WEXITSTATUS(status) == 0)) {
			log_warnx("sidecar %s %s; restart is %s: it stays down", s->sc->name, how,
				  sidecar_restart_name(s->sc->restart));
			set_state(s, PRIV_SC_FAILED);
		} else {
			if (clock_mono() - s->started >= BACKOFF_RESET_S)
				s->backoff_s = 1;
			s->next_start = clock_mono() + s->backoff_s;
			log_warnx("sidecar %s %s; restarting it in %d s", s->sc->name, how,
				  s->backoff_s);
			s->backoff_s = s->backoff_s * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S
									: s->backoff_s * 2;
			set_state(s, PRIV_SC_BACKOFF);
		}
		free(how);
		return 1;
	}
	return 0;
}

/* A restarted sidecar: ready once it answers, killed (and backed off) at its deadline. */
static void
check_starting(struct sidecar *s)
{
	int code = probe(s->sc, PROBE_MS_RUNNING);

	if (code >= 200 && code < 300) {
		log_info("sidecar %s is ready again (GET %s answered %d)", s->sc->name,
			 s->sc->health_path, code);
		set_state(s, PRIV_SC_RUNNING);
		return;
	}
	if (clock_mono() > s->ready_deadline) {
		log_warnx("sidecar %s did not answer GET %s with a 2xx within %g s; killing it",
			  s->sc->name, s->sc->health_path, s->sc->readiness_timeout_s);
		kill_group(s, SIGKILL);
		s->ready_deadline = clock_mono() + 3600; /* once */
	}
}

void
sidecars_tick(void)
{
	char why[512];

	for (size_t i = 0; i < S.n; i++) {
		struct sidecar *s = &S.v[i];
		if (s->out != -1)
			drain(s);
		if (S.stopping)
			continue;
		if (s->sc->socket && s->relay == 0 && clock_mono() >= s->relay_next &&
		    spawn_relay(s, why, sizeof(why)) == -1) {
			log_warnx("%s", why);
			s->relay_next = clock_mono() + 5;
		}
		if (s->state == PRIV_SC_BACKOFF && clock_mono() >= s->next_start) {
			s->restarts++;
			if (s->regroup) {
				char cgwhy[256];
				s->regroup = 0;
				if (s->cg)
					cgroup_destroy(&s->cg);
				if (S.cgroups &&
				    (s->cg = make_group(s->sc, cgwhy, sizeof(cgwhy))) == NULL)
					log_warnx("sidecar %s runs without its control group and "
						  "limits: %s", s->sc->name, cgwhy);
			}
			if (spawn(s, why, sizeof(why)) == -1) {
				log_warnx("%s", why);
				s->next_start = clock_mono() + s->backoff_s;
			}
		} else if (s->state == PRIV_SC_STARTING && s->pid > 0) {
			check_starting(s);
		}
	}
}

/* Resident memory of `pid` in KiB, from /proc; 0 if it cannot be read. */
static unsigned
rss_kb(pid_t pid)
{
	char path[64], line[128];
	unsigned kb = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %u kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

void
sidecars_report(int all, void (*tell)(const struct priv_msg *m))
{
	int refresh = clock_mono() - S.last_report >= REPORT_S;

	if (refresh)
		S.last_report = clock_mono();
	for (size_t i = 0; i < S.n; i++) {
		struct sidecar *s = &S.v[i];
		if (!all && !refresh && !s->changed)
			continue;
		struct priv_msg m = {.type = PRIV_SIDECAR_STATE};
		m.u.sidecar.index = (uint32_t)i;
		m.u.sidecar.state = s->state;
		m.u.sidecar.pid = s->pid > 0 ? (uint32_t)s->pid : 0;
		m.u.sidecar.restarts = s->restarts;
		m.u.sidecar.started = (uint32_t)s->started_wall;
		m.u.sidecar.rss_kb = s->pid > 0 ? rss_kb(s->pid) : 0;
		m.u.sidecar.port = (uint32_t)s->sc->port;
		s->changed = 0;
		tell(&m);
	}
}

void
sidecars_stop(double grace_s)
{
	double end = clock_mono() + grace_s;
	int live = 0, status;

	S.stopping = 1;
	for (size_t i = 0; i < S.n; i++) {
		struct sidecar *s = &S.v[i];
		if (s->pid > 0) {
			log_info("stopping sidecar %s (%d)", s->sc->name, (int)s->pid);
			kill_group(s, SIGTERM);
			live++;
		}
		if (s->relay > 0) {
			kill(-s->relay, SIGTERM);
			while (waitpid(s->relay, &status, 0) == -1 && errno == EINTR)
				;
			s->relay = 0;
		}
		if (s->sc->socket_path) {
			char *broker = xasprintf("%s" RELAY_BROKER_SUFFIX, s->sc->socket_path);
			if (unlink(s->sc->socket_path) == -1 && errno != ENOENT)
				log_warn("remove %s", s->sc->socket_path);
			if (unlink(broker) == -1 && errno != ENOENT)
				log_warn("remove %s", broker);
			free(broker);
		}
	}
	while (live > 0) {
		/* Only our own: the uid sweepers' children are uid.c's to reap. */
		for (size_t i = 0; i < S.n; i++) {
			pid_t pid = S.v[i].pid;
			if (pid > 0 && waitpid(pid, &status, WNOHANG) == pid)
				live -= sidecars_child_exited(pid, status);
			else if (pid > 0 && errno == ECHILD)
				live -= sidecars_child_exited(pid, 0);
		}
		if (live > 0 && clock_mono() > end) {
			for (size_t i = 0; i < S.n; i++)
				if (S.v[i].pid > 0) {
					log_warnx("sidecar %s did not stop within %g s "
						  "(shutdown_grace_s); killing it",
						  S.v[i].sc->name, grace_s);
					kill_group(&S.v[i], SIGKILL);
				}
			end = clock_mono() + 3600;
		}
		for (size_t i = 0; i < S.n; i++)
			if (S.v[i].out != -1)
				drain(&S.v[i]);
		if (live > 0)
			usleep(50 * 1000);
	}
	for (size_t i = 0; i < S.n; i++) {
		if (S.v[i].out != -1)
			close(S.v[i].out);
		S.v[i].out = -1;
		if (S.v[i].cg)
			cgroup_destroy(&S.v[i].cg);
	}
}

/* ---- SIGHUP ---- */

#define SWAP(a, b)                                                                     \
	do {                                                                           \
		__typeof__(a) swap_tmp_ = (a);                                         \
		(a) = (b);                                                             \
		(b) = swap_tmp_;                                                       \
	} while (0)

/* What kernels and the front know it by: changing it needs a restart of the daemon. */
static int
identity_differs(const struct config_sidecar *a, const struct config_sidecar *b)
{
	return strcmp(a->name, b->name) != 0 || strcmp(a->url_env_var, b->url_env_var) != 0 ||
	       strcmp(a->host, b->host) != 0 || a->port_configured != b->port_configured ||
	       a->socket != b->socket;
}

/* Take b's settings into the running a (b gets a's, to be freed). */
static void
take_settings(struct config_sidecar *a, struct config_sidecar *b)
{
	SWAP(a->command, b->command);
	SWAP(a->ncommand, b->ncommand);
	SWAP(a->use_env_python, b->use_env_python);
	SWAP(a->health_path, b->health_path);
	SWAP(a->readiness_timeout_s, b->readiness_timeout_s);
	SWAP(a->env_keys, b->env_keys);
	SWAP(a->env_values, b->env_values);
	SWAP(a->nenv, b->nenv);
	SWAP(a->restart, b->restart);
	SWAP(a->limit_memory_mb, b->limit_memory_mb);
	SWAP(a->limit_pids, b->limit_pids);
	SWAP(a->limit_cpu, b->limit_cpu);
}

void
sidecars_reload(const char *path)
{
	struct config fresh;
	char err[1024];

	if (S.n == 0)
		return;
	if (config_load(path, &fresh, err, sizeof(err)) == -1) {
		log_warnx("reload: sidecars kept as they run: %s", err);
		return;
	}
	if (fresh.sidecars.n != S.n) {
		log_warnx("reload: sidecars were added or removed; that takes effect only after a "
			  "restart");
		config_free(&fresh);
		return;
	}
	for (size_t i = 0; i < S.n; i++) {
		struct sidecar *s = &S.v[i];
		struct config_sidecar *now = s->sc, *want = &fresh.sidecars.v[i];
		if (!sidecar_differs(now, want))
			continue;
		if (identity_differs(now, want)) {
			log_warnx("reload: sidecar %s: name, url_env_var, host, port or socket "
				  "changed; that takes effect only after a restart", now->name);
			continue;
		}
		s->regroup = now->limit_memory_mb != want->limit_memory_mb ||
			     now->limit_pids != want->limit_pids ||
			     now->limit_cpu != want->limit_cpu;
		take_settings(now, want);
		log_info("reload: sidecar %s changed; restarting it", now->name);
		if (s->pid > 0) {
			s->reloaded = 1;
			kill_group(s, SIGTERM);
		} else if (s->state == PRIV_SC_BACKOFF || s->state == PRIV_SC_FAILED) {
			s->backoff_s = 1;
			s->next_start = clock_mono();
			set_state(s, PRIV_SC_BACKOFF);
		}
	}
	config_free(&fresh);
}
