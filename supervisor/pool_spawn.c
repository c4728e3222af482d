/* pool_spawn.c - see pool_spawn.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "clock.h"
#include "config.h"
#include "ipc_msg.h"
#include "kernel_env.h"
#include "log.h"
#include "pool_send.h"
#include "pool_spawn.h"
#include "pool_state.h"
#include "rand.h"
#include "start_failure.h"
#include "uid.h"
#include "xmalloc.h"

/* Seconds a worker gets to start its kernel before it is killed. */
#define STARTUP_TIMEOUT_S 60
/* How long after a worker is taken its replacement starts (pool_worker_taken). */
#define REFILL_DEFER_S 0.25
/* The demand that raises the warm target: takes in the last TAKE_WINDOW_S. */
#define TAKE_WINDOW_S 10.0
#define TAKE_HISTORY 256
/* Idle workers beyond the target are retired after this long without a take. */
#define TRIM_AFTER_S 30.0

/* When the last TAKE_HISTORY workers were taken (monotonic), a ring. Lock held. */
static double take_times[TAKE_HISTORY];
static unsigned take_next;

static const char *worker_path;
static int worker_verbose;

void
pool_spawn_init(const char *path, int verbose)
{
	worker_path = path;
	worker_verbose = verbose;
}

/*
 * The session's package directory, there from the start: a sys.path entry
 * that did not exist at the first import stays skipped (importlib caches
 * the miss), so what %pip install put there later would not import.
 * Best effort: an install makes it too.
 */
static void
make_pkgs_dir(const char *workdir, uid_t uid)
{
	char *pkgs = kernel_env_pkgs_dir(workdir);
	if (mkdir(pkgs, 0700) == -1 || (uid != 0 && chown(pkgs, uid, uid) == -1))
		log_warn("mkdir %s for kernel identity %d", pkgs, (int)uid);
	free(pkgs);
}

/* Make a fresh, private working directory for a future session, owned by
 * the kernel's identity when it has one. Caller owns the returned path. */
static char *
make_workdir(uid_t uid)
{
	char id[17];
	rand_hex(id, 8);
	char *dir = xasprintf("%s/sessions/%s", pool.cfg->state_dir, id);
	if (mkdir(dir, 0700) == -1) {
		log_warn("mkdir %s", dir);
		free(dir);
		return NULL;
	}
	if (uid != 0 && chown(dir, uid, uid) == -1) {
		log_warn("chown %s to kernel identity %d", dir, (int)uid);
		rmdir(dir);
		free(dir);
		return NULL;
	}
	make_pkgs_dir(dir, uid);
	return dir;
}

/* 1 if kernels' groups have controller c. */
static int
usable(enum cgroup_ctl c)
{
	return pool.cgroups && pool.cgroups->version[c] != 0;
}

/* The strings of a JSON array (argv) as a vector. Caller frees. */
static char **
strings_of(struct json_object *a)
{
	size_t n = json_object_array_length(a);
	char **v = xcalloc(n + 1, sizeof(*v));

	for (size_t i = 0; i < n; i++)
		v[i] = xstrdup(json_object_get_string(json_object_array_get_idx(a, i)));
	return v;
}

