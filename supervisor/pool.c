/* pool.c - see pool.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cgroup.h"
#include "config.h"
#include "fsutil.h"
#include "ipc_msg.h"
#include "kernel_env.h"
#include "kernelpid.h"
#include "log.h"
#include "pool.h"
#include "pool_exec.h"
#include "rand.h"
#include "remover.h"
#include "result.h"
#include "start_failure.h"
#include "uid.h"
#include "xmalloc.h"

/* Seconds a worker gets to start its kernel before it is killed. */
#define STARTUP_TIMEOUT_S 60
/* After this many workers in a row die before READY, refills back off. */
#define EARLY_DEATHS_BEFORE_BACKOFF 3
#define BACKOFF_MAX_S 60
/* A worker that leaves queued bytes unread this long is stopped or hung. */
#define WORKER_UNREAD_S 10

/* pool_lock: the workers, the session table, every call (see pool.h). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static struct worker *workers;
/* Written under the lock, read without it by /health. */
static atomic_int idle_workers;
static atomic_int ever_ready;
static int wake_pipe[2] = {-1, -1};

static const struct config *cfg;
static const struct cgroup_layout *cgroups; /* NULL: no control groups */
static const char *worker_path;
static int worker_verbose;
static int early_deaths;
static time_t backoff_until;
static int stopping;
static int takers; /* threads waiting in pool_take */

void
pool_lock(void)
{
	pthread_mutex_lock(&lock);
}

pthread_mutex_t *
pool_mutex(void)
{
	return &lock;
}

void
pool_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

void
pool_init(const struct config *c, const struct cgroup_layout *layout, const char *path,
	  int verbose)
{
	cfg = c;
	cgroups = layout;
	uid_init(c, path);
	worker_path = path;
	worker_verbose = verbose;
	pool_exec_init(c);
	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) == -1)
		fatal("pipe2 for the pool's wake pipe");
}

int
pool_wake_fd(void)
{
	return wake_pipe[0];
}

void
pool_wake(void)
{
	char c = 1;
	/* A full pipe already means "wake up"; nothing to do on EAGAIN. */
	if (write(wake_pipe[1], &c, 1) == -1 && errno != EAGAIN)
		log_warn("write to the pool's wake pipe");
}

/* Every change of a worker's state goes here, so that /health's count of
 * idle workers needs no lock. */
static void
worker_set_state(struct worker *w, enum worker_state st)
{
	if (w->state == WORKER_IDLE && st != WORKER_IDLE)
		atomic_fetch_sub(&idle_workers, 1);
	else if (w->state != WORKER_IDLE && st == WORKER_IDLE)
		atomic_fetch_add(&idle_workers, 1);
	w->state = st;
}

/* Forget what is queued for `w`: written, or never to be read. */
static void
worker_drop_queue(struct worker *w)
{
	/* Keep a small buffer for the next frame; give back a large one. */
	if (w->out.cap > 65536) {
		buf_free(&w->out);
		buf_init(&w->out);
	}
	w->out.len = 0;
	w->out_off = 0;
}

/* Write what is queued for `w` as far as its socket takes it now. */
static void
worker_flush(struct worker *w)
{
	while (w->fd != -1 && w->out_off < w->out.len) {
		ssize_t n = send(w->fd, w->out.data + w->out_off, w->out.len - w->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			w->out_off += (size_t)n;
			w->out_since = clock_mono();
		} else if (n == -1 && errno == EINTR) {
			continue;
		} else if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			return;
		} else {
			/* Gone: its exit status, via SIGCHLD, says how. */
			log_debug("write to worker %d: %s", (int)w->pid, strerror(errno));
			worker_drop_queue(w);
		}
	}
	if (w->out_off == w->out.len)
		worker_drop_queue(w);
}

/*
 * A frame was just appended to w->out, which held `before` bytes: write
 * what the socket takes at once; the main loop writes the rest when poll()
 * says it may. Every message to a worker goes through here (encode it into
 * w->out, then call this), so that nothing ever blocks on a worker.
 */
