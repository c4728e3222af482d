/*
 * main.c - codeexecd: the supervisor's entry point.
 *
 * Start-up in a fixed order: configuration, safety checks, directories,
 * the environment, detaching, control groups, the control socket; then the
 * split (doc/README.privsep): the unprivileged front (front.h) is forked,
 * and this process stays the privileged parent (parent.h).
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assets.h"
#include "auth.h"
#include "auth_jwks.h"
#include "authority.h"
#include "cgroup.h"
#include "config.h"
#include "control_access.h"
#include "control_socket.h"
#include "envbuild.h"
#include "fsutil.h"
#include "kernelspec.h"
#include "landlock.h"
#include "listen_probe.h"
#include "log.h"
#include "memtrim.h"
#include "mpl_check.h"
#include "parent.h"
#include "egress.h"
#include "egress_proxy.h"
#include "relay.h"
#include "runtime_watch.h"
#include "sidecar.h"
#include "front.h"
#include "toolreg_check.h"
#include "privdrop.h"
#include "publish.h"
#include "secrets.h"
#include "toolreg_azure.h"
#include "uid.h"
#include "xmalloc.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: codeexecd [-dnv] [-f file] [-W worker] [--warm]\n"
		   "       codeexecd -V | -h\n");
}

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

/*
 * The front binds the port, holding no capability (doc/README.privsep):
 * started as root, a port below 1024 would fail in it, every time.
 */
static void
check_listen_port(const struct config *cfg)
{
	if (geteuid() == 0 && cfg->listen_port > 0 && cfg->listen_port < 1024)
		fatalx("listen port %d is below 1024: the unprivileged front that binds it "
		       "holds no capability. Listen on a port from 1024 up and put a proxy in "
		       "front of it",
		       cfg->listen_port);
}

/* Refuse to serve beyond loopback without authentication (seed 000). */
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

/*
 * The front's identity: `user`; started as root without one (kernels then
 * have kernel_uid_range), nobody; not started as root, the one we have.
 */