/* Send START to worker `w`: its kernel command, environment, places and sandbox. */
static void
send_start(struct worker *w)
{
	struct json_object *argv = kernel_env_argv(pool.cfg);
	struct json_object *env = kernel_env_build(pool.cfg);
	char *warm = kernel_env_warm_code(pool.cfg);
	/* A limit whose controller is unusable here (and not required) goes. */
	struct ipc_limits lim = {
		.memory_mb = usable(CGROUP_MEMORY) ? (uint64_t)pool.cfg->limit_memory_mb : 0,
		.pids = usable(CGROUP_PIDS) ? (uint64_t)pool.cfg->limit_pids : 0,
		.cpu = usable(CGROUP_CPU) ? pool.cfg->limit_cpu : 0,
		.nofile = (uint64_t)pool.cfg->limit_nofile,
		.fsize_mb = (uint64_t)pool.cfg->limit_fsize_mb,
	};
	struct ipc_cgroup cg;
	struct ipc_cgroup_ctl ctl[CGROUP_NCTL];

	kernel_env_session(pool.cfg, env, w->workdir);
	struct ipc_start st = {
		.argv = strings_of(argv),
		.env = kernel_env_strings(env),
		.cwd = w->workdir,
		.runtime_dir = w->rundir,
		.allow_mime = kernel_env_mime(pool.cfg, NULL),
		.warm_code = warm,
		.interrupt_mode = IPC_INTERRUPT_SIGNAL,
		.startup_timeout_s = STARTUP_TIMEOUT_S,
		.network_mode = pool.cfg->kernel_network_mode,
		.uid = (uint32_t)w->uid,
		.gid = (uint32_t)w->uid,
		.limits = &lim,
	};
	if (pool.cgroups) {
		ipc_cgroup_from_layout(&cg, ctl, pool.cgroups, strrchr(w->rundir, '/') + 1);
		st.cgroup = &cg;
	}
	if (worker_send(w, IPC_START, 0, &st) == -1)
		log_warn("send START to worker %d", (int)w->pid);
	strv_free(st.argv);
	strv_free(st.env);
	strv_free(st.allow_mime);
	free(warm);
	json_object_put(argv);
	json_object_put(env);
}

/*
 * fork+exec one worker with its socket as fd 3, for kernel identity `uid`
 * (0: the daemon's). Runs without the lock: it makes a directory and waits
 * for the exec. The worker is not in the list yet (worker_adopt). NULL on
 * failure (logged); the caller still owns `uid`.
 */
static struct worker *
spawn_worker(uid_t uid)
{
	int sv[2];
	posix_spawn_file_actions_t fa;
	pid_t pid;
	char *argv[] = {(char *)"codeexec-worker", worker_verbose ? (char *)"-v" : NULL, NULL};
	char *envp[] = {(char *)"PATH=/usr/bin:/bin", NULL};

	char *workdir = make_workdir(uid);
	if (workdir == NULL)
		return NULL;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("socketpair for a worker");
		rmdir(workdir);
		free(workdir);
		return NULL;
	}
	if (sv[1] == IPC_WORKER_FD) {
		/* dup2 onto itself would keep close-on-exec set. */
		int moved = fcntl(sv[1], F_DUPFD_CLOEXEC, IPC_WORKER_FD + 1);
		close(sv[1]);
		sv[1] = moved;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, sv[1], IPC_WORKER_FD);
	int rc = posix_spawn(&pid, worker_path, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(sv[1]);
	if (rc != 0) {
		errno = rc;
		log_warn("spawn worker %s", worker_path);
		close(sv[0]);
		rmdir(workdir);
		free(workdir);
		return NULL;
	}

	struct worker *w = xcalloc(1, sizeof(*w));
	char id[17];
	w->pid = pid;
	w->fd = sv[0];
	w->kernel_pidfd = -1;
	w->state = WORKER_STARTING;
	w->workdir = workdir;
	w->uid = uid;
	rand_hex(id, 8);
	w->rundir = xasprintf("%s/k-%s", pool.cfg->runtime_dir, id);
	ipc_reader_init(&w->reader, w->fd);
	buf_init(&w->out);
	return w;
}

/* Put a freshly spawned worker in the list and send it START. Lock held. */
static void
worker_adopt(struct worker *w)
{
	w->next = pool.workers;
	pool.workers = w;
	worker_counted(w);

	send_start(w);
	log_debug("worker %d started for %s", (int)w->pid, w->workdir);
}

/*
 * pool.max_starting, or three per online CPU when it is 0: a start is not
 * all CPU (process start, imports from disk, the handshake), and with one
 * per CPU a burst of 64 sessions waited longer for its last kernel than
 * with three (bench/README.md, the scale runs).
 */
