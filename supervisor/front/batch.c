/* batch.c - see batch.h. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batch.h"
#include "batch_from.h"
#include "config.h"
#include "handle.h"
#include "ipc.h"
#include "log.h"
#include "pool.h"
#include "pylit.h"
#include "session.h"
#include "xmalloc.h"

/* How long an item waits for a kernel from the pool: in its queue, with
 * the sessions' first calls, in arrival order (pool_take). */
#define ITEM_TAKE_WAIT_S 120
/* Seconds to read the result variable back. */
#define FETCH_TIMEOUT_S 30

enum item_status { ITEM_PENDING, ITEM_RUNNING, ITEM_COMPLETED, ITEM_FAILED, ITEM_CANCELLED };

struct item {
	struct json_object *input;
	enum item_status status;
	struct worker *w;	   /* its kernel while it runs, for a cancel (both locks) */
	struct json_object *value; /* result_variable, once completed */
	struct json_object *error; /* {type, message}, once failed */
	char *stdout_text;
};

struct batch {
	struct batch *next;
	char id[SESSION_ID_LEN + 1];
	char owner[SESSION_ID_LEN + 1];
	char identity[128];	/* of the owner session, for USER_IDENTITY */
	char *code;
	char *result_variable;
	double timeout_s;
	int concurrency;
	uint32_t from_dir; /* a session directory each item's kernel starts from; 0: none */
	char *from_checkpoint; /* the checkpoint of it each item loads; NULL: the latest */
	size_t n, next_item, running, finished;
	struct item *items;
	int cancelled;	/* by cancel_batch or the end of its session (both locks) */
	time_t ended; /* 0 while running */
};

/* batch_lock: the table, every batch and every item (see batch.h). */
static pthread_mutex_t batch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct batch *batches;
static const struct config *cfg;
static const char *
item_status_name(enum item_status st)
{
	static const char *const names[] = {"pending", "running", "completed", "failed",
					    "cancelled"};
	return names[st];
}

/* Python that binds the input's keys as globals. Caller owns. */
static char *
binding_code(struct json_object *input)
{
	const char *json = json_object_to_json_string_ext(input, JSON_C_TO_STRING_PLAIN);
	struct buf b;

	buf_init(&b);
	buf_adds(&b, "globals().update(__import__('json').loads(");
	pylit_str(&b, json, strlen(json));
	buf_adds(&b, "))");
	return buf_release(&b);
}

/* The `error` member of a failed result, or a generic one. Caller owns. */
static struct json_object *
result_error(struct json_object *result)
{
	struct json_object *err;
	if (json_object_object_get_ex(result, "error", &err) &&
	    json_object_is_type(err, json_type_object))
		return json_object_get(err);
	struct json_object *e = json_object_new_object();
	json_object_object_add(e, "type", json_object_new_string("Error"));
	json_object_object_add(e, "message", json_object_new_string("no result"));
	return e;
}

static int
result_ok(struct json_object *result)
{
	struct json_object *ok;
	return json_object_object_get_ex(result, "success", &ok) && json_object_get_boolean(ok);
}

/* Run one piece of Python in `w`; returns the result (caller owns). */
static struct json_object *
run_in(struct worker *w, const char *code, double timeout_s, int silent, char **out)
{
	struct call c;
	call_init(&c);
	pool_execute(w, &c, code, timeout_s, silent);
	struct json_object *r = json_object_get(c.result), *text;
	/* Nobody streams it: its stdout comes in the result. */
	if (out)
		*out = xstrdup(json_object_object_get_ex(r, "stdout", &text)
				       ? json_object_get_string(text) : "");
	call_clear(&c);
	return r;
}

/* The error of an item its batch's cancel ended. Caller owns. */
static struct json_object *
cancelled_error(void)
{
	struct json_object *e = json_object_new_object();

	json_object_object_add(e, "type", json_object_new_string("Cancelled"));
	json_object_object_add(e, "message", json_object_new_string("the batch was cancelled"));
	return e;
}

