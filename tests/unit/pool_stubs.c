/*
 * pool_stubs.c - what test_session and test_job link instead of pool.c and
 * batch.c: workers that are plain structs whose executions answer from
 * their code (pool_stubs.h). The pool's bottom layer, pool_state.c (the
 * real pool_lock and calls), is linked as it is.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "batch.h"
#include "pool_stubs.h"
#include "result.h"

struct pool_stub pool_stub;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static unsigned long unblocks;
static struct worker workers[8];
static int next_worker;

struct worker *
pool_take(double wait_s, char *why, size_t why_len)
{
	if (pool_stub.no_worker) {
		err_set(why, why_len, "no kernel could start (stub)");
		return NULL;
	}
	struct worker *w = &workers[next_worker++ % 8];
	memset(w, 0, sizeof(*w));
	w->pid = 1000 + next_worker;
	w->state = WORKER_ASSIGNED;
	w->owned = 1;
	pool_stub.takes++;
	return w;
}

/* The stand-in queue serves each caller at once. */
void
pool_queue_join(struct pool_ticket *t)
{
	memset(t, 0, sizeof(*t));
	t->number = 1;
}

int
pool_queue_wait(struct pool_ticket *t, double wait_s, double seconds, struct worker **w,
		char *why, size_t why_len)
{
	t->number = 0;
	*w = pool_take(wait_s, why, why_len);
	return 1;
}

void
pool_queue_leave(struct pool_ticket *t)
{
	t->number = 0;
}

int
pool_queue_position(const struct pool_ticket *t, int *length)
{
	if (length)
		*length = t->number != 0;
	return t->number != 0;
}

void
pool_release(struct worker *w)
{
	w->state = WORKER_CLOSING;
	pool_stub.releases++;
}

/* The stand-in workers have no socket: none ever hangs up. */
void
pool_settle_hung_up(struct worker *w)
{
	(void)w;
}

/* The stand-in revival serves at once, with a worker of pool_take. */
void
pool_revive_join(struct pool_revival *r, uint32_t dir)
{
	memset(r, 0, sizeof(*r));
	r->dir = dir;
	pool_stub.revivals++;
	pool_stub.revived_dir = dir;
}

int
pool_revive_wait(struct pool_revival *r, double seconds, struct worker **w, char *why,
		 size_t why_len)
{
	(void)r;
	(void)seconds;
	*w = pool_take(0, why, why_len);
	return 1;
}

int
pool_revive_poll(struct pool_revival *r, struct worker **w, char *why, size_t why_len)
{
	return pool_revive_wait(r, 0, w, why, why_len);
}

void
pool_revive_leave(struct pool_revival *r)
{
	(void)r;
	pool_stub.revivals_left++;
}

void
parent_link_remove_dir(uint32_t dir)
{
	(void)dir;
	pool_stub.removed_dirs++;
}

void
parent_link_egress_bind(uint32_t worker, const char *session, const char *identity)
{
	(void)worker;
	(void)session;
	(void)identity;
}

static struct json_object *
result_ok(void)
{
	return json_tokener_parse("{\"success\":true,\"stdout\":\"\",\"stderr\":\"\","
				  "\"rich_outputs\":[],\"error\":null,\"execution_time\":0,"
				  "\"kernel_restarted\":false}");
}

void
pool_execute(struct worker *w, struct call *c, const char *code, double timeout_s, int silent)
{
	size_t used = strlen(pool_stub.order);
	snprintf(pool_stub.order + used, sizeof(pool_stub.order) - used, "%s%s", used ? ";" : "",
		 code);
	w->call = c;
	if (strcmp(code, "block") == 0) {
		unsigned long seen = unblocks;
		pool_stub.blocked++;
		pthread_cond_broadcast(&changed);
		while (unblocks == seen && w->call == c)
			pthread_cond_wait(&changed, pool_mutex());
		pool_stub.blocked--;
		c->result = w->call == c ? result_ok()
					 : result_failed("KeyboardInterrupt", "interrupted");
	} else if (strcmp(code, "fail") == 0) {
		c->result = result_failed("ValueError", "bad value");
	} else if (strcmp(code, "timeout") == 0) {
		c->result = result_failed("TimeoutError", "took too long");
	} else {
		c->result = result_ok();
	}
	w->call = NULL;
}

/* The stand-in runs the whole execution at its start: the wait finds it done. */
void
pool_execute_start(struct worker *w, struct call *c, const char *code, double timeout_s,
		   int silent)
{
	pool_execute(w, c, code, timeout_s, silent);
}

int
pool_execute_wait(struct worker *w, struct call *c, double seconds, int on_change)
{
	return 1;
}

void
pool_stream(struct worker *w, struct call *c)
{
	if (c->stream == CALL_STREAM_OFF)
		c->stream = CALL_STREAM_ON;
}

void
pool_interrupt(struct worker *w)
{
	pool_stub.interrupts++;
	w->call = NULL; /* a "block" execution sees it and ends */
	pthread_cond_broadcast(&changed);
}

void
stub_unblock(void)
{
	unblocks++;
	pthread_cond_broadcast(&changed);
}

int
stub_wait_blocked(int n)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	while (pool_stub.blocked < n)
		if (pthread_cond_timedwait(&changed, pool_mutex(), &deadline) == ETIMEDOUT)
			return -1;
	return 0;
}
