/* parent.c - see parent.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "clock.h"
#include "config.h"
#include "err.h"
#include "fork_dir.h"
#include "fsutil.h"
#include "kernelpid.h"
#include "log.h"
#include "dirs_left.h"
#include "monitor.h"
#include "parent.h"
#include "remover.h"
#include "secret_file.h"
#include "secrets.h"
#include "egress.h"
#include "sidecar.h"
#include "sigflags.h"
#include "uid.h"
#include "wstatus.h"
#include "xmalloc.h"

/* A front that dies this many times within RESTART_WINDOW_S is not restarted. */
#define MAX_RESTARTS 5
#define RESTART_WINDOW_S 60
/* After the grace for executions, what the front's own stop may take more. */
#define STOP_SLACK_S 15

/* What the parent keeps of a worker until it is reaped. */
struct pchild {
	struct pchild *next;
	pid_t pid;
	uid_t uid;
	char *workdir; /* its session directory, removed later on the front's word */
	char *rundir;  /* removed when it is reaped; names its control group */
	char name[PRIV_NAME_LEN + 1]; /* its egress proxy socket's (egress.h) */
};

static struct {
	struct parent_args *a;
	struct monitor *mon;
	struct pchild *children;
	pid_t front;		/* 0: none runs */
	int front_status;	/* how the last one ended */
	int sock;		/* our end of the protocol socket; -1: none */
	int stopping;		/* TERM came */
	int keeping;		/* the front died; its workers wait for the next one */
	double stop_deadline;	/* monotonic: the front is killed after it */
	time_t restarts[MAX_RESTARTS];
} P;

/* ---- the acts the monitor asks for (monitor_ops) ---- */

static int
op_spawn(void *ctx, const char *reuse, uid_t reuse_uid, pid_t *pid, int *front_fd, int *rescue_fd,
	 char **dir, char name[PRIV_NAME_LEN + 1], uid_t *kernel_uid, char *why, size_t why_len)
{
	const struct config *cfg = P.a->cfg;
	struct launched w;
	uid_t uid = 0;

	(void)ctx;
	/* A kept directory's uid waited for it, unswept: it is the session's still. */
	if (reuse && reuse_uid != 0 && uid_retake(reuse_uid, reuse) == -1)
		return err_set(why, why_len, "kernel uid %d of %s is no longer reserved for it",
			       (int)reuse_uid, reuse);
	if (reuse)
		uid = reuse_uid;
	else if (cfg->kernel_uid_first && (uid = uid_take()) == 0)
		return err_set(why, why_len, "every identity of kernel_uid_range is in use or "
			       "not swept yet");
	if (worker_launch(&P.a->launcher, uid, reuse, &w, why, why_len) == -1) {
		uid_release(uid, reuse);
		return -1;
	}
	struct pchild *c = xcalloc(1, sizeof(*c));
	c->pid = w.pid;
	c->uid = uid;
	c->workdir = xstrdup(w.workdir);
	c->rundir = w.rundir;
	memcpy(c->name, w.name, sizeof(c->name));
	egress_open(c->name, c->uid);
	c->next = P.children;
	P.children = c;
	*pid = w.pid;
	*front_fd = w.fd;
	*rescue_fd = w.rescue;
	*dir = w.workdir;
	*kernel_uid = uid;
	memcpy(name, w.name, PRIV_NAME_LEN + 1);
	return 0;
}

static void
op_kill_worker(void *ctx, pid_t pid)
{
	(void)ctx;
	if (kill(pid, SIGKILL) == -1)
		log_warn("kill worker %d", (int)pid);
}

static int
op_claim_kernel(void *ctx, pid_t worker, pid_t kernel, int *pidfd, char *why, size_t why_len)
{
	(void)ctx;
	return kernelpid_claim(kernel, worker, pidfd, why, why_len);
}

static void
op_kill_kernel(void *ctx, int pidfd, pid_t kernel)
{
	(void)ctx;
	kernelpid_kill(pidfd, kernel);
}

/* The worker is reaped: its control group, runtime directory and uid go. */
static void
op_worker_gone(void *ctx, pid_t pid)
{
	(void)ctx;
	for (struct pchild **pp = &P.children; *pp; pp = &(*pp)->next) {
		struct pchild *c = *pp;
		if (c->pid != pid)
			continue;
		*pp = c->next;
		egress_close(c->name);
		/* Nor what it detached: a worker killed outright left its group. */
		if (P.a->launcher.cgroups)
			cgroup_remove_named(P.a->launcher.cgroups, strrchr(c->rundir, '/') + 1);
		/* A worker killed outright leaves its sockets and connection file. */
		remover_add(c->rundir);
		/* Its uid is clean once its files are gone, the working directory too. */
		uid_release(c->uid, c->workdir);
		free(c->workdir);
		free(c);
		return;
	}
}