/*
 * Record how item `it` of `b` ended (error, value and out consumed); a
 * cancelled batch's item ends cancelled whatever it did.
 */
static void
item_finish(struct batch *b, struct item *it, struct json_object *error,
	    struct json_object *value, char *out)
{
	pthread_mutex_lock(&batch_lock);
	if (b->cancelled) {
		json_object_put(error);
		json_object_put(value);
		error = cancelled_error();
		value = NULL;
	}
	it->error = error;
	it->value = value;
	it->stdout_text = out;
	it->status = b->cancelled ? ITEM_CANCELLED : error ? ITEM_FAILED : ITEM_COMPLETED;
	pthread_mutex_unlock(&batch_lock);
}

/*
 * Bind, run, read back: the whole of one item, in worker `w`. pool_lock
 * held; the code, input and variable name of a batch never change, and
 * `cancelled` changes only under pool_lock too. The value comes back as
 * the RESULT's "value" (a display of IPC_VALUE_MIME), so neither its size
 * nor stdout limits it.
 */
static void
run_item(struct batch *b, struct item *it, struct worker *w)
{
	char *out = NULL;
	struct json_object *v;
	char *bind = binding_code(it->input);
	struct json_object *r = run_in(w, bind, FETCH_TIMEOUT_S, 1, NULL);
	free(bind);
	if (result_ok(r) && !b->cancelled) {
		json_object_put(r);
		r = run_in(w, b->code, b->timeout_s, 0, &out);
	}
	if (!result_ok(r) || b->cancelled) {
		item_finish(b, it, result_error(r), NULL, out);
		json_object_put(r);
		return;
	}
	json_object_put(r);
	/* Through JSON and back: what cannot be JSON fails here, with its error. */
	char *fetch = xasprintf("__import__('IPython').display.display({'" IPC_VALUE_MIME "': "
				"__import__('json').loads(__import__('json').dumps(%s))}, raw=True)",
				b->result_variable);
	r = run_in(w, fetch, FETCH_TIMEOUT_S, 1, NULL);
	free(fetch);
	if (result_ok(r)) {
		/* A value of None is left out of the RESULT: absent means null. */
		v = json_object_object_get(r, "value");
		item_finish(b, it, NULL, json_object_get(v), out);
	} else {
		item_finish(b, it, result_error(r), NULL, out);
	}
	json_object_put(r);
}

static void start_items(struct batch *b);
static void kick(void);

struct item_run {
	struct batch *b;
	struct item *it;
};

/* An item's thread: a kernel of its own, the item, then the kernel ends. */
static void *
item_thread(void *arg)
{
	struct item_run *run = arg;
	char why[ERR_LEN] = "";

	pool_lock();
	struct worker *w = NULL;
	if (!run->b->cancelled && run->b->from_dir)
		w = batch_from_kernel(cfg, run->b->from_dir, run->b->from_checkpoint,
				      ITEM_TAKE_WAIT_S, why, sizeof(why));
	else if (!run->b->cancelled)
		w = pool_take(ITEM_TAKE_WAIT_S, why, sizeof(why));
	if (run->b->cancelled) {
		item_finish(run->b, run->it, NULL, NULL, NULL);
	} else if (w == NULL) {
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "type", json_object_new_string("NoKernel"));
		json_object_object_add(e, "message", json_object_new_string(why));
		item_finish(run->b, run->it, e, NULL, NULL);
	} else {
		pid_t told = 0;
		/* A fresh kernel (or one with a checkpoint just loaded): no restart to report. */
		free(session_tell_identity(w, run->b->identity, &told));
		pthread_mutex_lock(&batch_lock);
		run->it->w = w;
		pthread_mutex_unlock(&batch_lock);
		run_item(run->b, run->it, w);
		pthread_mutex_lock(&batch_lock);
		run->it->w = NULL;
		pthread_mutex_unlock(&batch_lock);
	}
	if (w)
		pool_release(w);
	pool_unlock();
	pthread_mutex_lock(&batch_lock);
	session_hold_kernels(-1);
	run->b->running--;
	run->b->finished++;
	start_items(run->b);
	kick(); /* a place in pool.max_sessions is free */
	pthread_mutex_unlock(&batch_lock);
	free(run);
	return NULL;
}

