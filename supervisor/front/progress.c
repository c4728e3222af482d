/* progress.c - see progress.h. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "buf.h"
#include "config.h"
#include "job.h"
#include "pool.h"
#include "progress.h"
#include "tools.h"
#include "xmalloc.h"

/* How often a waiting call looks at its client and its output. */
#define PROGRESS_TICK_S 0.25
/* The most output one notification carries; the result has all of it. */
#define PROGRESS_MAX_CHARS 65536

/* Append what `b` holds past *sent to `msg`, bounded; advance *sent. */
static void
take_new(struct buf *msg, const struct buf *b, size_t *sent, const char *label)
{
	if (b->len <= *sent)
		return;
	size_t n = b->len - *sent;
	if (label)
		buf_adds(msg, label);
	if (n > PROGRESS_MAX_CHARS) {
		buf_add(msg, b->data + *sent, PROGRESS_MAX_CHARS);
		buf_printf(msg, "\n[... %zu more characters in the result]\n",
			   n - PROGRESS_MAX_CHARS);
	} else {
		buf_add(msg, b->data + *sent, n);
	}
	*sent = b->len;
}

/*
 * While j waits for a kernel, its place in the pool's queue, when it moved
 * from *told (then updated) or `due`: caller frees. Else NULL.
 */
static char *
queue_place(struct job *j, int *told, int due)
{
	int len, pos;

	if (j->call.phase != CALL_TAKING ||
	    (pos = pool_queue_position(&j->call.ticket, &len)) == 0)
		return NULL;
	if (pos == *told && !due)
		return NULL;
	*told = pos;
	return xasprintf("waiting for a kernel: position %d of %d", pos, len);
}

int
progress_wait(struct tool_call *tc, struct job *j, double seconds)
{
	double start = clock_mono(), last_sent = start;
	size_t out_sent = 0, err_sent = 0;
	double count = 0;
	int place_told = 0;

	for (;;) {
		double left = seconds < 0 ? PROGRESS_TICK_S : seconds - (clock_mono() - start);
		if (left <= 0)
			return 0;
		if (job_run(j, left < PROGRESS_TICK_S ? left : PROGRESS_TICK_S))
			return 1;

		struct buf msg;
		buf_init(&msg);
		if (tc->progress) {
			take_new(&msg, &j->call.out, &out_sent, NULL);
			take_new(&msg, &j->call.err, &err_sent, "[stderr] ");
		}
		int due = tc->progress && (msg.len > 0 ||
					   clock_mono() - last_sent >= tc->cfg->progress_interval_s);
		char *text = due ? buf_release(&msg) : NULL;
		buf_free(&msg);
		/* Waiting for a kernel, it prints nothing: say where it stands. */
		char *place = tc->progress ? queue_place(j, &place_told, due) : NULL;
		if (place) {
			free(text);
			text = place;
			due = 1;
		}

		/* Talking to the client may block: never with the lock held. */
		pool_unlock();
		int gone = tc->client_gone && tc->client_gone(tc->io);
		if (!gone && text)
			gone = tc->progress(tc->io, ++count, text) == -1;
		pool_lock();
		free(text);
		if (due)
			last_sent = clock_mono();
		if (gone) {
			job_cancel(j);
			return job_run(j, 10);
		}
	}
}