static void
op_remove_dir(void *ctx, const char *dir)
{
	(void)ctx;
	/* A tree of many files takes long to remove: never in the loop. */
	remover_add(xstrdup(dir));
}

/* ---- preprocess_command ---- */

/* A memfd for a command's output; -1 with why. */
static int
output_file(const char *name, char *why, size_t why_len)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	if (fd == -1)
		err_set(why, why_len, "memfd_create %s: %s", name, strerror(errno));
	return fd;
}

/* In the child: say why on the command's stderr (the call's error), and end. */
static void __attribute__((noreturn))
child_fail(const char *why, int code)
{
	ssize_t n = write(2, why, strlen(why));
	(void)n;
	_exit(code);
}

/*
 * In the child: become the front's uid (`user`, or nobody when the parent
 * is root without one), with no capability to keep or gain, and exec. The
 * parent has remover.c's thread: only async-signal-safe calls here.
 */
static void __attribute__((noreturn))
exec_preprocess(const char *cmd, char *const env[], int in, int out, int err, rlim_t max_bytes)
{
	char *const argv[] = {(char *)cmd, NULL};
	struct rlimit fsize = {max_bytes + 1, max_bytes + 1};
	sigset_t none;
	uid_t uid = P.a->front_uid;
	gid_t gid = P.a->front_gid;

	setpgid(0, 0); /* its own group: the time limit kills what it started too */
	if (dup2(in, 0) == -1 || dup2(out, 1) == -1 || dup2(err, 2) == -1)
		_exit(126);
	close_range(3, ~0U, 0);
	if (chdir("/") == -1)
		child_fail("codeexecd: preprocess_command: cannot enter /\n", 126);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* A write past the bound ends it with SIGXFSZ (memfds are files). */
	if (setrlimit(RLIMIT_FSIZE, &fsize) == -1)
		child_fail("codeexecd: preprocess_command: cannot set RLIMIT_FSIZE\n", 126);
	if (geteuid() == 0 && uid != (uid_t)-1 &&
	    (setgroups(0, NULL) == -1 || setresgid(gid, gid, gid) == -1 ||
	     setresuid(uid, uid, uid) == -1))
		child_fail("codeexecd: preprocess_command: cannot become the daemon's user\n", 126);
	if (getuid() == 0 || geteuid() == 0)
		child_fail("codeexecd: preprocess_command: refusing to run it as root\n", 126);
	/* The parent's ambient capabilities (privdrop.c) would survive exec. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 && errno != EINVAL)
		child_fail("codeexecd: preprocess_command: cannot clear ambient capabilities\n",
			   126);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		child_fail("codeexecd: preprocess_command: cannot set no_new_privs\n", 126);
	execve(cmd, argv, env);
	child_fail("codeexecd: preprocess_command: cannot execute it\n", 127);
}

static int
op_preprocess(void *ctx, const struct priv_preprocess *p, int code_fd, pid_t *pid, int *out_fd,
	      int *err_fd, char *why, size_t why_len)
{
	const struct config *cfg = P.a->cfg;
	char *env[4];

	(void)ctx;
	if (lseek(code_fd, 0, SEEK_SET) == -1)
		return err_set(why, why_len, "the code's file: %s", strerror(errno));
	if ((*out_fd = output_file("codeexecd-preprocess-out", why, why_len)) == -1)
		return -1;
	if ((*err_fd = output_file("codeexecd-preprocess-err", why, why_len)) == -1) {
		close(*out_fd);
		return -1;
	}
	/* Made before fork: the child may not allocate. */
	env[0] = xasprintf("CODEEXECD_SESSION_ID=%s", p->session);
	env[1] = xasprintf("CODEEXECD_IDENTITY=%s", p->identity);
	env[2] = xstrdup("PATH=/usr/local/bin:/usr/bin:/bin");
	env[3] = NULL;
	*pid = fork();
	if (*pid == 0)
		exec_preprocess(cfg->preprocess_command, env, code_fd, *out_fd, *err_fd,
				(rlim_t)cfg->preprocess_max_bytes);
	int saved = errno;
	for (int i = 0; i < 3; i++)
		free(env[i]);
	if (*pid == -1) {
		close(*out_fd);
		close(*err_fd);
		return err_set(why, why_len, "fork: %s", strerror(saved));
	}
	/* Also here: a kill at the time limit may come before the child's setpgid. */
	setpgid(*pid, *pid);
	log_debug("preprocess_command %d for request %u", (int)*pid, p->seq);
	return 0;
}