static void
worker_queued(struct worker *w, size_t before)
{
	if (w->out_off == before)
		w->out_since = clock_mono(); /* nothing was pending: the clock starts */
	worker_flush(w);
	if (w->out_off < w->out.len)
		pool_wake(); /* poll for POLLOUT from now on */
}

/*
 * Queue message `msg` for `w` (see worker_queued): the struct of `type`
 * (ipc_msg.h, borrowed), or NULL for the types without fields. Never
 * blocks. 0, or -1 with errno set (EPIPE: the worker is gone; EMSGSIZE:
 * too large; EINVAL: a value the codec refuses).
 */
int
worker_send(struct worker *w, unsigned type, uint32_t id, const void *msg)
{
	char err[ERR_LEN] = "";
	size_t before = w->out.len;

	if (w->fd == -1) {
		errno = EPIPE;
		return -1;
	}
	int rc = msg ? ipc_msg_encode(&w->out, type, id, msg, err, sizeof(err))
		     : ipc_empty_encode(&w->out, type, id, err, sizeof(err));
	if (rc == -1) {
		w->out.len = before;
		errno = strcmp(err, "oversized payload") == 0 ? EMSGSIZE : EINVAL;
		return -1;
	}
	worker_queued(w, before);
	return 0;
}

/* Make a fresh, private working directory for a future session, owned by
 * the kernel's identity when it has one. Caller owns the returned path. */
static char *
make_workdir(uid_t uid)
{
	char id[17];
	rand_hex(id, 8);
	char *dir = xasprintf("%s/sessions/%s", cfg->state_dir, id);
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
	return dir;
}

/* 1 if kernels' groups have controller c. */
static int
usable(enum cgroup_ctl c)
{
	return cgroups && cgroups->version[c] != 0;
}

/* kernel_env's {name: value} as START's "NAME=value" strings. Caller frees. */
static char **
env_strings(struct json_object *env)
{
	char **v = xcalloc((size_t)json_object_object_length(env) + 1, sizeof(*v));
	size_t i = 0;

	json_object_object_foreach(env, name, val)
		v[i++] = xasprintf("%s=%s", name, json_object_get_string(val));
	return v;
}

/* The strings of a JSON array (argv, allow_mime) as a vector. Caller frees. */
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
	struct json_object *argv = kernel_env_argv(cfg);
	struct json_object *env = kernel_env_build(cfg);
	struct json_object *mime = kernel_env_allow_mime();
	/* A limit whose controller is unusable here (and not required) goes. */
	struct ipc_limits lim = {
		.memory_mb = usable(CGROUP_MEMORY) ? (uint64_t)cfg->limit_memory_mb : 0,
		.pids = usable(CGROUP_PIDS) ? (uint64_t)cfg->limit_pids : 0,
		.cpu = usable(CGROUP_CPU) ? cfg->limit_cpu : 0,
		.nofile = (uint64_t)cfg->limit_nofile,
		.fsize_mb = (uint64_t)cfg->limit_fsize_mb,
	};
	struct ipc_cgroup cg;
	struct ipc_cgroup_ctl ctl[CGROUP_NCTL];

	kernel_env_session(env, w->workdir);
	struct ipc_start st = {
		.argv = strings_of(argv),
		.env = env_strings(env),
		.cwd = w->workdir,
		.runtime_dir = w->rundir,
		.allow_mime = strings_of(mime),
		.interrupt_mode = IPC_INTERRUPT_SIGNAL,
		.startup_timeout_s = STARTUP_TIMEOUT_S,
		.network_mode = cfg->kernel_network_mode,
		.uid = (uint32_t)w->uid,
		.gid = (uint32_t)w->uid,
		.limits = &lim,
	};
	if (cgroups) {
		ipc_cgroup_from_layout(&cg, ctl, cgroups, strrchr(w->rundir, '/') + 1);
		st.cgroup = &cg;
	}
	if (worker_send(w, IPC_START, 0, &st) == -1)
		log_warn("send START to worker %d", (int)w->pid);
	strv_free(st.argv);
	strv_free(st.env);
	strv_free(st.allow_mime);
	json_object_put(argv);
	json_object_put(env);
	json_object_put(mime);
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
	w->rundir = xasprintf("%s/k-%s", cfg->runtime_dir, id);
	ipc_reader_init(&w->reader, w->fd);
	buf_init(&w->out);
	return w;
}

