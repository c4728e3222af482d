/*
 * sidecar_launch.c - starting a sidecar and its relay (sidecar_int.h): the
 * argv and sanitized environment made before fork, the child's steps down
 * to the daemon's user, and the directory of the relays' sockets.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "clock.h"
#include "config.h"
#include "err.h"
#include "fsutil.h"
#include "log.h"
#include "relay.h"
#include "sidecar_int.h"
#include "xmalloc.h"

/* Who the sidecars and relays run as, and how the relays are started. */
static struct {
	uid_t uid;
	gid_t gid;
	char *self;		/* our own executable, which is also the relay */
	int foreground;		/* the relay logs to our stderr, else to syslog */
	int relay_mode;		/* the sockets' file mode */
} L;

/*
 * The group sidecars and relays run in: not the kernels' (`kernels`).
 * Tracing a process, and opening its /proc/PID/mem, needs the caller's
 * uid AND gid to match the target's (__ptrace_may_access), and a sidecar,
 * unlike a kernel, is dumpable (exec made it so) and has the host's
 * network: a seccomp kernel of the same uid, which sees the host's pids,
 * could otherwise write code into it. nogroup, or the gid below it should
 * the kernels run as nogroup.
 */
static gid_t
other_gid(gid_t kernels)
{
	struct group *g = getgrnam("nogroup");
	gid_t n = g ? g->gr_gid : 65534;

	return n != kernels ? n : n - 1;
}

void
sidecar_launch_init(uid_t uid, gid_t gid, int foreground, int relay_mode)
{
	L.uid = uid;
	L.gid = other_gid(gid);
	L.foreground = foreground;
	L.relay_mode = relay_mode;
}

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
	for (size_t i = 0; i < sc->env.n; i++)
		if (strcmp(sc->env.keys[i], name) == 0)
			return 1;
	return 0;
}

static void
launch_make(const struct sidecar *s, struct launch *l)
{
	const struct config_sidecar *sc = s->sc;
	size_t na = 0, ne = 0;
	struct passwd *pw = getpwuid(L.uid != (uid_t)-1 ? L.uid : getuid());

	l->argv = NULL;
	l->env = NULL;
	if (sc->use_env_python)
		l->argv = add(l->argv, &na, xasprintf("%s/bin/python", s->cfg->build_dir));
	for (size_t i = 0; i < sc->command.n; i++)
		l->argv = add(l->argv, &na, xstrdup(sc->command.v[i]));
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
	for (size_t i = 0; i < sc->env.n; i++)
		l->env = add(l->env, &ne, xasprintf("%s=%s", sc->env.keys[i], sc->env.values[i]));
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
exec_sidecar(const struct launch *l, int in, int out, const int *procs, int nprocs)
{
	sigset_t none;
	int null = in != -1 ? in : open("/dev/null", O_RDONLY | O_CLOEXEC);

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
	if (L.uid != (uid_t)-1 && getuid() != L.uid &&
	    ((geteuid() == 0 && setgroups(0, NULL) == -1) || setresgid(L.gid, L.gid, L.gid) == -1 ||
	     setresuid(L.uid, L.uid, L.uid) == -1))
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

/* Fork and exec sidecar `s`. 0, or -1 with why. */
int
sidecar_spawn(struct sidecar *s, char *why, size_t why_len)
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
		exec_sidecar(&l, -1, pipefd[1], procs, nprocs);
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
	sidecar_set_state(s, PRIV_SC_STARTING);
	log_info("sidecar %s started (pid %d) on %s port %d", s->sc->name, (int)pid, s->sc->host,
		 s->sc->port);
	return 0;
}

pid_t
sidecar_spawn_self(const char *const *args, int in, char *why, size_t why_len)
{
	struct launch l = {NULL, NULL};
	size_t na = 0, ne = 0;

	if (L.self == NULL && (L.self = realpath("/proc/self/exe", NULL)) == NULL)
		return err_set(why, why_len, "/proc/self/exe: %s", strerror(errno));
	l.argv = add(l.argv, &na, xstrdup(L.self));
	for (size_t i = 0; args[i] != NULL; i++)
		l.argv = add(l.argv, &na, xstrdup(args[i]));
	l.env = add(l.env, &ne, xstrdup("PATH=/usr/bin:/bin"));
	pid_t pid = fork();
	if (pid == 0)
		exec_sidecar(&l, in, 2, NULL, 0);
	int saved = errno;
	launch_free(&l);
	if (pid == -1)
		return err_set(why, why_len, "fork %s: %s", args[0], strerror(saved));
	setpgid(pid, pid);
	return pid;
}

/* Start the relay of `s`'s Unix socket (relay.h), as the sidecar's user. 0, or -1 with why. */
int
sidecar_spawn_relay(struct sidecar *s, char *why, size_t why_len)
{
	char port[16], mode[16], fg[16];

	snprintf(port, sizeof(port), "%d", s->sc->port);
	snprintf(mode, sizeof(mode), "%o", (unsigned)L.relay_mode);
	snprintf(fg, sizeof(fg), "%d", L.foreground);
	const char *const args[] = {RELAY_OPTION, s->sc->name, s->sc->socket_path, s->sc->host,
				    port, mode, fg, NULL};
	pid_t pid = sidecar_spawn_self(args, -1, why, why_len);
	if (pid == -1)
		return -1;
	s->relay = pid;
	log_info("sidecar %s: relay %d serves %s", s->sc->name, (int)pid, s->sc->socket_path);
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
	    (L.uid != (uid_t)-1 && chown(dir, L.uid, L.gid) == -1) || chmod(dir, 0711) == -1)
		rc = why[0] ? -1 : err_set(why, why_len, "%s: %s", dir, strerror(errno));
	free(dir);
	return rc;
}

int
sidecar_relays_prepare(const struct config *cfg, char *why, size_t why_len)
{
	why[0] = '\0';
	return make_socket_dir(cfg, why, why_len);
}
