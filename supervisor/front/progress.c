/* progress.c - see progress.h. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "buf.h"
#include "client_watch.h"
#include "config.h"
#include "job.h"
#include "pool.h"
#include "pool_exec.h"
#include "progress.h"
#include "rand.h"
#include "tools.h"
#include "xmalloc.h"

/*
 * The least time between two notifications, and before the first: output
 * that comes faster goes out together, and a call done sooner is answered
 * with its result alone.
 */
#define PROGRESS_GAP_S 0.25
/* How often a client whose socket the main loop cannot watch is looked at. */
#define PROGRESS_PROBE_S 0.25
/* The most output one notification carries; the result has all of it. */
#define PROGRESS_MAX_CHARS 65536

/* What one waiting client has been told. */
struct told {
	size_t out, err;  /* bytes of the call's stdout and stderr sent */
	int place;	  /* its place in the pool's queue, last said */
	unsigned notes;	  /* the call's upstream_notes, last said */
	double last_sent; /* monotonic s of the last notification (or the start) */
	double count;	  /* notifications sent */
};

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

/* j's place in the pool's queue while it waits for a kernel, else 0. */
static int
place_of(const struct job *j, int *len)
{
	return j->call.phase == CALL_TAKING ? pool_queue_position(&j->call.ticket, len) : 0;
}

/* Nonzero when j has something the client was not told: output, a new place. */
static int
news(const struct job *j, const struct told *t)
{
	int len;
	int pos = place_of(j, &len);
	return j->call.out.len > t->out || j->call.err.len > t->err || (pos && pos != t->place) ||
	       j->call.upstream_notes != t->notes;
}

/*
 * The notification due now, or NULL (caller frees): what was printed since
 * the last one, or while j waits for a kernel, its place when it moved or
 * when a heartbeat is due.
 */
static char *
notification(struct job *j, struct told *t, int heartbeat)
{
	struct buf msg;
	int len, pos = place_of(j, &len);

	if (pos && (pos != t->place || heartbeat)) {
		t->place = pos;
		return xasprintf("waiting for a kernel: position %d of %d", pos, len);
	}
	buf_init(&msg);
	take_new(&msg, &j->call.out, &t->out, NULL);
	take_new(&msg, &j->call.err, &t->err, "[stderr] ");
	/* Code mode: which upstream tool the code waits for, each time it changes. */
	if (j->call.upstream_notes != t->notes && j->call.upstream_note[0])
		buf_printf(&msg, "%scalling upstream %s", msg.len ? "\n" : "",
			   j->call.upstream_note);
	t->notes = j->call.upstream_notes;
	if (msg.len == 0 && !heartbeat) {
		buf_free(&msg);
		return NULL;
	}
	return buf_release(&msg);
}

/*
 * Seconds to sleep before something is due (-1: nothing is): the next
 * notification, the next look at a client the main loop cannot watch.
 * *on_change: whether an output or a move should end the sleep sooner.
 */
static double
sleep_for(struct tool_call *tc, struct job *j, const struct told *t,
	  const struct client_watch *cw, int *on_change)
{
	double now = clock_mono(), due = -1;

	*on_change = 1;
	if (tc->progress) {
		due = t->last_sent + tc->cfg->progress_interval_s;
		/* Told too recently: what comes meanwhile waits for the gap's end. */
		if (news(j, t)) {
			due = t->last_sent + PROGRESS_GAP_S;
			*on_change = 0;
		}
	}
	if (cw->fd < 0 && tc->client_gone && (due < 0 || due > now + PROGRESS_PROBE_S))
		due = now + PROGRESS_PROBE_S;
	if (due < 0)
		return -1;
	return due > now ? due - now : 0;
}