/* Put a freshly spawned worker in the list and send it START. Lock held. */
static void
worker_adopt(struct worker *w)
{
	w->next = workers;
	workers = w;

	send_start(w);
	log_debug("worker %d started for %s", (int)w->pid, w->workdir);
}

void
pool_start(void)
{
	pool_refill();
}

int
pool_idle_count(void)
{
	return atomic_load(&idle_workers);
}

int
pool_ready(void)
{
	/* Once a kernel has come up, an empty pool means "busy", not "down":
	 * load balancers must not drop an instance that serves many sessions.
	 * (pool_warm is read unlocked: an int, and any recent value will do.) */
	if (!atomic_load(&ever_ready) && (cfg->pool_warm == 0 || pool_idle_count() > 0))
		atomic_store(&ever_ready, 1);
	return atomic_load(&ever_ready);
}

struct json_object *
pool_describe(void)
{
	static const char *const names[] = {
		[WORKER_STARTING] = "starting", [WORKER_IDLE] = "idle",
		[WORKER_ASSIGNED] = "assigned", [WORKER_CLOSING] = "closing",
		[WORKER_DEAD] = "dead",
	};
	struct json_object *list = json_object_new_array();

	for (struct worker *w = workers; w; w = w->next) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "pid", json_object_new_int(w->pid));
		json_object_object_add(o, "state", json_object_new_string(names[w->state]));
		json_object_object_add(o, "kernel_pid", json_object_new_int(w->kernel_pid));
		if (w->owned && w->session) {
			char prefix[9];
			snprintf(prefix, sizeof(prefix), "%s", w->session);
			json_object_object_add(o, "session", json_object_new_string(prefix));
		}
		json_object_array_add(list, o);
	}
	return list;
}

/* Workers that are, or will soon be, available to a new session. */
static int
pool_spare_count(void)
{
	int n = 0;
	for (struct worker *w = workers; w; w = w->next)
		n += w->state == WORKER_IDLE || w->state == WORKER_STARTING;
	return n;
}

/* Nonzero while a worker is starting its kernel. */
static int
pool_starting(void)
{
	for (struct worker *w = workers; w; w = w->next)
		if (w->state == WORKER_STARTING)
			return 1;
	return 0;
}

static int
pool_live_count(void)
{
	int n = 0;
	for (struct worker *w = workers; w; w = w->next)
		n += w->state != WORKER_DEAD;
	return n;
}

/* Whether another worker should start now, taking its kernel identity
 * into *uid if so. Lock held. */
static int
pool_wants_worker(uid_t *uid)
{
	int want = (cfg->pool_warm > 0 ? cfg->pool_warm : 0) + takers;
	int limit = cfg->pool_max_sessions + want;

	*uid = 0;
	if (stopping || time(NULL) < backoff_until || pool_spare_count() >= want ||
	    pool_live_count() >= limit)
		return 0;
	if (cfg->kernel_uid_first && (*uid = uid_take()) == 0) {
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
		int go = pool_wants_worker(&uid);
		pool_unlock();
		if (!go)
			return;
		struct worker *w = spawn_worker(uid);
		pool_lock();
		if (w)
			worker_adopt(w);
		else
			uid_release(uid, NULL);
		pool_unlock();
		if (w == NULL)
			return;
	}
}

