/*
 * main.c - codeexecd: the supervisor's entry point and main loop.
 *
 * Start-up in a fixed order: configuration, safety checks, directories,
 * the environment, detaching, the pool, HTTP; then one poll() loop that
 * reads the workers and acts on the flags the signal handlers set.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assets.h"
#include "auth.h"
#include "authority.h"
#include "cgroup.h"
#include "config.h"
#include "control.h"
#include "batch.h"
#include "envbuild.h"
#include "fsutil.h"
#include "health.h"
#include "http.h"
#include "job.h"
#include "log.h"
#include "memtrim.h"
#include "mcp.h"
#include "metrics.h"
#include "mpl_check.h"
#include "pool.h"
#include "privdrop.h"
#include "uid.h"
#include "reload.h"
#include "session.h"
#include "tools.h"
#include "xmalloc.h"

#define MAX_POLL 1024

static volatile sig_atomic_t got_term, got_chld, got_hup, got_usr1;
static int sig_pipe[2] = {-1, -1};

static void
usage(FILE *f)
{
	fprintf(f, "usage: codeexecd [-dnv] [-f file] [-W worker] [--warm]\n"
		   "       codeexecd -V | -h\n");
}

static void
on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	switch (sig) {
	case SIGCHLD: got_chld = 1; break;
	case SIGHUP: got_hup = 1; break;
	case SIGUSR1: got_usr1 = 1; break;
	default: got_term = 1;
	}
	(void)!write(sig_pipe[1], &c, 1);
	errno = saved;
}

static void
install_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) == -1)
		fatal("pipe2 for signals");
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Refuse to serve beyond loopback without authentication (seed 000). */
/*
 * The wheelhouse per-session installs read (tool_install_packages.c): a
 * directory, or start-up stops; kernels under other uids need to read and
 * search it, which a warning says when its mode denies others that.
 */