/* Whether a kernel may start for an item: sessions and batch kernels together. */
static int
place_free(void)
{
	return session_kernels() < cfg->pool_max_sessions;
}

/* End the batch once every item has (a cancelled batch's pending ones at once). */
static void
maybe_end(struct batch *b)
{
	if (b->cancelled) {
		for (; b->next_item < b->n; b->next_item++) {
			b->items[b->next_item].error = cancelled_error();
			b->items[b->next_item].status = ITEM_CANCELLED;
			b->finished++;
		}
	}
	if (b->finished == b->n && b->ended == 0) {
		b->ended = time(NULL);
		log_info("batch %.8s %s: %zu items", b->id, b->cancelled ? "cancelled" : "finished",
			 b->n);
	}
}

/*
 * Start pending items while fewer than `concurrency` run and a kernel may
 * start. batch_lock held.
 */
static void
start_items(struct batch *b)
{
	while (!b->cancelled && b->next_item < b->n && (int)b->running < b->concurrency &&
	       place_free()) {
		struct item_run *run = xmalloc(sizeof(*run));
		pthread_attr_t attr;
		pthread_t tid;

		run->b = b;
		run->it = &b->items[b->next_item++];
		run->it->status = ITEM_RUNNING;
		b->running++;
		session_hold_kernels(1);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		int rc = pthread_create(&tid, &attr, item_thread, run);
		pthread_attr_destroy(&attr);
		if (rc != 0) {
			errno = rc;
			fatal("pthread_create for a batch item");
		}
	}
	maybe_end(b);
}

/* Start pending items of every batch while there is room. batch_lock held. */
static void
kick(void)
{
	for (struct batch *b = batches; b && place_free(); b = b->next)
		start_items(b);
}

const char *
batch_start(const struct config *c, const char *owner, const char *identity, const char *code,
	    struct json_object *inputs, double timeout_s, const char *result_variable,
	    int concurrency, uint32_t from_dir, const char *from_checkpoint)
{
	struct batch *b = xcalloc(1, sizeof(*b));

	cfg = c;
	handle_mint(b->id);
	snprintf(b->owner, sizeof(b->owner), "%s", owner);
	snprintf(b->identity, sizeof(b->identity), "%s", identity);
	b->code = xstrdup(code);
	b->result_variable = xstrdup(result_variable);
	b->timeout_s = timeout_s;
	b->concurrency = concurrency;
	b->from_dir = from_dir;
	b->from_checkpoint = from_checkpoint ? xstrdup(from_checkpoint) : NULL;
	b->n = json_object_array_length(inputs);
	b->items = xcalloc(b->n, sizeof(*b->items));
	for (size_t i = 0; i < b->n; i++)
		b->items[i].input = json_object_get(json_object_array_get_idx(inputs, i));
	log_info("batch %.8s started: %zu items, %d at once", b->id, b->n, concurrency);
	pthread_mutex_lock(&batch_lock);
	b->next = batches;
	batches = b;
	start_items(b);
	pthread_mutex_unlock(&batch_lock);
	return b->id;
}

static struct json_object *
item_report(size_t index, const struct item *it)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "index", json_object_new_int64((int64_t)index));
	json_object_object_add(o, "status", json_object_new_string(item_status_name(it->status)));
	if (it->status == ITEM_COMPLETED)
		json_object_object_add(o, "result", json_object_get(it->value));
	if (it->error)
		json_object_object_add(o, "error", json_object_get(it->error));
	if (it->stdout_text && it->stdout_text[0])
		json_object_object_add(o, "stdout", json_object_new_string(it->stdout_text));
	return o;
}