struct worker *
pool_take(double wait_s, char *why, size_t why_len)
{
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += (time_t)wait_s;

	struct worker *found = NULL;
	unsigned long failures = start_failure_count();

	takers++;
	pool_wake();
	while (found == NULL) {
		for (struct worker *w = workers; w && !found; w = w->next)
			if (w->state == WORKER_IDLE)
				found = w;
		if (found)
			break;
		/*
		 * Kernels fail to start: say why now, not after wait_s, once a
		 * start tried for us failed, or while refills back off.
		 */
		if (start_failure_message() &&
		    (start_failure_count() != failures ||
		     (!pool_starting() && time(NULL) < backoff_until))) {
			err_set(why, why_len, "%s", start_failure_message());
			break;
		}
		if (stopping) {
			err_set(why, why_len, "the server is shutting down");
			break;
		}
		if (pthread_cond_timedwait(&ready_cond, &lock, &deadline) == ETIMEDOUT) {
			err_set(why, why_len,
				"no kernel became ready in time (see the daemon's log)");
			break;
		}
	}
	takers--;
	if (found) {
		worker_set_state(found, WORKER_ASSIGNED);
		found->owned = 1;
	}
	pool_wake(); /* refill what was taken */
	return found;
}

/* Forget a worker that has exited and that no session holds. */
static void
worker_free(struct worker *w)
{
	for (struct worker **pp = &workers; *pp; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	}
	ipc_reader_free(&w->reader);
	if (w->kernel_pidfd != -1)
		close(w->kernel_pidfd);
	buf_free(&w->out);
	/* Its uid is clean once its files are gone, the working directory too. */
	uid_release(w->uid, w->workdir);
	/* What a session leaves behind ends with it; publishing keeps results.
	 * A tree of many files takes long to remove: never under the lock. */
	if (w->workdir)
		remover_add(w->workdir);
	/* A worker killed outright leaves its sockets and connection file. */
	remover_add(w->rundir);
	free(w->death);
	free(w->cause);
	free(w);
}

void
pool_release(struct worker *w)
{
	w->owned = 0;
	w->session = NULL;
	if (w->state == WORKER_DEAD) {
		worker_free(w);
		return;
	}
	if (worker_send(w, IPC_SHUTDOWN, 0, NULL) == -1)
		log_warn("send SHUTDOWN to worker %d", (int)w->pid);
	worker_set_state(w, WORKER_CLOSING);
}

/* Describe a wait status for people: "exited with status 1", "killed by
 * signal 9 (SIGKILL)". Caller owns. */
static char *
describe_status(int status)
{
	if (WIFEXITED(status))
		return xasprintf("exited with status %d", WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		return xasprintf("killed by signal %d (SIG%s)", WTERMSIG(status),
				 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status))
								: "?");
	return xasprintf("stopped with wait status %d", status);
}

/* The worker `w` has exited with `status`: settle everything that hung on it. */
static void
worker_exited(struct worker *w, int status)
{
	char *how = describe_status(status);
	free(w->death);
	/* Killed by us: the reason matters to its session more than the signal. */
	w->death = w->cause ? xasprintf("was killed by the supervisor: %s (%s)", w->cause, how)
			    : xstrdup(how);
	free(how);
	log_msg(w->state == WORKER_CLOSING ? LOG_DEBUG : LOG_WARNING, "worker %d %s",
		(int)w->pid, w->death);
	if (w->fd != -1) {
		close(w->fd);
		w->fd = -1;
	}
	worker_drop_queue(w);
	/* The kernel is in its own process group; never leave it behind. */
	kernelpid_kill(w->kernel_pidfd, w->kernel_pid);
	/* Nor what it detached: a worker killed outright left its group. */
	if (cgroups)
		cgroup_remove_named(cgroups, strrchr(w->rundir, '/') + 1);
	if (w->call) {
		char *msg = xasprintf("the kernel worker %s", w->death);
		pool_exec_complete(w, result_failed("WorkerDied", msg));
		free(msg);
	}
	if (w->state == WORKER_STARTING && !w->ever_ready) {
		early_deaths++;
		if (early_deaths >= EARLY_DEATHS_BEFORE_BACKOFF) {
			int delay = 1 << (early_deaths - EARLY_DEATHS_BEFORE_BACKOFF);
			if (delay > BACKOFF_MAX_S)
				delay = BACKOFF_MAX_S;
			backoff_until = time(NULL) + delay;
			log_warnx("%d workers died before their first job; next start in %d s",
				  early_deaths, delay);
		}
	}
	worker_set_state(w, WORKER_DEAD);
	if (!w->owned)
		worker_free(w);
	pthread_cond_broadcast(&ready_cond);
}

