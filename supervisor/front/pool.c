/* pool.c - see pool.h and pool_state.h. */
#include "autoconf.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
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

/* The first idle worker, or NULL. */
static struct worker *
idle_worker(void)
{
	for (struct worker *w = pool.workers; w; w = w->next)
		if (w->state == WORKER_IDLE)
			return w;
	return NULL;
}

/* Tickets in the queue, for /metrics: changed under the lock, read without. */
static atomic_int queue_length;

int
pool_queue_length(void)
{
	return atomic_load(&queue_length);
}

int
pool_queue_position(const struct pool_ticket *t, int *length)
{
	int pos = 0, n = 1;

	for (const struct pool_ticket *x = pool.queue_head; x; x = x->next, n++)
		if (x == t)
			pos = n;
	if (length)
		*length = pool.takers;
	return pos;
}

void
pool_queue_join(struct pool_ticket *t)
{
	memset(t, 0, sizeof(*t));
	t->number = ++pool.tickets;
	t->joined = t->moved = clock_mono();
	t->ready_seen = pool.kernels_ready;
	t->failures = start_failure_count();
	if (pool.queue_tail)
		pool.queue_tail->next = t;
	else
		pool.queue_head = t;
	pool.queue_tail = t;
	pool.takers++;
	atomic_store(&queue_length, pool.takers);
	t->first_position = t->position = pool.takers;
	if (pool.queue_head != t || idle_worker() == NULL)
		log_info("a call waits for a kernel: position %d of %d, %d kernels starting",
			 t->position, pool.takers, pool_starting_count());
	pool_wake(); /* the refill starts a kernel for it */
}

/* Take `t` out of the queue; everyone behind moves up. */
static void
queue_remove(struct pool_ticket *t)
{
	struct pool_ticket *prev = NULL;

	for (struct pool_ticket *x = pool.queue_head; x; prev = x, x = x->next) {
		if (x != t)
			continue;
		if (prev)
			prev->next = t->next;
		else
			pool.queue_head = t->next;
		if (pool.queue_tail == t)
			pool.queue_tail = prev;
		break;
	}
	t->number = 0;
	t->next = NULL;
	pool.takers--;
	atomic_store(&queue_length, pool.takers);
	/* Those behind may tell their new place. */
	pthread_cond_broadcast(&pool.ready_cond);
	pool_wake(); /* refill what was taken, once the deferral is over */
}

/*
 * Hand each idle worker to the first in the queue, in order: the worker is
 * the ticket's at once, whether or not its caller is waiting right now (it
 * may be telling its client its place), so nobody passes it meanwhile.
 */
static void
queue_hand_out(void)
{
	struct worker *w;

	while (pool.queue_head && (w = idle_worker()) != NULL) {
		struct pool_ticket *t = pool.queue_head;
		worker_set_state(w, WORKER_ASSIGNED);
		w->owned = 1;
		t->given = w;
		pool_worker_taken();
		queue_remove(t);
	}
}

void
pool_queue_leave(struct pool_ticket *t)
{
	struct worker *w = t->given;

	if (t->number != 0)
		queue_remove(t);
	if (w == NULL)
		return;
	/* Handed out but never used: its kernel ran nothing, so it goes back. */
	t->given = NULL;
	w->owned = 0;
	if (w->state == WORKER_ASSIGNED)
		worker_set_state(w, WORKER_IDLE);
	else
		pool_release(w);
	queue_hand_out();
}

/*
 * Whether t's wait is over without a kernel: why[] says why. Kernels that
 * fail to start are said now, not after wait_s: once a start tried since t
 * joined failed, or while refills back off. A queue that moves is not a
 * failure: wait_s counts from the last kernel that became ready, so a
 * burst bigger than what starts in wait_s is served, only slowly.
 */