static void
op_kill_group(void *ctx, pid_t pgid)
{
	(void)ctx;
	if (kill(-pgid, SIGKILL) == -1 && errno != ESRCH)
		log_warn("kill preprocess_command group %d", (int)pgid);
}

static void
op_egress_bind(void *ctx, pid_t pid, const char *session, const char *identity)
{
	(void)ctx;
	for (struct pchild *c = P.children; c; c = c->next)
		if (c->pid == pid)
			egress_bind(c->name, session, identity);
}

static const struct monitor_ops ops = {op_spawn,       op_kill_worker, op_claim_kernel,
				       op_kill_kernel, op_worker_gone, op_remove_dir,
				       op_preprocess,  op_kill_group,  fork_dir_start,
				       fork_dir_done,  op_egress_bind};

/* ---- the front ---- */

/* In the child: run the front, which confines itself first (front.h). */
static void __attribute__((noreturn))
become_front(struct parent_args *a, pid_t parent, int sock, int ready_fd)
{
	a->front(a->front_arg, parent, sock, a->control_fd, ready_fd);
	_exit(0);
}

static void serve(struct parent_args *a, int sock);

/* Send one SIDECAR_STATE to the front, if one listens. */
static void
tell_sidecar(const struct priv_msg *m)
{
	if (P.sock != -1)
		monitor_send(P.mon, m, -1);
}

/* Fork a front with a fresh protocol socket and monitor. 0, or -1 (logged). */
static int
start_front(struct parent_args *a, int ready_fd)
{
	int sv[2];
	pid_t self = getpid();

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("socketpair for the front");
		return -1;
	}
	pid_t pid = fork();
	if (pid == -1) {
		log_warn("fork the front");
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		close(sv[0]);
		become_front(a, self, sv[1], ready_fd);
	}
	close(sv[1]);
	if (ready_fd != -1)
		close(ready_fd);
	P.front = pid;
	serve(a, sv[0]);
	log_info("front %d started", (int)pid);
	return 0;
}

/* A session directory left by an earlier instance or front (dirs_left.h):
 * its uid waits for it, as for a reaped worker's kept directory. */
static void
adopt_dir(const char *dir, const char name[PRIV_NAME_LEN + 1], uid_t uid, void *arg)
{
	(void)arg;
	if (uid)
		uid_keep_for(uid, dir);
	monitor_adopt_dir(P.mon, dir, name, uid);
}

/* A fresh monitor for the front on P.sock, and the directories an earlier
 * instance left for its journal. */
static void
new_monitor(struct parent_args *a)
{
	/* The most the front can ask for: every session, the warm pool, a
	 * worker for each HTTP thread that waits for one. */
	int warm = a->cfg->pool_warm_max > a->cfg->pool_warm ? a->cfg->pool_warm_max
							      : a->cfg->pool_warm;
	/* Twice the pool's sizes: a reload may raise them in the front. */
	int ceiling = 2 * (a->cfg->pool_max_sessions + warm) + a->cfg->http_threads;
	fork_dir_init(a->cfg);
	P.mon = monitor_new(&ops, NULL, P.sock, a->cfg->kernel_network_mode, ceiling);
	monitor_set_kept(P.mon, a->cfg->max_hibernated_sessions);
	if (a->cfg->persist_sessions) {
		monitor_set_persist(P.mon);
		/* Before SECRETS_SENT: the front knows them all when it serves. */
		int n = dirs_left_each(a->cfg, a->front_uid == (uid_t)-1 ? geteuid() : a->front_uid,
				       adopt_dir, NULL);
		if (n)
			log_info("session directories kept for the front's journal: %d", n);
	}
}

/* Serve a front on `sock` (owned from now on): with a fresh monitor, or
 * with the one whose workers the last front left (P.keeping). */
static void
serve(struct parent_args *a, int sock)
{
	/* A front that leaves its socket full must not stall us (monitor.h). */
	if (fcntl(sock, F_SETFL, O_NONBLOCK) == -1)
		fatal("O_NONBLOCK on the front's socket");
	P.sock = sock;
	if (P.keeping) {
		P.keeping = 0;
		/* Before SECRETS_SENT, as DIR_LEFT: the front knows them when it serves. */
		int n = monitor_hand_over(P.mon, sock);
		if (n > 0)
			log_info("the new front takes over %d live workers and their kernels", n);
	} else {
		new_monitor(a);
	}
	/* First of all: the front waits for them before it reads its settings. */
	secrets_send(P.mon);
	/* One command for each HTTP thread: each waits for its own (32 when
	 * http.threads is sized at start-up). */
	if (a->cfg->preprocess_command[0] != '\0')
		monitor_set_preprocess(P.mon, a->cfg->http_threads > 0 ? a->cfg->http_threads : 32,
				       a->cfg->preprocess_timeout_s,
				       a->cfg->preprocess_max_bytes);
	/* A new front knows nothing of the sidecars yet. */
	sidecars_report(1, tell_sidecar);
}

