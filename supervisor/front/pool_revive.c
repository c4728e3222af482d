/* pool_revive.c - see pool_revive.h. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "parent_link.h"
#include "pool.h"
#include "priv_msg.h"

void
pool_revive_join(struct pool_revival *r, uint32_t dir)
{
	memset(r, 0, sizeof(*r));
	r->dir = dir;
	r->next = pool.revivals;
	pool.revivals = r;
	pool_wake();
}

static void
unlink_revival(struct pool_revival *r)
{
	for (struct pool_revival **pp = &pool.revivals; *pp; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			return;
		}
	}
}

/* 1 if r is over: a worker ready or failed, or a failed start. */
static int
revival_over(struct pool_revival *r, struct worker **w, char *why, size_t why_len)
{
	*w = NULL;
	if (r->w && r->w->state == WORKER_ASSIGNED) {
		*w = r->w;
	} else if (r->w && r->w->state == WORKER_DEAD) {
		snprintf(why, why_len, "the worker started in the session's directory %s before "
			 "its kernel was ready", r->w->death ? r->w->death : "died");
		r->w->keep_dir = 1; /* the session's still, for another try */
		pool_release(r->w);
	} else if (r->w == NULL && r->why[0]) {
		snprintf(why, why_len, "%s", r->why);
	} else if (pool.stopping) {
		snprintf(why, why_len, "the daemon is stopping");
		if (r->w) {
			r->w->keep_dir = 1;
			pool_release(r->w);
		}
	} else {
		return 0;
	}
	unlink_revival(r);
	r->w = NULL;
	return 1;
}

int
pool_revive_wait(struct pool_revival *r, double seconds, struct worker **w, char *why,
		 size_t why_len)
{
	if (revival_over(r, w, why, why_len))
		return 1;
	struct timespec until = clock_deadline(seconds < 0 ? 3600 : seconds);
	pthread_cond_timedwait(&pool.ready_cond, pool_mutex(), &until);
	return revival_over(r, w, why, why_len);
}

int
pool_revive_poll(struct pool_revival *r, struct worker **w, char *why, size_t why_len)
{
	return revival_over(r, w, why, why_len);
}

void
pool_revive_leave(struct pool_revival *r)
{
	if (r->w)
		pool_release(r->w); /* its directory goes with it */
	else if (!r->asked || r->why[0])
		parent_link_remove_dir(r->dir);
	/* Asked and not answered yet: pool_revive_serve ends what comes. */
	unlink_revival(r);
	r->w = NULL;
}

/* The revival `r` if it is still in the list (its caller may have left). */
static struct pool_revival *
still_waiting(struct pool_revival *r, uint32_t dir)
{
	for (struct pool_revival *x = pool.revivals; x; x = x->next)
		if (x == r && x->dir == dir && x->asked) /* never another at its address */
			return x;
	return NULL;
}

/* Whether a worker not reaped yet still has directory `dir` (a hibernated
 * session's, shutting down): the parent gives it to no other before. */
static int
dir_held(uint32_t dir)
{
	for (struct worker *w = pool.workers; w; w = w->next)
		if (w->dir_id == dir)
			return 1;
	return 0;
}

void
pool_revive_serve(void)
{
	char why[PRIV_REASON_MAX + 64];

	for (;;) {
		pool_lock();
		struct pool_revival *r = pool.revivals;
		while (r && (r->asked || dir_held(r->dir)))
			r = r->next;
		if (r == NULL || pool.stopping) {
			pool_unlock();
			return;
		}
		r->asked = 1;
		uint32_t dir = r->dir;
		pool_unlock();
		struct worker *w = pool_spawn_in(dir, why, sizeof(why));
		pool_lock();
		if (w) {
			w->reserved = w->owned = 1;
			w->generation = pool.generation;
			pool_adopt(w);
		}
		if (still_waiting(r, dir) == NULL) { /* its caller left: the directory goes */
			if (w)
				pool_release(w);
			else
				parent_link_remove_dir(dir);
		} else if (w) {
			r->w = w;
		} else {
			snprintf(r->why, sizeof(r->why), "%s", why);
		}
		pthread_cond_broadcast(&pool.ready_cond);
		pool_unlock();
	}
}