static void
check_wheelhouse(const struct config *cfg)
{
	struct stat st;

	if (cfg->wheelhouse[0] == '\0')
		return;
	if (stat(cfg->wheelhouse, &st) == -1)
		fatalx("wheelhouse %s: %s", cfg->wheelhouse, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		fatalx("wheelhouse %s is not a directory", cfg->wheelhouse);
	if (cfg->kernel_uid_first != 0 && (st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH))
		log_warnx("wheelhouse %s is not readable and searchable by others (mode %03o): "
			  "kernels of kernel_uid_range cannot install from it",
			  cfg->wheelhouse, (unsigned)(st.st_mode & 0777));
}

static void
check_network_boundary(const struct config *cfg)
{
	/* With authentication, every request proves who sends it. */
	if (authority_host_is_loopback(cfg->listen_host) || cfg->auth_mode != AUTH_NONE)
		return;
	if (!cfg->allow_external_network_boundary)
		fatalx("refusing to listen on %s without authentication: codeexecd runs "
		       "arbitrary code for anyone who reaches it. Listen on loopback, or set "
		       "allow_external_network_boundary: true if a trusted boundary (firewall, "
		       "authenticating proxy) protects this address",
		       cfg->listen_host);
	log_warnx("listening on %s with no authentication: everyone who can reach this "
		  "address can run code here (allow_external_network_boundary is true)",
		  cfg->listen_host);
}

/*
 * Kernels never run as root: started as root, the daemon needs `user` (an
 * unprivileged account kernels share with it) or kernel_uid_range (one
 * identity per kernel). Root kernels would own the shared environment and
 * everything else.
 */
static void
check_kernel_identity(const struct config *cfg)
{
	char err[512];
	uid_t uid;
	gid_t gid;

	if (geteuid() != 0 || cfg->kernel_uid_first != 0)
		return;
	if (privdrop_lookup(cfg, &uid, &gid, err, sizeof(err)) == -1)
		fatalx("%s (create it: useradd --system --home-dir %s --shell /usr/sbin/nologin %s)",
		       err, cfg->state_dir, cfg->user);
	if (uid == (uid_t)-1)
		fatalx("started as root with neither user nor kernel_uid_range set in %s: kernels "
		       "would run as root. Set user (user: codeexecd, after useradd --system "
		       "codeexecd) or kernel_uid_range",
		       cfg->file);
	if (uid == 0)
		fatalx("user %s is root: kernels would run as root. Set user to an unprivileged "
		       "account, or set kernel_uid_range",
		       cfg->user);
}

/* Create the state and runtime directories the daemon writes into. */
static void
make_directories(const struct config *cfg)
{
	char err[512];
	char *sessions = xasprintf("%s/sessions", cfg->state_dir);

	/*
	 * Kernels must reach their own directories (each 0700) but not list
	 * the others, whose names would lead a kernel sharing their uid to
	 * their files and sockets: search permission only.
	 */
	if (fs_mkdir_p(sessions, 0711, err, sizeof(err)) == -1 ||
	    fs_mkdir_p(cfg->runtime_dir, 0711, err, sizeof(err)) == -1)
		fatalx("%s", err);
	const char *const unlisted[] = {sessions, cfg->runtime_dir};
	for (size_t i = 0; i < 2; i++) {
		struct stat st;
		if (stat(unlisted[i], &st) == 0 && (st.st_mode & 0777) != 0711 &&
		    st.st_uid == geteuid() && chmod(unlisted[i], 0711) == -1)
			fatal("chmod %s", unlisted[i]);
	}
	free(sessions);
}

/*
 * Remove what an instance that did not stop cleanly (SIGKILL, a crash) left
 * in our directories: session working directories, kernels' runtime
 * directories and, named after those, the kernels' control groups with
 * whatever still runs in them. No session survives a restart, and no other
 * instance shares these directories, so everything there is stale.
 */
static void
remove_leftovers(const struct config *cfg, const struct cgroup_layout *layout)
{
	char *sessions = xasprintf("%s/sessions", cfg->state_dir);
	const char *dirs[] = {sessions, cfg->runtime_dir};
	int removed = 0;

	for (int i = 0; i < 2; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;
		while (d && (e = readdir(d)) != NULL) {
			/* runtime_dir also holds the pid file and the control socket. */
			if (e->d_name[0] == '.' || (i == 1 && strncmp(e->d_name, "k-", 2) != 0))
				continue;
			char *path = xasprintf("%s/%s", dirs[i], e->d_name);
			if (i == 1 && layout && cgroup_remove_named(layout, e->d_name))
				log_info("removed control group %s, left by a previous instance",
					 e->d_name);
			if (fs_remove_tree(path) == -1)
				log_warn("remove %s, left by a previous instance", path);
			else
				log_info("removed %s, left by a previous instance", path);
			removed++;
			free(path);
		}
		if (d)
			closedir(d);
	}
	if (removed)
		log_warnx("the previous instance did not stop cleanly: removed %d directories "
			  "it left", removed);
	free(sessions);
}

/*
 * Find where kernels' groups go: every kernel lives in one, limits or not,
 * so that nothing a session starts outlives it. Say which limits this host
 * cannot enforce (refusing to start if limits.required), refuse limits a
 * kernel could lift, and give the place to the daemon's user (kernels of
 * other uids) or keep it root's (kernels of that user: cgroup_seal). Returns
 * nonzero if kernels get control groups, with the layout in *l.
 */
static int
setup_cgroups(const struct config *cfg, struct cgroup_layout *l)
{
	struct cgroup_limits lim = {(uint64_t)cfg->limit_memory_mb, (uint64_t)cfg->limit_pids,
				    cfg->limit_cpu};
	int limits = lim.memory_mb != 0 || lim.pids != 0 || lim.cpu != 0;
	char why[1024], instance[32];
	uid_t uid;
	gid_t gid;

	/* Never root, the daemon's kernels would own their limit files; as root, not offered yet. */
	if (limits && cfg->kernel_uid_first == 0)
		fatalx("limits.memory_mb, limits.pids and limits.cpu need kernel_uid_range: limits "
		       "are not offered to kernels of the daemon's own uid (a daemon that never was "
		       "root could not keep their control groups from them)");
	snprintf(instance, sizeof(instance), "%d", (int)getpid());
	cgroup_probe(l, instance);
	if (cgroup_check_limits(l, &lim, why, sizeof(why)) == -1) {
		if (cfg->limits_required)
			fatalx("limits.required is true and %s", why);
		log_warnx("kernels run without control-group limits: %s", why);
	}
	int usable = 0;
	for (int c = 0; c < CGROUP_NCTL; c++)
		usable |= l->version[c] != 0;
	if (!usable) {
		log_warnx("kernels run without control groups (%s): a process a kernel detaches "
			  "from itself can outlive its session%s",
			  l->reason[CGROUP_FREEZER] + (l->reason[CGROUP_FREEZER][0] == ';' ? 2 : 0),
			  cfg->kernel_uid_first ? " until its uid is released" : "");
		cgroup_layout_free(l);
		return 0;
	}
	if (privdrop_lookup(cfg, &uid, &gid, why, sizeof(why)) == -1)
		fatalx("%s", why);
	/* Kernels of our user would own what we give it: keep the tree root's then. */
	if (geteuid() == 0 && cfg->kernel_uid_first == 0 && cgroup_seal(l, why, sizeof(why)) == -1)
		fatalx("%s", why);
	if (uid != (uid_t)-1 && geteuid() == 0 && cfg->kernel_uid_first != 0 &&
	    cgroup_give(l, uid, gid, why, sizeof(why)) == -1)
		fatalx("%s", why);
	if (geteuid() != 0 && cfg->kernel_uid_first == 0)
		log_warnx("kernels share the daemon's uid, which owns their control groups (not "
			  "started as root): a kernel can make a group and move a process there, "
			  "outside its own, where it outlives its session; start codeexecd as root "
			  "with user set to keep the groups root's");
	return 1;
}

/*
 * Detach from the terminal: the usual double fork, stdio to /dev/null. The
 * process that started us waits until the daemon serves (daemon_ready) and
 * exits 0, or exits 1 if it died first, so init systems and scripts see
 * the real outcome. Returns the descriptor to signal readiness on.
 */
static int
daemonize(void)
{
	int ready[2];
	char byte;

	if (pipe2(ready, O_CLOEXEC) == -1)
		fatal("pipe2 for start-up readiness");
	pid_t pid = fork();
	if (pid == -1)
		fatal("fork");
	if (pid > 0) {
		close(ready[1]);
		if (read(ready[0], &byte, 1) == 1)
			_exit(0);
		fprintf(stderr, "codeexecd: the daemon failed to start; see the system log\n");
		_exit(1);
	}
	close(ready[0]);
	if (setsid() == -1)
		fatal("setsid");
	pid = fork();
	if (pid == -1)
		fatal("fork");
	if (pid > 0)
		_exit(0);
	if (chdir("/") == -1)
		fatal("chdir /");
	int fd = open("/dev/null", O_RDWR);
	if (fd == -1)
		fatal("open /dev/null");
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
	return ready[1];
}

/* Tell the process that started us that we serve now. */
static void
daemon_ready(int fd)
{
	if (fd == -1)
		return;
	if (write(fd, "1", 1) != 1)
		log_warn("signal readiness to the starting process");
	close(fd);
}

/* Write our pid to `path`. 0, or -1 with errno set. */
static int
pidfile_put(const char *path)
{
	FILE *f = fopen(path, "we");
	if (f == NULL)
		return -1;
	int bad = fprintf(f, "%d\n", (int)getpid()) < 0;
	if (fclose(f) == EOF || bad)
		return -1;
	return 0;
}

static char *
write_pidfile(const struct config *cfg)
{
	char *path = xasprintf("%s/codeexecd.pid", cfg->runtime_dir);
	if (pidfile_put(path) == -1)
		fatal("write pid file %s", path);
	return path;
}

/* Whether start-up made a control socket, which must then stay. */
static int control_wanted;
/* Whether watch_runtime_dir said "degraded" (and so may say it no more). */
static int runtime_degraded;

static void
runtime_dir_degraded(const char *why)
{
	runtime_degraded = 1;
	health_set_degraded(why);
}

/*
 * runtime_dir holds the control socket, the pid file and every new
 * kernel's sockets. If it, the socket or the pid file disappears (a tmpfs
 * cleaned under us, an operator's rm -rf), make them again; until that
 * works, /health says degraded and why. Sessions that run keep their
 * kernels: their sockets are connected already.
 */
static void
watch_runtime_dir(const struct config *cfg, int *control_fd, const char *pidfile)
{
	struct stat st;
	char err[512], why[1024];

	int dir_ok = stat(cfg->runtime_dir, &st) == 0 && S_ISDIR(st.st_mode);
	int sock_ok = !control_wanted || (*control_fd != -1 && control_present());
	if (dir_ok && sock_ok && access(pidfile, F_OK) == 0) {
		if (runtime_degraded) {
			runtime_degraded = 0;
			health_set_degraded(NULL);
		}
		return;
	}
	if (!dir_ok)
		log_warnx("runtime_dir %s has disappeared; making it again", cfg->runtime_dir);
	if (fs_mkdir_p(cfg->runtime_dir, 0711, err, sizeof(err)) == -1) {
		snprintf(why, sizeof(why), "runtime_dir is gone and cannot be made again: %s",
			 err);
		runtime_dir_degraded(why);
		return;
	}
	if (stat(cfg->runtime_dir, &st) == -1 || !S_ISDIR(st.st_mode)) {
		snprintf(why, sizeof(why), "runtime_dir %s is not a directory: no new kernel "
			 "can start and the control socket is gone", cfg->runtime_dir);
		runtime_dir_degraded(why);
		return;
	}
	if (!dir_ok) {
		pool_lock();
		pool_runtime_renewed();
		pool_unlock();
	}
	if (!sock_ok) {
		if (*control_fd != -1)
			close(*control_fd);
		*control_fd = control_open(cfg);
		if (*control_fd == -1) {
			snprintf(why, sizeof(why), "the control socket in runtime_dir %s cannot "
				 "be made again (see the log)", cfg->runtime_dir);
			runtime_dir_degraded(why);
			return;
		}
		log_info("control socket in %s made again", cfg->runtime_dir);
	}
	if (access(pidfile, F_OK) == -1 && pidfile_put(pidfile) == -1) {
		snprintf(why, sizeof(why), "cannot write the pid file %s again: %s", pidfile,
			 strerror(errno));
		runtime_dir_degraded(why);
		return;
	}
	if (runtime_degraded) {
		runtime_degraded = 0;
		health_set_degraded(NULL);
	}
}

/* SIGUSR1: one status line for the daemon, one per worker. */
static void
log_status(void)
{
	pool_lock();
	struct json_object *st = control_status();
	pool_unlock();
	struct json_object *workers = json_object_object_get(st, "workers");
	log_info("status: %d sessions, %d idle kernels, %zu workers, up %lld s",
		 json_object_get_int(json_object_object_get(st, "sessions")),
		 json_object_get_int(json_object_object_get(st, "idle_kernels")),
		 json_object_array_length(workers),
		 (long long)json_object_get_int64(json_object_object_get(st, "uptime_s")));
	for (size_t i = 0; i < json_object_array_length(workers); i++)
		log_info("status: worker %s",
			 json_object_to_json_string_ext(json_object_array_get_idx(workers, i),
							JSON_C_TO_STRING_PLAIN));
	json_object_put(st);
}

/* Act on the flags the signal handlers set, except termination. */
static void
handle_signal_flags(struct config *cfg)
{
	char drain[64];

	while (read(sig_pipe[0], drain, sizeof(drain)) > 0)
		;
	if (got_hup) {
		got_hup = 0;
		reload_config(cfg);
	}
	if (got_usr1) {
		got_usr1 = 0;
		log_status();
	}
}

/* One turn of the loop: wait up to a second (less when a deferred refill
 * falls due), then serve what is ready. */
static void
loop_once(struct config *cfg, int *control_fd, const char *pidfile)
{
	static struct pollfd pfd[MAX_POLL];
	static time_t last_expiry;

	pfd[0] = (struct pollfd){.fd = sig_pipe[0], .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = pool_wake_fd(), .events = POLLIN};
	pfd[2] = (struct pollfd){.fd = *control_fd, .events = POLLIN};
	pool_lock();
	int n = pool_pollfds(pfd + 3, MAX_POLL - 3);
	int refill_ms = pool_refill_due_ms();
	pool_unlock();
	int wait_ms = refill_ms >= 0 && refill_ms < 1000 ? refill_ms : 1000;
	if (poll(pfd, (nfds_t)n + 3, wait_ms) == -1 && errno != EINTR)
		fatal("poll");
	if (pfd[0].revents)
		handle_signal_flags(cfg);
	if (pfd[2].revents)
		control_accept(*control_fd);
	/* This thread alone reloads the configuration: it reads it unlocked. */
	int second = time(NULL) != last_expiry;
	pool_lock();
	pool_handle(pfd + 3, n);
	if (got_chld) {
		got_chld = 0;
		pool_reap();
	}
	if (second)
		session_expire(cfg->session_idle_timeout);
	pool_tick();
	pool_unlock();
	pool_refill();
	if (second) {
		last_expiry = time(NULL);
		job_expire(cfg->job_retention_s);
		batch_expire(cfg->job_retention_s);
		if (pidfile)
			watch_runtime_dir(cfg, control_fd, pidfile);
	}
}

/* Stop: refuse new requests, let running executions finish (bounded), end all. */
static void
shut_down(struct config *cfg, int *control_fd)
{
	time_t deadline = time(NULL) + cfg->shutdown_grace_s;

	log_info("shutting down: refusing new requests, waiting up to %d s for running "
		 "executions", cfg->shutdown_grace_s);
	http_drain();
	for (;;) {
		pool_lock();
		int busy = session_any_busy();
		pool_unlock();
		if (!busy || time(NULL) >= deadline)
			break;
		loop_once(cfg, control_fd, NULL);
	}
	pool_lock();
	session_close_all();
	pool_unlock();
	pool_stop();
	http_stop();
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{"warm", no_argument, NULL, 'w'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *conffile = CONFIG_PATH;
	const char *worker = WORKER_PATH;
	int foreground = 0, check_only = 0, warm = 0, verbose = 0, ch;
	struct config cfg;
	char err[1024];

	while ((ch = getopt_long(argc, argv, "df:hnvVW:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd': foreground = 1; break;
		case 'f': conffile = optarg; break;
		case 'n': check_only = 1; break;
		case 'v': verbose++; break;
		case 'W': worker = optarg; break;
		case 'w': warm = 1; break;
		case 'V': printf("codeexecd %s\n", PACKAGE_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	log_init("codeexecd", 1, LOG_DAEMON);
	memtrim_init(); /* before any thread: see memtrim.h */
	if (verbose)
		log_set_level(LOG_DEBUG);
	/* Detached, we run in /: SIGHUP must find the same file. */
	char *abs = realpath(conffile, NULL);
	if (abs)
		conffile = abs;
	if (config_load(conffile, &cfg, err, sizeof(err)) == -1) {
		fprintf(stderr, "codeexecd: %s\n", err);
		free(abs);
		return 1;
	}
	if (check_only) {
		/* The tokens file too: its mode is checked when it is read. */
		if (cfg.auth_mode == AUTH_TOKENS &&
		    auth_tokens_check(cfg.auth_tokens_file, err, sizeof(err)) == -1) {
			fprintf(stderr, "codeexecd: %s\n", err);
			config_free(&cfg);
			free(abs);
			return 1;
		}
		fprintf(stderr, "codeexecd: configuration %s OK\n", conffile);
		config_free(&cfg);
		free(abs);
		return 0;
	}
	check_network_boundary(&cfg);
	if (!warm) /* --warm builds the environment only; no kernel runs */
		check_kernel_identity(&cfg);
	prctl(PR_SET_DUMPABLE, 0);
	make_directories(&cfg);
	if (envbuild_ensure(&cfg, warm, err, sizeof(err)) == -1)
		fatalx("environment: %s", err);
	if (assets_provision(&cfg, warm, err, sizeof(err)) == -1)
		fatalx("assets: %s", err);
	/* Before any kernel starts: a backend kernels cannot load is no use. */
	if (!warm && mpl_check(&cfg, err, sizeof(err)) == -1)
		fatalx("%s", err);
	if (!warm)
		check_wheelhouse(&cfg);
	if (warm) {
		log_info("environment and assets ready; --warm done");
		config_free(&cfg);
		free(abs);
		return 0;
	}
	int ready_fd = -1;
	if (!foreground) {
		ready_fd = daemonize();
		log_init("codeexecd", 0, log_facility_from_name(cfg.log_facility));
	}
	/* After the fork: the v1 parents are named after the daemon's own pid. */
	struct cgroup_layout layout;
	int use_cgroups = setup_cgroups(&cfg, &layout);
	remove_leftovers(&cfg, use_cgroups ? &layout : NULL);
	/* As root still, so that kernels sharing our user cannot enter its directory. */
	int control_fd = control_open(&cfg);
	control_wanted = control_fd != -1;
	/* Before any thread exists: capabilities are per thread. */
	if (privdrop_apply(&cfg, use_cgroups, err, sizeof(err)) == -1)
		fatalx("%s", err);
	/* Workers start as the user we now are; the build tree may be closed to it. */
	if (access(worker, X_OK) == -1)
		fatal("worker %s cannot be executed by the daemon's user (install it with make "
		      "install, or keep the build tree where that user can reach it)",
		      worker);
	install_signals();
	pool_init(&cfg, use_cgroups ? &layout : NULL, worker, verbose);
	session_on_close(batch_session_closed);
	mcp_init(&cfg);
	for (size_t i = 0; i < tools_count(); i++) {
		char name[128];
		tools_name(i, &cfg, name, sizeof(name));
		metrics_tool_name((int)i, name);
	}
	int port = http_start(&cfg, err, sizeof(err));
	if (port == -1)
		fatalx("%s", err);
	log_info("listening on %s:%d (MCP at /mcp)", cfg.listen_host, port);
	pool_start();
	char *pidfile = write_pidfile(&cfg);
	daemon_ready(ready_fd);

	while (!got_term)
		loop_once(&cfg, &control_fd, pidfile);
	shut_down(&cfg, &control_fd);
	control_close(control_fd);
	unlink(pidfile);
	free(pidfile);
	if (use_cgroups) {
		cgroup_layout_remove(&layout); /* what no worker removed */
		cgroup_layout_free(&layout);
	}
	uid_finish(); /* every process and file of the kernels' uids */
	config_free(&cfg);
	free(abs);
	log_info("stopped");
	return 0;
}