void
pool_reap(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (uid_child_exited(pid, status))
			continue;
		for (struct worker *w = workers; w; w = w->next) {
			if (w->pid == pid && w->state != WORKER_DEAD) {
				worker_exited(w, status);
				break;
			}
		}
	}
}

/* A worker broke the protocol: it is not trusted again. */
static void
worker_kill(struct worker *w, const char *why)
{
	log_warnx("worker %d: %s; killing it", (int)w->pid, why);
	if (w->cause == NULL)
		w->cause = xstrdup(why);
	kill(w->pid, SIGKILL);
	if (w->fd != -1) {
		close(w->fd);
		w->fd = -1;
	}
	worker_drop_queue(w);
}

/*
 * What a worker may send in each phase of its life, in the manner of
 * OpenSSH's monitor (MON_PERMIT): a message type not permitted in the
 * worker's phase, or one whose fields do not decode, ends the worker.
 */
enum phase {
	PHASE_STARTING,	 /* START sent, no kernel yet */
	PHASE_READY,	 /* idle, in the pool or held by a session */
	PHASE_EXECUTING, /* an EXECUTE in flight */
	PHASE_STOPPING,	 /* SHUTDOWN sent */
	PHASE_N,
};

#define PERMIT(t) (1u << ((t) - IPC_READY))
static const unsigned permit[PHASE_N] = {
	/* its kernel comes up, or it says why not */
	[PHASE_STARTING] = PERMIT(IPC_READY) | PERMIT(IPC_START_FAILED) | PERMIT(IPC_LOG),
	/* an idle kernel may die; the next one is announced again */
	[PHASE_READY] = PERMIT(IPC_READY) | PERMIT(IPC_KERNEL_DIED) | PERMIT(IPC_LOG),
	/* output and the result of the request in flight; a kernel started for
	 * it, or one that died idle just before it came */
	[PHASE_EXECUTING] = PERMIT(IPC_OUTPUT) | PERMIT(IPC_STREAMING) | PERMIT(IPC_RESULT) |
			    PERMIT(IPC_READY) | PERMIT(IPC_KERNEL_DIED) | PERMIT(IPC_LOG),
	/* whatever it sent before it read SHUTDOWN */
	[PHASE_STOPPING] = PERMIT(IPC_READY) | PERMIT(IPC_START_FAILED) | PERMIT(IPC_OUTPUT) |
			   PERMIT(IPC_STREAMING) | PERMIT(IPC_RESULT) | PERMIT(IPC_KERNEL_DIED) |
			   PERMIT(IPC_LOG),
};

static const char *const phase_names[PHASE_N] = {"starting", "ready", "executing", "stopping"};

static enum phase
worker_phase(const struct worker *w)
{
	switch (w->state) {
	case WORKER_STARTING:
		return PHASE_STARTING;
	case WORKER_ASSIGNED:
		return w->call ? PHASE_EXECUTING : PHASE_READY;
	case WORKER_IDLE:
		return PHASE_READY;
	default:
		return PHASE_STOPPING;
	}
}

static int
permitted(enum phase ph, unsigned type)
{
	return type >= IPC_READY && type <= IPC_STREAMING && (permit[ph] & PERMIT(type));
}

