/* pool.c - see pool.h and pool_state.h. */
#include "autoconf.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "pool.h"
#include "pool_send.h"
#include "start_failure.h"

/* Set once a kernel came up; read without the lock by /health. */
static atomic_int ever_ready;

void
pool_init(const struct config *c)
{
	pool.cfg = c;
	pool_exec_init(c);
	pool_wake_init();
}

void
pool_start(void)
{
	pool_refill();
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

/* Nonzero while a worker is starting its kernel. */
static int
pool_starting(void)
{
	for (struct worker *w = pool.workers; w; w = w->next)
		if (w->state == WORKER_STARTING)
			return 1;
	return 0;
}

struct worker *
pool_take(double wait_s, char *why, size_t why_len)
{
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += (time_t)wait_s;

	struct worker *found = NULL;
	unsigned long failures = start_failure_count();
	int position = 0; /* callers waiting when this one began to */
	unsigned long ready_seen = pool.kernels_ready;

	pool.takers++;
	pool_wake();
	while (found == NULL) {
		for (struct worker *w = pool.workers; w && !found; w = w->next)
			if (w->state == WORKER_IDLE)
				found = w;
		if (found)
			break;
		if (position == 0) {
			position = pool.takers;
			log_info("a call waits for a kernel: %d waiting, %d kernels starting", position,
				 pool_starting_count());
		}
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
		/*
		 * A queue that moves is not a failure: the wait is wait_s since
		 * the last kernel that became ready, so a burst bigger than what
		 * starts in wait_s is served, only slowly.
		 */
		if (pool.kernels_ready != ready_seen) {
			ready_seen = pool.kernels_ready;
			clock_gettime(CLOCK_REALTIME, &deadline);
			deadline.tv_sec += (time_t)wait_s;
		}
		if (pthread_cond_timedwait(&pool.ready_cond, pool_mutex(), &deadline) == ETIMEDOUT) {
			err_set(why, why_len,
				"no kernel became ready within %g s; %d calls were waiting for one "
				"when this one began to (see the daemon's log)",
				wait_s, position);
			break;
		}
	}
	pool.takers--;
	if (found) {
		worker_set_state(found, WORKER_ASSIGNED);
		found->owned = 1;
		pool_worker_taken();
	}
	pool_wake(); /* refill what was taken, once the deferral is over */
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
	while (read(pool_wake_fd(), drain, sizeof(drain)) > 0)
		;
	pool_io_kill_unread();
	pool_trim();
}