void
parent_fork_front(struct parent_args *a, int ready_fd)
{
	P.a = a;
	P.sock = -1;
	sigflags_install();
	if (start_front(a, ready_fd) == -1)
		fatalx("cannot start the front");
}

/* A restart now would be the MAX_RESTARTS-th within RESTART_WINDOW_S. */
static int
too_often(void)
{
	return time(NULL) - P.restarts[0] < RESTART_WINDOW_S;
}

/* As too_often, and if not, the restart is counted. */
static int
restarting_too_often(void)
{
	if (too_often())
		return 1;
	memmove(P.restarts, P.restarts + 1, sizeof(P.restarts) - sizeof(P.restarts[0]));
	P.restarts[MAX_RESTARTS - 1] = time(NULL);
	return 0;
}

/*
 * Whether a new front is to take over the workers of the one that is
 * gone: persist_sessions, and a new front will be started.
 */
static int
keep_for_next_front(void)
{
	return P.a->cfg->persist_sessions && !P.stopping &&
	       P.a->cfg->front_restart != FRONT_EXIT && !too_often() && monitor_live(P.mon) > 0;
}

/* The front is gone or not to be trusted: no more requests; its workers
 * end, or wait for the next front. */
static void
front_lost(void)
{
	if (P.sock == -1)
		return;
	if (keep_for_next_front()) {
		monitor_keep_workers(P.mon);
		P.keeping = 1;
		log_warnx("keeping the %d workers the front left, and their kernels, for the next "
			  "front", monitor_live(P.mon));
	} else {
		monitor_front_gone(P.mon);
		int live = monitor_end_all(P.mon);
		if (live)
			log_warnx("ending the %d workers the front left, and their kernels", live);
	}
	close(P.sock);
	P.sock = -1;
}

/* The front has exited: its workers go too, and what it left is cleaned. */
static void
front_exited(int status)
{
	char *how = wstatus_text(status);
	P.front = 0;
	P.front_status = status;
	if (P.stopping && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		log_info("front %s", how);
	else
		log_warnx("front %s%s", how, P.stopping ? " while stopping" : "");
	free(how);
	front_lost();
}

/* Reap every child that exited: the front, a sweeper, a worker. */
static void
reap(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == P.front)
			front_exited(status);
		else if (!sidecars_child_exited(pid, status) && !egress_child_exited(pid, status) &&
			 !uid_child_exited(pid, status) &&
			 !monitor_child_exited(P.mon, pid, status))
			log_debug("reaped process %d, not ours", (int)pid);
	}
}

void
parent_tell_front(enum priv_type type, const char *reason, int fd)
{
	struct priv_msg m = {.type = type};

	if (P.sock == -1)
		return;
	if (reason)
		snprintf(m.u.degraded.reason, sizeof(m.u.degraded.reason), "%s", reason);
	monitor_send(P.mon, &m, fd);
}

/* TERM, HUP and USR1 are the front's to act on; TERM ends us too. */
static void
pass_signals(void)
{
	sigflags_drain();
	if (sigflags_take(SIGFLAG_TERM) && !P.stopping) {
		P.stopping = 1;
		P.stop_deadline = clock_mono() + P.a->cfg->shutdown_grace_s + STOP_SLACK_S;
		if (P.front)
			kill(P.front, SIGTERM);
	}
	if (sigflags_take(SIGFLAG_HUP)) {
		/* Before the signal, so that the front's reload reads the new copies. */
		secret_file_reread();
		if (P.sock != -1)
			secrets_send(P.mon);
		if (P.front)
			kill(P.front, SIGHUP);
		/* The front cannot start processes: changed sidecars are the parent's. */
		if (sidecars_count() > 0 && !P.stopping)
			sidecars_reload(P.a->cfg->file);
	}
	if (sigflags_take(SIGFLAG_USR1)) {
		log_info("status: parent, front %d, %d workers live", (int)P.front,
			 P.mon ? monitor_live(P.mon) : 0);
		if (P.front)
			kill(P.front, SIGUSR1);
	}
	if (sigflags_take(SIGFLAG_CHLD))
		reap();
}

