/* pool.c - see pool.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "config.h"
#include "fsutil.h"
#include "kernel_env.h"
#include "log.h"
#include "pool.h"
#include "rand.h"
#include "result.h"
#include "xmalloc.h"

/* Seconds a worker gets to start its kernel before it is killed. */
#define STARTUP_TIMEOUT_S 60
/* After this many workers in a row die before READY, refills back off. */
#define EARLY_DEATHS_BEFORE_BACKOFF 3
#define BACKOFF_MAX_S 60
/* Extra time, beyond the worker's own timeout and grace, before a silent
 * worker is declared broken and killed. */
#define EXECUTE_SLACK_S 30

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static struct worker *workers;
static int wake_pipe[2] = {-1, -1};
static uint32_t next_call_id = 1;

static const struct config *cfg;
static const struct cgroup_layout *cgroups; /* NULL: no control groups */
static unsigned char *uid_used;		    /* per kernel_uid_range entry */
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
	if (c->kernel_uid_first)
		uid_used = xcalloc((size_t)(c->kernel_uid_last - c->kernel_uid_first) + 1, 1);
	worker_path = path;
	worker_verbose = verbose;
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

/* A kernel identity of kernel_uid_range nobody uses; 0 if none is free. */
static uid_t
uid_take(void)
{
	for (unsigned i = 0; i <= cfg->kernel_uid_last - cfg->kernel_uid_first; i++) {
		if (!uid_used[i]) {
			uid_used[i] = 1;
			return (uid_t)(cfg->kernel_uid_first + i);
		}
	}
	return 0;
}

