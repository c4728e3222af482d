/* pool.c - see pool.h and pool_state.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "pool_exec.h"
#include "pool_io.h"
#include "pool_reap.h"
#include "pool_spawn.h"
#include "pool_state.h"
#include "start_failure.h"
#include "uid.h"

/* pool_lock: the workers, the session table, every call (see pool.h). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
struct pool_state pool = {.ready_cond = PTHREAD_COND_INITIALIZER};
/* Written under the lock, read without it by /health. */
static atomic_int idle_workers;
static atomic_int ever_ready;
static int wake_pipe[2] = {-1, -1};

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
	pool.cfg = c;
	pool.cgroups = layout;
	uid_init(c, path);
	pool_spawn_init(path, verbose);
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

void
worker_set_state(struct worker *w, enum worker_state st)
{
	if (w->state == WORKER_IDLE && st != WORKER_IDLE)
		atomic_fetch_sub(&idle_workers, 1);
	else if (w->state != WORKER_IDLE && st == WORKER_IDLE)
		atomic_fetch_add(&idle_workers, 1);
	w->state = st;
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
	if (!atomic_load(&ever_ready) && (pool.cfg->pool_warm == 0 || pool_idle_count() > 0))
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

	for (struct worker *w = pool.workers; w; w = w->next) {
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

int
pool_spare_count(void)
{
	int n = 0;
	for (struct worker *w = pool.workers; w; w = w->next)
		n += w->state == WORKER_IDLE || w->state == WORKER_STARTING;
	return n;
}

/* Nonzero while a worker is starting its kernel. */
static int
pool_starting(void)
{
	for (struct worker *w = pool.workers; w; w = w->next)
		if (w->state == WORKER_STARTING)
			return 1;
	return 0;
}

int
pool_live_count(void)
{
	int n = 0;
	for (struct worker *w = pool.workers; w; w = w->next)
		n += w->state != WORKER_DEAD;
	return n;
}

struct worker *
pool_take(double wait_s, char *why, size_t why_len)
{
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += (time_t)wait_s;

	struct worker *found = NULL;
	unsigned long failures = start_failure_count();

	pool.takers++;
	pool_wake();
	while (found == NULL) {
		for (struct worker *w = pool.workers; w && !found; w = w->next)
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
		     (!pool_starting() && time(NULL) < pool.backoff_until))) {
			err_set(why, why_len, "%s", start_failure_message());
			break;
		}
		if (pool.stopping) {
			err_set(why, why_len, "the server is shutting down");
			break;
		}
		if (pthread_cond_timedwait(&pool.ready_cond, &lock, &deadline) == ETIMEDOUT) {
			err_set(why, why_len,
				"no kernel became ready in time (see the daemon's log)");
			break;
		}
	}
	pool.takers--;
	if (found) {
		worker_set_state(found, WORKER_ASSIGNED);
		found->owned = 1;
	}
	pool_wake(); /* refill what was taken */
	return found;
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

void
pool_tick(void)
{
	char drain[64];
	while (read(wake_pipe[0], drain, sizeof(drain)) > 0)
		;
	pool_io_kill_unread();
	uid_tick();
}