/* Tell the client what is due; nonzero if it is gone. Lock held. */
static int
tell(struct tool_call *tc, struct job *j, struct told *t, struct client_watch *cw)
{
	double now = clock_mono();
	int heartbeat = now - t->last_sent >= tc->cfg->progress_interval_s;
	char *text = NULL;

	if (tc->progress && (heartbeat || now - t->last_sent >= PROGRESS_GAP_S))
		text = notification(j, t, heartbeat);
	int look = tc->client_gone && (cw->fd < 0 || cw->hung_up);
	if (text == NULL && !look)
		return 0;
	/* Talking to the client may block: never with the lock held. */
	pool_unlock();
	int gone = look && tc->client_gone(tc->io);
	if (!gone && text)
		gone = tc->progress(tc->io, ++t->count, text) == -1;
	pool_lock();
	free(text);
	if (text)
		t->last_sent = clock_mono();
	/* A FIN without a reset: it half-closed and may still read. */
	if (!gone && look && cw->fd >= 0)
		client_watch_rearm(cw);
	return gone;
}

enum { ASK_NONE, ASK_GONE, ASK_INPUT };

void
progress_input_id(struct call *c)
{
	char hex[17];

	rand_hex(hex, 8);
	snprintf(c->input_id, sizeof(c->input_id), "codeexecd-input-%u-%s", c->id, hex);
}

/*
 * Ask the client for the line j's code waits for, once: under a fresh,
 * unguessable id set before the lock is let go, so an answer that comes
 * at once finds its call. ASK_GONE if the client is gone, ASK_INPUT for
 * the caller to ask (tc->input_required).
 */
static int
ask(struct tool_call *tc, struct job *j)
{
	struct call *c = &j->call;

	if (c->done || c->input_prompt == NULL || c->input_id[0] ||
	    (tc->elicit == NULL && !tc->input_required))
		return ASK_NONE;
	progress_input_id(c);
	if (tc->elicit == NULL)
		return ASK_INPUT;
	char *id = xstrdup(c->input_id), *prompt = xstrdup(c->input_prompt);
	pool_unlock();
	int gone = tc->elicit(tc->io, id, prompt) == -1;
	pool_lock();
	free(id);
	free(prompt);
	return gone ? ASK_GONE : ASK_NONE;
}

/* progress_wait, its client watched by cw. */
static int
drive(struct tool_call *tc, struct job *j, double seconds, struct client_watch *cw)
{
	double start = clock_mono();
	struct told t = {.last_sent = start};

	for (;;) {
		double left = seconds < 0 ? -1 : seconds - (clock_mono() - start);
		if (seconds >= 0 && left <= 0)
			return 0;
		int on_change;
		double s = sleep_for(tc, j, &t, cw, &on_change);
		if (left >= 0 && (s < 0 || left < s))
			s = left;
		if (job_run(j, s, on_change))
			return 1;
		int a = ask(tc, j);
		if (a == ASK_INPUT)
			return PROGRESS_INPUT;
		if (a == ASK_GONE || tell(tc, j, &t, cw)) {
			job_cancel(j);
			/* Give it a while to stop; what is left runs on without a driver. */
			double end = clock_mono() + 10, rest;
			while ((rest = end - clock_mono()) > 0)
				if (job_run(j, rest, 0))
					return 1;
			return 0;
		}
	}
}

int
progress_wait(struct tool_call *tc, struct job *j, double seconds)
{
	struct client_watch cw = {
		.fd = tc->client_gone && tc->client_fd ? tc->client_fd(tc->io) : -1,
		.wake = job_wake,
		.arg = j,
	};

	client_watch_add(&cw);
	j->call.asker = tc->elicit || tc->input_required;
	int done = drive(tc, j, seconds, &cw);
	/* Backgrounded, or gone: a prompt nobody will answer ends its input.
	 * One asked of a 2026-07-28 client waits for its retry. */
	if (done != PROGRESS_INPUT) {
		j->call.asker = 0;
		if (!done)
			pool_input_reply(&j->call, INPUT_EOF, NULL);
	}
	client_watch_remove(&cw);
	return done;
}