static void
uid_give_back(uid_t uid)
{
	if (uid != 0)
		uid_used[uid - cfg->kernel_uid_first] = 0;
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

/* The sandbox part of START: network mode, identity, limits, cgroup. */
static void
add_isolation(struct json_object *p, uid_t uid, const char *name)
{
	static const char *const modes[] = {"inherit", "isolated", "seccomp"};
	struct json_object *lim = json_object_new_object();

	json_object_object_add(p, "network_mode",
			       json_object_new_string(modes[cfg->kernel_network_mode]));
	if (uid != 0) {
		json_object_object_add(p, "uid", json_object_new_int((int)uid));
		json_object_object_add(p, "gid", json_object_new_int((int)uid));
	}
	/* Without control groups (none here, and not required) those limits go. */
	json_object_object_add(lim, "memory_mb",
			       json_object_new_int(cgroups ? cfg->limit_memory_mb : 0));
	json_object_object_add(lim, "pids", json_object_new_int(cgroups ? cfg->limit_pids : 0));
	json_object_object_add(lim, "cpu", json_object_new_double(cgroups ? cfg->limit_cpu : 0));
	json_object_object_add(lim, "nofile", json_object_new_int(cfg->limit_nofile));
	json_object_object_add(lim, "fsize_mb", json_object_new_int(cfg->limit_fsize_mb));
	json_object_object_add(p, "limits", lim);
	if (cgroups)
		json_object_object_add(p, "cgroup", cgroup_layout_json(cgroups, name));
}

/* The START payload for worker `w`. Caller owns. */
static struct json_object *
start_payload(const struct worker *w)
{
	struct json_object *p = json_object_new_object();

	json_object_object_add(p, "argv", kernel_env_argv(cfg));
	struct json_object *env = kernel_env_build(cfg);
	kernel_env_session(env, w->workdir);
	json_object_object_add(p, "env", env);
	json_object_object_add(p, "cwd", json_object_new_string(w->workdir));
	json_object_object_add(p, "runtime_dir", json_object_new_string(w->rundir));
	json_object_object_add(p, "allow_mime", kernel_env_allow_mime());
	json_object_object_add(p, "interrupt_mode", json_object_new_string("signal"));
	json_object_object_add(p, "startup_timeout_s", json_object_new_int(STARTUP_TIMEOUT_S));
	add_isolation(p, w->uid, strrchr(w->rundir, '/') + 1);
	return p;
}

/* fork+exec one worker with its socket as fd 3. NULL on failure (logged). */
static struct worker *
spawn_worker(void)
{
	int sv[2];
	posix_spawn_file_actions_t fa;
	pid_t pid;
	char *argv[] = {(char *)"codeexec-worker", worker_verbose ? (char *)"-v" : NULL, NULL};
	char *envp[] = {(char *)"PATH=/usr/bin:/bin", NULL};

	uid_t uid = 0;
	if (uid_used && (uid = uid_take()) == 0) {
		log_warnx("every identity of kernel_uid_range is in use; no new kernel");
		return NULL;
	}
	char *workdir = make_workdir(uid);
	if (workdir == NULL) {
		uid_give_back(uid);
		return NULL;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("socketpair for a worker");
		rmdir(workdir);
		free(workdir);
		uid_give_back(uid);
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
		uid_give_back(uid);
		return NULL;
	}

	struct worker *w = xcalloc(1, sizeof(*w));
	char id[17];
	w->pid = pid;
	w->fd = sv[0];
	w->state = WORKER_STARTING;
	w->workdir = workdir;
	w->uid = uid;
	rand_hex(id, 8);
	w->rundir = xasprintf("%s/k-%s", cfg->runtime_dir, id);
	ipc_reader_init(&w->reader, w->fd);
	w->next = workers;
	workers = w;

	struct json_object *start = start_payload(w);
	if (ipc_send(w->fd, IPC_START, 0, start) == -1)
		log_warn("send START to worker %d", (int)pid);
	json_object_put(start);
	log_debug("worker %d started for %s", (int)pid, workdir);
	return w;
}

void
pool_start(void)
{
	pool_lock();
	for (int i = 0; i < cfg->pool_warm; i++)
		spawn_worker();
	pool_unlock();
}

int
pool_idle_count(void)
{
	int n = 0;
	for (struct worker *w = workers; w; w = w->next)
		n += w->state == WORKER_IDLE;
	return n;
}

int
pool_ready(void)
{
	/* Once a kernel has come up, an empty pool means "busy", not "down":
	 * load balancers must not drop an instance that serves many sessions. */
	static int ever;
	if (!ever)
		ever = cfg->pool_warm == 0 || pool_idle_count() > 0;
	return ever;
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

static int
pool_live_count(void)
{
	int n = 0;
	for (struct worker *w = workers; w; w = w->next)
		n += w->state != WORKER_DEAD;
	return n;
}

/*
 * Start workers until the warm target, plus one for each thread waiting in
 * pool_take, is met, unless refills back off. Only the main loop spawns:
 * it alone holds the capabilities workers inherit.
 */
static void
pool_refill(void)
{
	int want = (cfg->pool_warm > 0 ? cfg->pool_warm : 0) + takers;
	int limit = cfg->pool_max_sessions + want;

	if (stopping || time(NULL) < backoff_until)
		return;
	while (pool_spare_count() < want && pool_live_count() < limit)
		if (spawn_worker() == NULL)
			break;
}

struct worker *
pool_take(double wait_s, const char **why)
{
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += (time_t)wait_s;

	struct worker *found = NULL;

	takers++;
	pool_wake();
	while (found == NULL) {
		for (struct worker *w = workers; w && !found; w = w->next)
			if (w->state == WORKER_IDLE)
				found = w;
		if (found)
			break;
		if (stopping) {
			*why = "the server is shutting down";
			break;
		}
		if (pthread_cond_timedwait(&ready_cond, &lock, &deadline) == ETIMEDOUT) {
			*why = "no kernel became ready in time (see the daemon's log)";
			break;
		}
	}
	takers--;
	if (found) {
		found->state = WORKER_ASSIGNED;
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
	/* What a session leaves behind ends with it; publishing keeps results. */
	if (w->workdir && fs_remove_tree(w->workdir) == -1)
		log_warn("remove working directory %s", w->workdir);
	free(w->workdir);
	/* A worker killed outright leaves its sockets and connection file. */
	if (fs_remove_tree(w->rundir) == -1)
		log_warn("remove runtime directory %s", w->rundir);
	free(w->rundir);
	uid_give_back(w->uid);
	free(w->death);
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
	if (ipc_send(w->fd, IPC_SHUTDOWN, 0, NULL) == -1)
		log_warn("send SHUTDOWN to worker %d", (int)w->pid);
	w->state = WORKER_CLOSING;
}

void
call_init(struct call *c)
{
	memset(c, 0, sizeof(*c));
	buf_init(&c->out);
	buf_init(&c->err);
	pthread_cond_init(&c->cond, NULL);
}

void
call_clear(struct call *c)
{
	json_object_put(c->result);
	buf_free(&c->out);
	buf_free(&c->err);
	pthread_cond_destroy(&c->cond);
}

/* Complete the call in flight on `w` with `result` (consumed). */
static void
call_complete(struct worker *w, struct json_object *result)
{
	struct call *c = w->call;
	if (c == NULL) {
		json_object_put(result);
		return;
	}
	c->result = result;
	c->done = 1;
	c->changes++;
	w->call = NULL;
	pthread_cond_broadcast(&c->cond);
}

void
pool_execute(struct worker *w, struct call *c, const char *code, double timeout_s, int silent)
{
	struct timespec deadline;

	c->id = next_call_id++;
	if (w->state == WORKER_DEAD) {
		char *msg = xasprintf("the session's kernel worker is gone (%s); "
				      "start a new session", w->death ? w->death : "exited");
		c->result = result_failed("WorkerDied", msg);
		c->done = 1;
		free(msg);
		return;
	}
	w->call = c;
	struct json_object *p = json_object_new_object();
	json_object_object_add(p, "code", json_object_new_string(code));
	json_object_object_add(p, "timeout_s", json_object_new_double(timeout_s));
	if (silent)
		json_object_object_add(p, "silent", json_object_new_boolean(1));
	json_object_object_add(p, "output_limit",
			       json_object_new_int(cfg->output_truncation_threshold));
	json_object_object_add(p, "rich_limit", json_object_new_int(cfg->rich_output_max_bytes));
	int sent = ipc_send(w->fd, IPC_EXECUTE, c->id, p);
	json_object_put(p);
	if (sent == -1) {
		log_warn("send EXECUTE to worker %d", (int)w->pid);
		call_complete(w, result_failed("WorkerDied",
					       "cannot reach the session's kernel worker"));
	}

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += (time_t)timeout_s + EXECUTE_SLACK_S;
	while (!c->done) {
		if (pthread_cond_timedwait(&c->cond, &lock, &deadline) == ETIMEDOUT) {
			log_warnx("worker %d gave no result in time; killing it", (int)w->pid);
			kill(w->pid, SIGKILL);
			call_complete(w, result_failed("WorkerDied", "the kernel worker stopped "
								     "answering and was killed"));
		}
	}
}

void
pool_interrupt(struct worker *w)
{
	if (w->call && w->state != WORKER_DEAD &&
	    ipc_send(w->fd, IPC_INTERRUPT, w->call->id, NULL) == -1)
		log_warn("send INTERRUPT to worker %d", (int)w->pid);
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
	free(w->death);
	w->death = describe_status(status);
	log_msg(w->state == WORKER_CLOSING ? LOG_DEBUG : LOG_WARNING, "worker %d %s",
		(int)w->pid, w->death);
	if (w->fd != -1) {
		close(w->fd);
		w->fd = -1;
	}
	/* The kernel is in its own process group; never leave it behind. */
	if (w->kernel_pid > 0)
		kill(-w->kernel_pid, SIGKILL);
	if (w->call) {
		char *msg = xasprintf("the kernel worker %s", w->death);
		call_complete(w, result_failed("WorkerDied", msg));
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
	w->state = WORKER_DEAD;
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
	kill(w->pid, SIGKILL);
	if (w->fd != -1) {
		close(w->fd);
		w->fd = -1;
	}
}

/* Act on one message from worker `w`. */
static void
worker_message(struct worker *w, struct ipc_msg *m)
{
	struct json_object *v;

	switch (m->hdr.type) {
	case IPC_READY:
		if (json_object_object_get_ex(m->payload, "kernel_pid", &v))
			w->kernel_pid = json_object_get_int(v);
		w->ever_ready = 1;
		early_deaths = 0;
		if (w->state == WORKER_STARTING) {
			w->state = WORKER_IDLE;
			pthread_cond_broadcast(&ready_cond);
		}
		break;
	case IPC_START_FAILED:
		v = json_object_object_get(m->payload, "message");
		log_warnx("worker %d could not start its kernel: %s", (int)w->pid,
			  v ? json_object_get_string(v) : "no reason given");
		break;
	case IPC_OUTPUT:
		if (w->call && w->call->id == m->hdr.id &&
		    json_object_object_get_ex(m->payload, "text", &v)) {
			const char *name = json_object_get_string(
				json_object_object_get(m->payload, "name"));
			int is_err = name && strcmp(name, "stderr") == 0;
			buf_adds(is_err ? &w->call->err : &w->call->out, json_object_get_string(v));
			w->call->changes++;
			pthread_cond_broadcast(&w->call->cond);
		}
		break;
	case IPC_RESULT:
		if (w->call && w->call->id == m->hdr.id) {
			call_complete(w, m->payload);
			m->payload = NULL;
		} else {
			log_debug("worker %d: result for request %u nobody waits for",
				  (int)w->pid, m->hdr.id);
		}
		break;
	case IPC_KERNEL_DIED:
		v = json_object_object_get(m->payload, "message");
		log_warnx("kernel of worker %d died while idle: %s", (int)w->pid,
			  v ? json_object_get_string(v) : "?");
		break;
	case IPC_LOG:
		v = json_object_object_get(m->payload, "message");
		log_msg(json_object_get_int(json_object_object_get(m->payload, "priority")),
			"worker %d: %s", (int)w->pid, v ? json_object_get_string(v) : "");
		break;
	default:
		worker_kill(w, "sent a message only the supervisor may send");
	}
}

/* Read and dispatch everything worker `w` has sent. */
static void
worker_readable(struct worker *w)
{
	struct ipc_msg m;
	const char *err;
	int rc;

	ssize_t n = ipc_reader_fill(&w->reader);
	if (n == 0 || (n < 0 && errno != EAGAIN)) {
		/* Its exit status, via SIGCHLD, says what happened. */
		close(w->fd);
		w->fd = -1;
		return;
	}
	while (w->fd != -1 && (rc = ipc_reader_next(&w->reader, &m, &err)) == 1) {
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
		pfd[n].events = POLLIN;
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
			if (w->fd == pfd[i].fd) {
				worker_readable(w);
				break;
			}
		}
	}
}

void
pool_tick(void)
{
	char drain[64];
	while (read(wake_pipe[0], drain, sizeof(drain)) > 0)
		;
	pool_refill();
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
		if (ipc_send(w->fd, IPC_SHUTDOWN, 0, NULL) == -1)
			log_warn("send SHUTDOWN to worker %d", (int)w->pid);
		w->state = WORKER_CLOSING;
	}
	pool_unlock();

	/* Workers end their kernels within about a second; then force it. */
	for (int i = 0; i < 50; i++) {
		pool_lock();
		pool_reap();
		int live = pool_live_count();
		pool_unlock();
		if (live == 0)
			return;
		usleep(100000);
	}
	pool_lock();
	for (struct worker *w = workers; w; w = w->next) {
		if (w->state == WORKER_DEAD)
			continue;
		log_warnx("worker %d did not stop; killing it", (int)w->pid);
		kill(w->pid, SIGKILL);
		if (w->kernel_pid > 0)
			kill(-w->kernel_pid, SIGKILL);
		int status;
		if (waitpid(w->pid, &status, 0) == w->pid)
			worker_exited(w, status);
	}
	pool_unlock();
}