/* READY: take the kernel it names, once proven to be that worker's. */
static void
on_ready(struct worker *w, const struct ipc_ready *r)
{
	char why[200];
	int fd;

	int rc = kernelpid_claim(r->kernel_pid, w->pid, &fd, why, sizeof(why));
	if (rc == -1) {
		worker_kill(w, why);
		return;
	}
	if (w->kernel_pidfd != -1)
		close(w->kernel_pidfd);
	w->kernel_pidfd = fd;
	w->kernel_pid = rc == 1 ? r->kernel_pid : 0;
	w->ever_ready = 1;
	early_deaths = 0;
	if (w->state == WORKER_STARTING) {
		worker_set_state(w, WORKER_IDLE);
		pthread_cond_broadcast(&ready_cond);
	}
}

/* OUTPUT and RESULT: for the request in flight, which in PHASE_EXECUTING
 * must be theirs. 1 if they belong to it, 0 if to nobody, -1 if a lie. */
static int
for_call(struct worker *w, enum phase ph, const struct ipc_msg *m)
{
	char why[120];

	if (w->call && w->call->id == m->hdr.id)
		return 1;
	if (ph != PHASE_EXECUTING)
		return 0; /* a SHUTDOWN crossed it */
	snprintf(why, sizeof(why), "%s for request %u, but request %u is in flight",
		 ipc_type_name(m->hdr.type), m->hdr.id, w->call->id);
	worker_kill(w, why);
	return -1;
}

/* Act on one message from worker `w`: check it is permitted now, decode, act. */
static void
worker_message(struct worker *w, struct ipc_msg *m)
{
	char err[IPC_ERR_LEN], why[IPC_ERR_LEN + 64];
	enum phase ph = worker_phase(w);
	union {
		struct ipc_ready ready;
		struct ipc_start_failed start_failed;
		struct ipc_output output;
		struct ipc_streaming streaming;
		struct ipc_result result;
		struct ipc_kernel_died kernel_died;
		struct ipc_log log;
	} u;

	if (!permitted(ph, m->hdr.type)) {
		snprintf(why, sizeof(why), "sent %s, which a worker may not send while %s",
			 ipc_type_name(m->hdr.type), phase_names[ph]);
		worker_kill(w, why);
		return;
	}
	if (ipc_msg_decode(m, m->hdr.type, &u, err, sizeof(err)) == -1) {
		snprintf(why, sizeof(why), "sent a malformed message: %s", err);
		worker_kill(w, why);
		return;
	}
	switch (m->hdr.type) {
	case IPC_READY:
		on_ready(w, &u.ready);
		start_failure_set(NULL);
		break;
	case IPC_START_FAILED:
		log_warnx("worker %d could not start its kernel: %s", (int)w->pid,
			  u.start_failed.message.s);
		start_failure_set(u.start_failed.message.s);
		pthread_cond_broadcast(&ready_cond); /* waiters fail now, with the reason */
		break;
	case IPC_OUTPUT:
		if (for_call(w, ph, m) == 1 &&
		    pool_exec_output(w, &u.output, why, sizeof(why)) == -1)
			worker_kill(w, why);
		break;
	case IPC_STREAMING:
		if (for_call(w, ph, m) == 1 &&
		    pool_exec_streaming(w, &u.streaming, why, sizeof(why)) == -1)
			worker_kill(w, why);
		break;
	case IPC_RESULT:
		/* The decoded payload itself, neither copied nor encoded again. */
		if (for_call(w, ph, m) == 1)
			pool_exec_complete(w, ipc_result_take(m));
		break;
	case IPC_KERNEL_DIED:
		log_warnx("kernel of worker %d died while idle: %s", (int)w->pid,
			  u.kernel_died.message.s);
		break;
	case IPC_LOG:
		log_msg(u.log.priority, "worker %d: %s", (int)w->pid, u.log.message.s);
		break;
	}
	ipc_msg_free(m->hdr.type, &u);
}