/* Whether to stop rather than start a new front (logged), with *rc. */
static int
no_new_front(int *rc)
{
	if (P.stopping) {
		*rc = WIFEXITED(P.front_status) && WEXITSTATUS(P.front_status) == 0 ? 0 : 1;
		return 1;
	}
	if (P.a->cfg->front_restart == FRONT_EXIT) {
		log_warnx("front_restart is exit: stopping");
		*rc = 1;
		return 1;
	}
	if (restarting_too_often()) {
		log_warnx("the front died %d times in %d s: stopping", MAX_RESTARTS,
			  RESTART_WINDOW_S);
		*rc = 1;
		return 1;
	}
	return 0;
}

/* Workers kept for a new front that will not come end: the loop comes
 * back once they are reaped, to stop. */
static void
end_kept(void)
{
	P.keeping = 0;
	P.stopping = 1;
	monitor_front_gone(P.mon);
	monitor_end_all(P.mon);
}

/*
 * The front is gone, and every worker it had is reaped or kept for the
 * next one: 1 if the parent should stop now (with *rc), 0 once a new
 * front runs (or kept workers are ending, to stop once reaped).
 */
static int
after_front(int *rc)
{
	if (no_new_front(rc)) {
		if (!P.keeping) {
			monitor_free(&P.mon);
			return 1;
		}
		end_kept();
		return 0;
	}
	if (P.keeping) {
		log_warnx("starting a new front: it takes over every live worker, each session "
			  "keeping its kernel and variables");
	} else {
		monitor_free(&P.mon);
		if (P.a->cfg->persist_sessions)
			log_warnx("starting a new front: the sessions of its journal come back, "
				  "each with its last checkpoint");
		else
			log_warnx("starting a new front: every session of the old one is lost");
	}
	/* Fork with no other thread busy: the remover's locks stay free. */
	remover_drain();
	if (start_front(P.a, -1) == -1) {
		if (P.keeping) {
			end_kept();
			return 0;
		}
		*rc = 1;
		return 1;
	}
	return 0;
}

/* One turn: wait up to a second, serve the front, reap, sweep, watch. */
static void
turn(void)
{
	static time_t last_watch;
	struct pollfd pfd[2 + PRIV_SIDECARS_MAX] = {{.fd = sigflags_fd(), .events = POLLIN},
						    {.fd = P.sock, .events = POLLIN}};
	/* With no front, its slot waits on nothing (poll skips negative fds). */
	int n = 2 + sidecars_pollfds(pfd + 2, PRIV_SIDECARS_MAX);

	if (poll(pfd, (nfds_t)n, 1000) == -1 && errno != EINTR)
		fatal("poll");
	pass_signals();
	sidecars_tick();
	egress_tick();
	if (P.sock != -1 && ((pfd[1].revents && monitor_request(P.mon) == -1) ||
			     monitor_broken(P.mon))) {
		/* The front closed its end, broke the protocol or left its socket
		 * full: it is not to be trusted. (A front that stops closes it as
		 * it exits.) */
		log_msg(P.stopping ? LOG_DEBUG : LOG_WARNING,
			"front %d: its socket is closed or broken; ending it", (int)P.front);
		if (P.front && !P.stopping)
			kill(P.front, SIGKILL);
		front_lost();
	}
	reap();
	if (P.mon)
		monitor_tick(P.mon);
	sidecars_report(0, tell_sidecar);
	uid_tick();
	if (P.stopping && P.front && clock_mono() > P.stop_deadline) {
		log_warnx("front %d did not stop in time; killing it", (int)P.front);
		kill(P.front, SIGKILL);
		P.stop_deadline = clock_mono() + 3600;
	}
	if (time(NULL) != last_watch && !P.stopping && P.a->watch) {
		last_watch = time(NULL);
		P.a->watch(P.a);
	}
}

int
parent_run(struct parent_args *a)
{
	int rc = 0;

	for (;;) {
		turn();
		if (P.front || (P.mon && monitor_live(P.mon) > 0 && !P.keeping))
			continue;
		if (after_front(&rc))
			break;
	}
	/* Last: the sessions could use them until they ended. */
	egress_stop();
	sidecars_stop(a->cfg->shutdown_grace_s);
	remover_drain();
	if (a->cgroups_owned) {
		cgroup_layout_remove(a->cgroups_owned); /* what no worker removed */
		cgroup_layout_free(a->cgroups_owned);
	}
	uid_finish(); /* every process and file of the kernels' uids */
	log_info("stopped");
	return rc;
}

void
parent_serve(struct parent_args *a, int sock)
{
	P.a = a;
	sigflags_install();
	serve(a, sock);
	while (P.sock != -1 || monitor_live(P.mon) > 0)
		turn();
	monitor_free(&P.mon);
	remover_drain();
}