struct json_object *
batch_report(const char *id, const char *owner)
{
	struct batch *b;
	size_t failed = 0;

	pthread_mutex_lock(&batch_lock);
	for (b = batches; b; b = b->next)
		if (strcmp(b->id, id) == 0 && strcmp(b->owner, owner) == 0)
			break;
	if (b == NULL) {
		pthread_mutex_unlock(&batch_lock);
		return NULL;
	}
	struct json_object *o = json_object_new_object();
	struct json_object *items = json_object_new_array();
	for (size_t i = 0; i < b->n; i++) {
		failed += b->items[i].status == ITEM_FAILED;
		json_object_array_add(items, item_report(i, &b->items[i]));
	}
	json_object_object_add(o, "batch_id", json_object_new_string(b->id));
	json_object_object_add(o, "status",
			       json_object_new_string(b->cancelled ? (b->ended ? "cancelled"
										: "cancelling")
							   : b->ended ? "completed"
								      : "running"));
	json_object_object_add(o, "total", json_object_new_int64((int64_t)b->n));
	json_object_object_add(o, "finished", json_object_new_int64((int64_t)b->finished));
	json_object_object_add(o, "failed", json_object_new_int64((int64_t)failed));
	json_object_object_add(o, "running", json_object_new_int64((int64_t)b->running));
	json_object_object_add(o, "items", items);
	pthread_mutex_unlock(&batch_lock);
	return o;
}

/* Cancel b: pending items never start, running ones are interrupted. Both locks held. */
static void
cancel(struct batch *b)
{
	if (b->cancelled || b->ended)
		return;
	b->cancelled = 1;
	for (size_t i = 0; i < b->n; i++)
		if (b->items[i].w)
			pool_interrupt(b->items[i].w);
	maybe_end(b);
}

struct json_object *
batch_cancel(const char *id, const char *owner)
{
	struct batch *b;

	pthread_mutex_lock(&batch_lock);
	for (b = batches; b; b = b->next)
		if (strcmp(b->id, id) == 0 && strcmp(b->owner, owner) == 0)
			break;
	if (b)
		cancel(b);
	pthread_mutex_unlock(&batch_lock);
	return b ? batch_report(id, owner) : NULL;
}

void
batch_session_closed(const char *owner)
{
	pthread_mutex_lock(&batch_lock);
	for (struct batch *b = batches; b; b = b->next) {
		if (strcmp(b->owner, owner) == 0 && !b->ended) {
			log_info("batch %.8s: its session ended; cancelling it", b->id);
			cancel(b);
		}
	}
	pthread_mutex_unlock(&batch_lock);
}

int
batch_running(const char *owner)
{
	int running = 0;

	pthread_mutex_lock(&batch_lock);
	for (struct batch *b = batches; b && !running; b = b->next)
		running = strcmp(b->owner, owner) == 0 && !b->ended;
	pthread_mutex_unlock(&batch_lock);
	return running;
}

/* Unlink and free a finished batch. batch_lock held. */
static void
batch_free(struct batch *b)
{
	for (struct batch **pp = &batches; *pp; pp = &(*pp)->next) {
		if (*pp == b) {
			*pp = b->next;
			break;
		}
	}
	for (size_t i = 0; i < b->n; i++) {
		json_object_put(b->items[i].input);
		json_object_put(b->items[i].value);
		json_object_put(b->items[i].error);
		free(b->items[i].stdout_text);
	}
	free(b->items);
	free(b->code);
	free(b->from_checkpoint);
	free(b->result_variable);
	free(b);
}

void
batch_expire(int retention_s)
{
	time_t now = time(NULL);
	struct batch *b, *next;

	pthread_mutex_lock(&batch_lock);
	for (b = batches; b; b = next) {
		next = b->next;
		if (b->ended && difftime(now, b->ended) >= retention_s)
			batch_free(b);
	}
	if (cfg)
		kick(); /* sessions may have ended since */
	pthread_mutex_unlock(&batch_lock);
}