/* Read and dispatch everything worker `w` has sent. */
static void
worker_readable(struct worker *w)
{
	struct ipc_msg m;
	char err[ERR_LEN] = "";
	int rc;

	ssize_t n = ipc_reader_fill(&w->reader);
	if (n == 0 || (n < 0 && errno != EAGAIN)) {
		/* Its exit status, via SIGCHLD, says what happened. */
		close(w->fd);
		w->fd = -1;
		return;
	}
	while (w->fd != -1 && (rc = ipc_reader_next(&w->reader, &m, err, sizeof(err))) == 1) {
		worker_message(w, &m);
		ipc_msg_clear(&m);
	}
	if (w->fd != -1 && rc == -1)
		worker_kill(w, err);
}

int
pool_pollfds(struct pollfd *pfd, int max)
{
	int n = 0;
	for (struct worker *w = workers; w && n < max; w = w->next) {
		if (w->fd == -1)
			continue;
		pfd[n].fd = w->fd;
		pfd[n].events = POLLIN | (w->out_off < w->out.len ? POLLOUT : 0);
		pfd[n].revents = 0;
		n++;
	}
	return n;
}

void
pool_handle(const struct pollfd *pfd, int n)
{
	for (int i = 0; i < n; i++) {
		if (!pfd[i].revents)
			continue;
		for (struct worker *w = workers; w; w = w->next) {
			if (w->fd != pfd[i].fd)
				continue;
			if (pfd[i].revents & POLLOUT)
				worker_flush(w);
			if (w->fd != -1 && (pfd[i].revents & ~POLLOUT))
				worker_readable(w);
			break;
		}
	}
}

/* Kill every worker that has left queued bytes unread for WORKER_UNREAD_S. */
static void
kill_unread(void)
{
	double now = clock_mono();

	for (struct worker *w = workers; w; w = w->next) {
		if (w->fd == -1 || w->out_off == w->out.len || now - w->out_since < WORKER_UNREAD_S)
			continue;
		char *why = xasprintf("it left %zu bytes unread on its socket for %d s (stopped "
				      "or hung)", w->out.len - w->out_off, WORKER_UNREAD_S);
		worker_kill(w, why);
		free(why);
	}
}

void
pool_tick(void)
{
	char drain[64];
	while (read(wake_pipe[0], drain, sizeof(drain)) > 0)
		;
	kill_unread();
	uid_tick();
}

/* Reap for up to `seconds`, writing what is queued, without holding the
 * lock while waiting. Returns how many workers are still not reaped. */
static int
pool_reap_for(double seconds)
{
	double end = clock_mono() + seconds;
	int live;

	for (;;) {
		pool_lock();
		for (struct worker *w = workers; w; w = w->next)
			worker_flush(w);
		pool_reap();
		live = pool_live_count();
		pool_unlock();
		if (live == 0 || clock_mono() >= end)
			return live;
		usleep(50000);
	}
}

void
pool_stop(void)
{
	pool_lock();
	stopping = 1;
	pthread_cond_broadcast(&ready_cond);
	for (struct worker *w = workers; w; w = w->next) {
		if (w->state == WORKER_DEAD || w->fd == -1)
			continue;
		if (w->state != WORKER_CLOSING && worker_send(w, IPC_SHUTDOWN, 0, NULL) == -1)
			log_warn("send SHUTDOWN to worker %d", (int)w->pid);
		worker_set_state(w, WORKER_CLOSING);
	}
	pool_unlock();

	/* Workers end their kernels within about a second; then force it. */
	if (pool_reap_for(5) > 0) {
		pool_lock();
		for (struct worker *w = workers; w; w = w->next) {
			if (w->state == WORKER_DEAD)
				continue;
			log_warnx("worker %d did not stop; killing it", (int)w->pid);
			kill(w->pid, SIGKILL);
			kernelpid_kill(w->kernel_pidfd, w->kernel_pid);
		}
		pool_unlock();
		/* SIGKILL ends even a stopped worker; reaping frees the struct (and
		 * the loop above never touches a worker after that). */
		if (pool_reap_for(5) > 0)
			log_warnx("some workers were still not reaped after SIGKILL");
	}
	remover_drain();
}