static int
queue_failed(struct pool_ticket *t, double wait_s, char *why, size_t why_len)
{
	double now = clock_mono();
	int len, pos = pool_queue_position(t, &len);

	if (start_failure_message() &&
	    (start_failure_count() != t->failures ||
	     (!pool_starting() && time(NULL) < pool.backoff_until))) {
		err_set(why, why_len, "%s", start_failure_message());
		return 1;
	}
	if (pool.stopping) {
		err_set(why, why_len, "the server is shutting down");
		return 1;
	}
	if (pool.kernels_ready != t->ready_seen) {
		t->ready_seen = pool.kernels_ready;
		t->moved = now;
	}
	if (now - t->moved >= wait_s) {
		err_set(why, why_len,
			"no kernel became ready within %g s; this call waited %.1f s in the queue "
			"for a kernel and was at position %d of %d (it joined at position %d; "
			"see the daemon's log)",
			wait_s, now - t->joined, pos, len, t->first_position);
		return 1;
	}
	return 0;
}

/* The worker handed to t is its caller's now. */
static struct worker *
queue_collect(struct pool_ticket *t)
{
	struct worker *w = t->given;
	double waited = clock_mono() - t->joined;

	t->given = NULL;
	if (waited >= 1)
		log_info("a call waited %.1f s for a kernel, from position %d", waited,
			 t->first_position);
	return w;
}

/* Log t's place once it changed: the queue moves, or it does not. */
static void
queue_note(struct pool_ticket *t)
{
	int len, pos = pool_queue_position(t, &len);

	if (pos == t->position)
		return;
	t->position = pos;
	log_debug("a call waiting %.1f s for a kernel: position %d of %d",
		  clock_mono() - t->joined, pos, len);
}

/*
 * The worker handed to t died before its caller came for it: t goes back
 * to the head of the queue, where it stood, and waits for the next kernel
 * rather than fail its call for a kernel it never used.
 */
static void
queue_rejoin_first(struct pool_ticket *t)
{
	struct worker *dead = t->given;

	log_info("worker %d died before the call it was handed to took it; the call waits again",
		 (int)dead->pid);
	t->given = NULL;
	pool_release(dead);
	t->number = ++pool.tickets;
	t->next = pool.queue_head;
	pool.queue_head = t;
	if (pool.queue_tail == NULL)
		pool.queue_tail = t;
	pool.takers++;
	atomic_store(&queue_length, pool.takers);
	pool_wake(); /* the refill replaces it */
}

int
pool_queue_wait(struct pool_ticket *t, double wait_s, double seconds, struct worker **w,
		char *why, size_t why_len)
{
	*w = NULL;
	for (int waited = 0;; waited = 1) {
		if (t->given && t->given->state == WORKER_DEAD)
			queue_rejoin_first(t);
		queue_hand_out();
		if (t->given) {
			*w = queue_collect(t);
			return 1;
		}
		if (queue_failed(t, wait_s, why, why_len)) {
			pool_queue_leave(t);
			return 1;
		}
		queue_note(t);
		if (waited)
			return 0;
		double left = wait_s - (clock_mono() - t->moved);
		if (seconds >= 0 && seconds < left)
			left = seconds;
		struct timespec until = clock_deadline(left > 0 ? left : 0);
		pthread_cond_timedwait(&pool.ready_cond, pool_mutex(), &until);
	}
}

struct worker *
pool_take(double wait_s, char *why, size_t why_len)
{
	struct pool_ticket t;
	struct worker *w;

	pool_queue_join(&t);
	while (!pool_queue_wait(&t, wait_s, -1, &w, why, why_len))
		;
	return w;
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
	queue_hand_out(); /* kernels that became ready, to those who wait */
	pool_trim();
}

/* Longest wait for the parent's word of a worker whose socket hung up. */
#define HUNG_UP_WAIT_S 5

void
pool_settle_hung_up(struct worker *w)
{
	struct pollfd p = {.fd = w->fd, .events = POLLIN};

	if (w->state == WORKER_DEAD)
		return;
	/* The reader closes the socket at its end of file (pool_io.c). */
	if (w->fd != -1 && (poll(&p, 1, 0) != 1 || !(p.revents & (POLLHUP | POLLERR))))
		return;
	struct timespec until = clock_deadline(HUNG_UP_WAIT_S);
	while (w->state != WORKER_DEAD &&
	       pthread_cond_timedwait(&pool.ready_cond, pool_mutex(), &until) != ETIMEDOUT)
		;
}