static int
max_starting(void)
{
	long cpus;

	if (pool.cfg->pool_max_starting > 0)
		return pool.cfg->pool_max_starting;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus > 0 ? 3 * (int)cpus : 3;
}

/*
 * How many idle kernels to keep: pool.warm, raised by recent demand up to
 * pool.warm_max. A kernel takes about a second to start, so twice the
 * sessions per second that took one over the last TAKE_WINDOW_S covers
 * the next second's arrivals with room to spare.
 */
static int
warm_target(void)
{
	int floor = pool.cfg->pool_warm, ceiling = pool.cfg->pool_warm_max;
	double now = clock_mono();
	int recent = 0;

	if (ceiling <= floor)
		return floor;
	for (unsigned i = 0; i < TAKE_HISTORY; i++)
		recent += take_times[i] > 0 && now - take_times[i] < TAKE_WINDOW_S;
	int extra = (int)((2.0 * recent + TAKE_WINDOW_S - 1) / TAKE_WINDOW_S);
	return floor + extra < ceiling ? floor + extra : ceiling;
}

/* Whether another worker should start now, taking its kernel identity
 * into *uid if so. Lock held. */
static int
wants_worker(uid_t *uid)
{
	int want = warm_target() + pool.takers;
	int limit = pool.cfg->pool_max_sessions + want;

	*uid = 0;
	if (pool.stopping || time(NULL) < pool.backoff_until || pool_spare_count() >= want ||
	    pool_live_count() >= limit)
		return 0;
	if (pool.takers == 0 && clock_mono() < pool.refill_at)
		return 0;
	/* A burst of sessions must not start every kernel at once: each start
	 * is most of a second of CPU, and all would be late. */
	if (pool_starting_count() >= max_starting())
		return 0;
	if (pool.cfg->kernel_uid_first && (*uid = uid_take()) == 0) {
		log_warnx("every identity of kernel_uid_range is in use or not swept yet; "
			  "no new kernel");
		return 0;
	}
	return 1;
}

void
pool_refill(void)
{
	uid_t uid;

	for (;;) {
		pool_lock();
		int go = wants_worker(&uid);
		unsigned generation = pool.generation;
		pool_unlock();
		if (!go)
			return;
		struct worker *w = spawn_worker(uid);
		pool_lock();
		if (w) {
			w->generation = generation;
			worker_adopt(w);
		} else {
			uid_release(uid, NULL);
		}
		pool_unlock();
		if (w == NULL)
			return;
	}
}

void
pool_worker_taken(void)
{
	double now = clock_mono();

	pool.refill_at = now + REFILL_DEFER_S;
	take_times[take_next++ % TAKE_HISTORY] = now;
}

void
pool_trim(void)
{
	static double last_trim;
	double last = take_times[(take_next + TAKE_HISTORY - 1) % TAKE_HISTORY];
	double now = clock_mono();

	/* One a second: a pool shrinks gently, and a new burst stops it. */
	if (pool.stopping || pool_idle_count() <= warm_target() || now - last < TRIM_AFTER_S ||
	    now - last_trim < 1.0)
		return;
	last_trim = now;
	for (struct worker *w = pool.workers; w; w = w->next) {
		if (w->state != WORKER_IDLE || w->owned)
			continue;
		log_info("worker %d: idle beyond the warm target of %d; retiring it", (int)w->pid,
			 warm_target());
		if (worker_send(w, IPC_SHUTDOWN, 0, NULL) == -1)
			log_warn("send SHUTDOWN to worker %d", (int)w->pid);
		worker_set_state(w, WORKER_CLOSING);
		return;
	}
}

int
pool_refill_due_ms(void)
{
	double left = pool.refill_at - clock_mono();

	return left > 0 ? (int)(left * 1000) + 1 : -1;
}

void
pool_runtime_renewed(void)
{
	pool.generation++;
	pool.early_deaths = 0;
	pool.backoff_until = 0;
	start_failure_set(NULL);
	pool_wake();
}