static void
front_identity(const struct config *cfg, uid_t *uid, gid_t *gid)
{
	char err[512];

	*uid = (uid_t)-1;
	*gid = (gid_t)-1;
	if (geteuid() != 0)
		return;
	if (privdrop_lookup(cfg, uid, gid, err, sizeof(err)) == -1)
		fatalx("%s", err);
	if (*uid != (uid_t)-1)
		return;
	struct passwd *pw = getpwnam("nobody");
	if (pw == NULL)
		fatalx("started as root without user set, and there is no account nobody for "
		       "the front to run as: set user");
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
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
 * The front's own directory for the session journal (session_journal.h):
 * it may be the only place in state_dir the front can write (started as
 * root, the front is `user` or nobody; the parent may stay root).
 */
static void
make_journal_dir(const struct config *cfg, uid_t uid, gid_t gid)
{
	char err[512];
	char *dir = xasprintf("%s/journal", cfg->state_dir);
	struct stat st;

	if (fs_mkdir_p(dir, 0700, err, sizeof(err)) == -1)
		fatalx("%s", err);
	if (lstat(dir, &st) == -1 || !S_ISDIR(st.st_mode))
		fatalx("%s is not a directory", dir);
	if (uid != (uid_t)-1 && (st.st_uid != uid || st.st_gid != gid) &&
	    chown(dir, uid, gid) == -1)
		fatal("chown %s", dir);
	if ((st.st_mode & 0777) != 0700 && chmod(dir, 0700) == -1)
		fatal("chmod %s", dir);
	free(dir);
}

/*
 * Remove what an instance that did not stop cleanly (SIGKILL, a crash) left
 * in our directories: session working directories, kernels' runtime
 * directories and, named after those, the kernels' control groups with
 * whatever still runs in them. No other instance shares these directories,
 * so everything there is stale, except, with persist_sessions, the session
 * directories: the journal's sessions live on in them (dirs_left.h).
 */
static void
remove_leftovers(const struct config *cfg, const struct cgroup_layout *layout)
{
	char *sessions = xasprintf("%s/sessions", cfg->state_dir);
	const char *dirs[] = {sessions, cfg->runtime_dir};
	int removed = 0;

	for (int i = cfg->persist_sessions ? 1 : 0; i < 2; i++) {
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

/* listen and metrics_listen, as http_start listens on them. */
static int
check_listen(const struct config *cfg, int check_only, char *why, size_t why_len)
{
	char probe[ERR_LEN];

	if (listen_probe(cfg->listen_host, cfg->listen_port, check_only, why, why_len) == -1)
		return -1;
	if (cfg->metrics_listen_host != NULL &&
	    listen_probe(cfg->metrics_listen_host, cfg->metrics_listen_port, check_only, probe,
			 sizeof(probe)) == -1)
		return err_set(why, why_len, "metrics_listen: %s", probe);
	return 0;
}

/*
 * What the front checks as it starts, checked here before the fork and by
 * codeexecd -n in the front's own words, so that a configuration that
 * cannot serve stops start-up once (status 1) instead of a front that dies
 * and is restarted until the parent gives up: the secret files, opened
 * here as root (secrets.h) and read as the front reads them, the
 * publishers, the search key, auth.ca_file, and listen and metrics_listen. With
 * `check_only`, an address in use passes (the running daemon holds it).
 */
static int
preflight_check(const struct config *cfg, int check_only, char *why, size_t why_len)
{
	uid_t uid;
	gid_t gid;

	if (privdrop_lookup(cfg, &uid, &gid, why, why_len) == -1 ||
	    secrets_open(cfg, uid, why, why_len) == -1)
		return -1;
	if (cfg->auth_mode == AUTH_TOKENS &&
	    auth_tokens_check(cfg->auth_tokens_file, why, why_len) == -1)
		return -1;
	if (cfg->auth_mode == AUTH_OAUTH && cfg->auth_ca_file[0] &&
	    jwks_ca_check(cfg->auth_ca_file, uid, gid, why, why_len) == -1)
		return -1;
	if (publishers_check(cfg, why, why_len) == -1 ||
	    toolreg_azure_check(cfg, why, why_len) == -1)
		return -1;
	return check_listen(cfg, check_only, why, why_len);
}

/*
 * Make each local publisher's missing base_dir, 0750 and owned by `user`
 * (missing parents 0755, root's), so that the front, which runs as `user`,
 * can write there from the first send.
 */
static int
preflight_make_dirs(const struct config *cfg, char *why, size_t why_len)
{
	uid_t uid;
	gid_t gid;
	struct stat st;

	if (privdrop_lookup(cfg, &uid, &gid, why, why_len) == -1)
		return -1;
	/* Without user the front keeps no fixed uid to own it: it makes its own, as before. */
	if (uid == (uid_t)-1)
		return 0;
	for (size_t i = 0; i < cfg->publishers.n; i++) {
		const struct config_publisher *p = config_publisher_at(cfg, i);
		if (strcmp(p->type, "local") != 0 || stat(p->base_dir, &st) == 0)
			continue;
		if (fs_mkdir_p(p->base_dir, 0750, why, why_len) == -1)
			return -1;
		if (geteuid() == 0 && chown(p->base_dir, uid, gid) == -1)
			return err_set(why, why_len, "publisher %s: chown %s: %s", p->name,
				       p->base_dir, strerror(errno));
		log_info("publisher %s: made base_dir %s", p->name, p->base_dir);
	}
	return 0;
}

/*
 * Detach from the terminal: the usual double fork, stdio to /dev/null. The
 * process that started us waits until the daemon serves (the front says so) and
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

	/* A sidecar's Unix socket (relay.h): started by the parent, never by hand. */
	if (argc > 1 && strcmp(argv[1], RELAY_OPTION) == 0)
		return relay_main(argc, argv);
	/* The egress proxy (egress_proxy.h): likewise. */
	if (argc > 1 && strcmp(argv[1], EGRESS_PROXY_OPTION) == 0)
		return egress_proxy_main(argc, argv);
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
	cfg.landlock_abi = landlock_resolve(cfg.kernel_landlock, err, sizeof(err));
	if (cfg.landlock_abi == -1 && check_only) {
		fprintf(stderr, "codeexecd: %s\n", err);
		config_free(&cfg);
		free(abs);
		return 1;
	}
	if (cfg.landlock_abi == -1)
		fatalx("%s", err);
	landlock_state_text(cfg.kernel_landlock, cfg.landlock_abi, err, sizeof(err));
	if (check_only)
		fprintf(stderr, "codeexecd: %s\n", err);
	else
		log_info("%s", err);
	if (check_only) {
		/* What start-up refuses before the fork, in the same words. */
		if (preflight_check(&cfg, 1, err, sizeof(err)) == -1) {
			fprintf(stderr, "codeexecd: %s\n", err);
			config_free(&cfg);
			free(abs);
			return 1;
		}
		if (toolreg_check_dir(&cfg, err, sizeof(err)) == -1)
			fprintf(stderr, "codeexecd: warning: %s\n", err);
		int rc = toolreg_check_modules(&cfg, err, sizeof(err));
		if (rc != 0)
			fprintf(stderr, "codeexecd: %s\n", err);
		if (rc == -1) {
			config_free(&cfg);
			free(abs);
			return 1;
		}
		if (cfg.kernel_after_build)
			fprintf(stderr, "codeexecd: kernel: no kernelspec %s yet: looked for again "
				"once additional_commands built the environment\n", cfg.kernel);
		fprintf(stderr, "codeexecd: configuration %s OK\n", conffile);
		config_free(&cfg);
		free(abs);
		return 0;
	}
	check_network_boundary(&cfg);
	check_listen_port(&cfg);
	if (!warm) /* --warm builds the environment only; no kernel runs */
		check_kernel_identity(&cfg);
	/* As root, before the fork: what the front would die of is said once, here. */
	if (!warm && preflight_check(&cfg, 0, err, sizeof(err)) == -1)
		fatalx("%s", err);
	prctl(PR_SET_DUMPABLE, 0);
	make_directories(&cfg);
	if (!warm && preflight_make_dirs(&cfg, err, sizeof(err)) == -1)
		fatalx("%s", err);
	if (envbuild_ensure(&cfg, warm, err, sizeof(err)) == -1)
		fatalx("environment: %s", err);
	if (!warm && kernelspec_settle(&cfg, err, sizeof(err)) == -1)
		fatalx("%s", err);
	if (assets_provision(&cfg, warm, err, sizeof(err)) == -1)
		fatalx("assets: %s", err);
	/* Before any kernel starts: a backend kernels cannot load is no use. */
	if (!warm && mpl_check(&cfg, err, sizeof(err)) == -1)
		fatalx("%s", err);
	if (!warm)
		check_wheelhouse(&cfg);
	/* Issue 33, stage 2: the key and the template's protocol, not the template. */
	if (!warm && cfg.pool_start == POOL_START_TEMPLATE)
		log_warnx("pool.start: template is not built in this version: kernels start by exec");
	if (!warm && toolreg_check_dir(&cfg, err, sizeof(err)) == -1)
		log_warnx("%s", err);
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
	struct control_access control;
	struct front_args fa = {.cfg = &cfg, .control = &control};
	struct parent_args pa = {
		.cfg = &cfg,
		.launcher = {&cfg, use_cgroups ? &layout : NULL, worker, verbose},
		.cgroups_owned = use_cgroups ? &layout : NULL,
		/* As root still, so that kernels sharing our user cannot enter its directory. */
		.control_fd = control_open(&cfg, &control),
		.control = &control,
		.front = front_main,
		.front_arg = &fa,
		.watch = runtime_watch,
	};
	front_identity(&cfg, &pa.front_uid, &pa.front_gid);
	make_journal_dir(&cfg, pa.front_uid, pa.front_gid);
	/* The front confines itself to it; the parent runs preprocess_command as it. */
	fa.uid = pa.front_uid;
	fa.gid = pa.front_gid;
	/* After the environment and assets, before the pool (which the front
	 * starts), as the front's unprivileged user; their ports are fixed
	 * here, before the front copies the configuration. */
	if (sidecars_start(&cfg, use_cgroups ? &layout : NULL, pa.front_uid, pa.front_gid,
			   foreground, err, sizeof(err)) == -1)
		fatalx("%s", err);
	/* Like the sidecars' relays, as their user (egress.h). */
	if (egress_start(&cfg, pa.front_uid, foreground, err, sizeof(err)) == -1)
		fatalx("%s", err);
	/* Before the front says the daemon serves: scripts read it then. */
	runtime_pidfile_write(&cfg);
	/* Before privdrop_apply (the front empties its bounding set with our
	 * CAP_SETPCAP) and before any thread exists (capabilities are per thread). */
	parent_fork_front(&pa, ready_fd);
	if (privdrop_apply(&cfg, use_cgroups, err, sizeof(err)) == -1)
		fatalx("%s", err);
	/* Workers start as the user we now are; the build tree may be closed to it. */
	if (access(worker, X_OK) == -1)
		fatal("worker %s cannot be executed by the daemon's user (install it with make "
		      "install, or keep the build tree where that user can reach it)",
		      worker);
	uid_init(&cfg, worker);
	int rc = parent_run(&pa);
	control_close(&control, pa.control_fd);
	runtime_pidfile_remove();
	config_free(&cfg);
	free(abs);
	return rc;
}
