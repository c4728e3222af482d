/* session.c - see session.h. */
#include "autoconf.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "handle.h"
#include "health.h"
#include "json_member.h"
#include "log.h"
#include "metrics.h"
#include "parent_link.h"
#include "pool.h"
#include "pylit.h"
#include "result.h"
#include "session.h"
#include "session_state.h"
#include "xmalloc.h"

/* How long a first execution may wait for a kernel from the pool. */
#define TAKE_WAIT_S 60

/* The table; guarded by pool_lock. */
static struct session *sessions;
/* Its length, changed under pool_lock, read without it by /health. */
static atomic_int session_total;
/* Sessions with a call running (busy), for /metrics; as session_total. */
static atomic_int busy_total;
/* Kernels of batch items, which count against pool.max_sessions too. */
static atomic_int held_kernels;
/* Sessions that hold no kernel: hibernated; as session_total. */
static atomic_int hibernated_total;
/* Told of each session that closes (main.c sets batch_session_closed). */
static void (*close_hook)(const char *id);
static int (*elsewhere)(const char *id);
static void (*before_close)(struct session *s);
static int (*close_needs_worker)(void);
static void (*after_run)(struct session *s, struct call *c);

int
session_count(void)
{
	return atomic_load(&session_total);
}

int
session_busy_count(void)
{
	return atomic_load(&busy_total);
}

/* Every change of s->busy goes here, so that /metrics needs no lock. */
static void
set_busy(struct session *s, int busy)
{
	if (s->busy != busy)
		atomic_fetch_add(&busy_total, busy ? 1 : -1);
	s->busy = busy;
}

void
session_hold_kernels(int delta)
{
	atomic_fetch_add(&held_kernels, delta);
}

int
session_kernels(void)
{
	return atomic_load(&session_total) - atomic_load(&hibernated_total) +
	       atomic_load(&held_kernels);
}

int
session_hibernated_count(void)
{
	return atomic_load(&hibernated_total);
}

void
session_take_worker(struct session *s, struct worker *w)
{
	s->worker = w;
	if (pool.cfg && pool.cfg->egress_allow.n > 0)
		parent_link_egress_bind(w->priv_id, s->id, s->identity);
}

void
session_set_hibernated(struct session *s, int on)
{
	if ((s->hibernated != 0) != on)
		atomic_fetch_add(&hibernated_total, on ? 1 : -1);
	s->hibernated = on ? time(NULL) : 0;
}

void
session_after_run(void (*fn)(struct session *s, struct call *c))
{
	after_run = fn;
}

void
session_close_needs_worker(int (*fn)(void))
{
	close_needs_worker = fn;
}

void
session_before_close(void (*fn)(struct session *s))
{
	before_close = fn;
}

void
session_busy_elsewhere(int (*fn)(const char *id))
{
	elsewhere = fn;
}

void
session_on_close(void (*fn)(const char *id))
{
	close_hook = fn;
}

struct session **
session_list_visible(const struct session *caller)
{
	size_t n = 0;
	struct session **list = xcalloc((size_t)session_count() + 1, sizeof(*list));

	for (struct session *s = sessions; s; s = s->next) {
		if (session_visible(caller, s)) {
			s->refs++;
			list[n++] = s;
		}
	}
	return list;
}

struct json_object *
session_describe(void)
{
	struct json_object *list = json_object_new_array();

	for (struct session *s = sessions; s; s = s->next) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "id", json_object_new_string(s->id));
		json_object_object_add(o, "identity", json_object_new_string(s->identity));
		json_object_object_add(o, "created", json_object_new_int64(s->created));
		json_object_object_add(o, "last_used", json_object_new_int64(s->last_used));
		json_object_object_add(o, "busy", json_object_new_boolean(s->busy));
		json_object_object_add(o, "hibernated", json_object_new_boolean(s->hibernated != 0));
		json_object_object_add(o, "worker_pid",
				       json_object_new_int(s->worker ? s->worker->pid : 0));
		json_object_object_add(o, "kernel_uid",
				       json_object_new_int(s->worker ? (int)s->worker->uid : 0));
		json_object_array_add(list, o);
	}
	return list;
}

/* Whether nothing runs in or waits for `s`, nor holds it, here or elsewhere. */
static int
quiet(const struct session *s)
{
	return !s->busy && s->requests == 0 && s->refs == 0 && s->line_head == NULL &&
	       (elsewhere == NULL || !elsewhere(s->id));
}

/*
 * pool.max_sessions kernels are held: hibernate the least recently used
 * quiet session that holds one, of any identity, since hibernation loses
 * nothing (session_hibernate_after 0: hibernation is off, none). 1 if one
 * hibernates now, or did already: its place is coming free.
 */
static int
hibernate_for_room(void)
{
	struct session *lru = NULL;

	if (pool.cfg == NULL || pool.cfg->session_hibernate_after <= 0)
		return 0;
	for (struct session *s = sessions; s; s = s->next) {
		if (s->hibernating)
			return 1;
		if (!s->hibernated && s->worker && s->worker->state == WORKER_ASSIGNED &&
		    s->worker->call == NULL && quiet(s) &&
		    (lru == NULL || s->last_used <= lru->last_used))
			lru = s;
	}
	if (lru == NULL)
		return 0;
	log_info("session %.8s of %s hibernates to make room (pool.max_sessions %d reached)",
		 lru->id, lru->identity, pool.cfg->pool_max_sessions);
	session_state_hibernate(lru);
	return lru->hibernating;
}

/* Sessions of `identity` in the table that hold a kernel (not hibernated,
 * nor hibernating: its kernel is as good as gone). */
static int
identity_holds(const char *identity)
{
	int n = 0;

	for (struct session *s = sessions; s; s = s->next)
		n += strcmp(s->identity, identity) == 0 && !s->hibernated && !s->hibernating;
	return n;
}

/*
 * The least recently used session of `identity` that nothing runs in or
 * waits for, here or elsewhere (its batches), and nobody holds: no
 * request in flight, nor the call that just made it and has yet to start
 * its code.
 */
static struct session *
identity_lru_idle(const char *identity)
{
	struct session *lru = NULL;

	for (struct session *s = sessions; s; s = s->next)
		if (strcmp(s->identity, identity) == 0 && !s->busy && s->refs == 0 && !s->hibernated &&
		    s->line_head == NULL && (elsewhere == NULL || !elsewhere(s->id)) &&
		    (lru == NULL || s->last_used <= lru->last_used))
			lru = s; /* newest first in the table: "<=" takes the oldest of a tie */
	return lru;
}

/*
 * Close idle sessions of `identity` while it holds its share or the pool
 * is full, least recently used first (hibernate them instead, with
 * session_hibernate_after, where they hold a kernel); the last closed one's id into
 * reclaimed[SESSION_ID_LEN + 1] and the key that bound it into *key.
 */
static void
reclaim_for(const char *identity, const struct session_limits *lim, char *reclaimed,
	    const char **key)
{
	/* With hibernation, nothing is closed: a full pool hibernates anyone's
	 * least recently used session (hibernate_for_room), the identity's
	 * share its own. */
	int hibernate = pool.cfg && pool.cfg->session_hibernate_after > 0;

	for (;;) {
		int full = !hibernate && session_kernels() >= lim->max_sessions;
		int over = identity_holds(identity) >= lim->share;
		struct session *s = (full || over) ? identity_lru_idle(identity) : NULL;
		if (s == NULL)
			return;
		if (hibernate && s->worker && s->worker->state == WORKER_ASSIGNED) {
			session_state_hibernate(s);
			if (s->hibernating) {
				log_info("session %.8s of %s hibernates to make room for a new one "
					 "(pool.max_sessions_per_identity %d reached)",
					 s->id, identity, lim->share);
				continue;
			}
		}
		*key = over ? "pool.max_sessions_per_identity" : "pool.max_sessions";
		memcpy(reclaimed, s->id, SESSION_ID_LEN + 1);
		log_info("session %.8s of %s closed to make room for a new one (%s %d reached)",
			 s->id, identity, *key, over ? lim->share : lim->max_sessions);
		metrics_session_reclaimed(over ? METRICS_RECLAIM_SHARE : METRICS_RECLAIM_POOL);
		session_close(s); /* may release the lock: count again */
	}
}

struct session *
session_create(const char *identity, const struct session_limits *lim, char *why,
	       size_t why_len)
{
	char reclaimed[SESSION_ID_LEN + 1] = "";
	const char *key = NULL;

	if (health_draining()) {
		err_set(why, why_len,
			"this node is draining (codeexecctl drain): it starts no new session, "
			"while its own go on; start the session on another node");
		return NULL;
	}
	reclaim_for(identity, lim, reclaimed, &key);
	if (session_kernels() >= lim->max_sessions && !hibernate_for_room()) {
		err_set(why, why_len,
			"the server has reached pool.max_sessions; close a session or retry later");
		return NULL;
	}
	if (identity_holds(identity) >= lim->share) {
		err_set(why, why_len,
			"%s already holds %d sessions (pool.max_sessions_per_identity), each "
			"running a call; retry when one ends, or close one", identity, lim->share);
		return NULL;
	}
	struct session *s = xcalloc(1, sizeof(*s));
	handle_mint(s->id);
	s->created = s->last_used = time(NULL);
	s->refs = 1;
	snprintf(s->identity, sizeof(s->identity), "%s", identity);
	memcpy(s->reclaimed, reclaimed, sizeof(s->reclaimed));
	s->reclaimed_by = key;
	pthread_cond_init(&s->turn, NULL);
	s->next = sessions;
	sessions = s;
	atomic_fetch_add(&session_total, 1);
	return s;
}

struct session *
session_adopt(const char *id, const char *identity, time_t created, time_t last_used)
{
	for (struct session *x = sessions; x; x = x->next)
		if (strcmp(x->id, id) == 0)
			return NULL;
	struct session *s = xcalloc(1, sizeof(*s));
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->identity, sizeof(s->identity), "%s", identity);
	s->created = created;
	s->last_used = last_used;
	pthread_cond_init(&s->turn, NULL);
	s->next = sessions;
	sessions = s;
	atomic_fetch_add(&session_total, 1);
	return s;
}

void
session_each(void (*fn)(struct session *s, void *arg), void *arg)
{
	for (struct session *s = sessions; s; s = s->next)
		fn(s, arg);
}

struct session *
session_transient(const char *identity)
{
	struct session *s = xcalloc(1, sizeof(*s));

	s->created = s->last_used = time(NULL);
	s->refs = 1;
	s->closed = 1; /* not in the table: session_close leaves it be */
	s->transient = 1;
	snprintf(s->identity, sizeof(s->identity), "%s", identity);
	pthread_cond_init(&s->turn, NULL);
	return s;
}

struct session *
session_get(const char *id)
{
	for (struct session *s = sessions; s; s = s->next) {
		if (strcmp(s->id, id) == 0) {
			s->refs++;
			return s;
		}
	}
	return NULL;
}

int
session_may_use(const struct session *caller, const struct session *target)
{
	return strcmp(caller->identity, target->identity) == 0;
}

int
session_visible(const struct session *caller, const struct session *target)
{
	if (strcmp(caller->identity, "anonymous") == 0)
		return caller == target;
	return session_may_use(caller, target);
}

/* Free `s` once it is closed and nobody holds it. */
static void
session_maybe_free(struct session *s)
{
	if (!s->closed || s->refs > 0)
		return;
	if (s->worker)
		pool_release(s->worker);
	if (s->revival) /* what was started for it goes, and its directory */
		pool_revive_leave(s->revival);
	else if (s->kept_dir)
		parent_link_remove_dir(s->kept_dir);
	free(s->revival);
	free(s->kept_workdir);
	pthread_cond_destroy(&s->turn);
	session_state_free(s);
	free(s->restart_note);
	free(s->upstream_use);
	free(s);
}

void
session_put(struct session *s)
{
	s->refs--;
	session_maybe_free(s);
}

void
session_close(struct session *s)
{
	if (s->closed)
		return;
	for (struct session **pp = &sessions; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			atomic_fetch_sub(&session_total, 1);
			break;
		}
	}
	s->closed = 1;
	session_set_hibernated(s, 0);
	s->refs++; /* the hook may release the lock */
	if (before_close)
		before_close(s);
	s->refs--;
	if (close_hook)
		close_hook(s->id);
	/* A running execution is stopped; its thread frees the session after. */
	if (s->busy && s->worker)
		pool_interrupt(s->worker);
	pthread_cond_broadcast(&s->turn);
	pthread_cond_broadcast(&pool.ready_cond); /* its call may wait for a kernel */
	log_debug("session %.8s closed", s->id);
	s->refs++;
	session_put(s);
}

/*
 * How long `s` may sit idle: unused_s for an execution session that no
 * call named again after the one that made it, else idle_s (0: forever).
 */
static double
idle_limit(const struct session *s, double idle_s, double unused_s)
{
	if (s->stateless && s->named == 0 && unused_s > 0 && (idle_s <= 0 || unused_s < idle_s))
		return unused_s;
	return idle_s;
}

void
session_expire(double idle_s, double unused_s)
{
	time_t now = time(NULL);

	/*
	 * From the head again after each close: closing may release the lock
	 * (on-close publishing), and the session after it may be gone by then.
	 */
again:
	for (struct session *s = sessions; s; s = s->next) {
		double limit = idle_limit(s, idle_s, unused_s);
		if (limit > 0 && !s->busy && s->requests == 0 &&
		    difftime(now, s->last_used) > limit) {
			int unused = limit != idle_s;
			log_info("session %.8s idle for %.0f s%s: closed", s->id, limit,
				 unused ? " after its only call (session_idle_timeout_unused)" : "");
			if (unused)
				metrics_session_reclaimed(METRICS_RECLAIM_UNUSED);
			session_close(s);
			goto again;
		}
	}
}

/* Hibernated sessions of `identity`. */
static int
hibernated_of(const char *identity)
{
	int n = 0;

	for (struct session *s = sessions; s; s = s->next)
		n += s->hibernated && strcmp(s->identity, identity) == 0;
	return n;
}

/*
 * The hibernated session to close past max_hibernated_sessions, or NULL:
 * the least recently used of the identity that holds the most, so that one
 * identity filling the slots (forks are born hibernated) closes its own
 * sessions, not the older ones of everyone else.
 */
static struct session *
lru_hibernated(void)
{
	struct session *lru = NULL;
	int most = 0;

	for (struct session *s = sessions; s; s = s->next) {
		if (!s->hibernated)
			continue;
		int n = hibernated_of(s->identity);
		if (n > most || (n == most && s->last_used <= lru->last_used)) {
			lru = s;
			most = n;
		}
	}
	return lru;
}

/* Whether a hibernated session's kernel is coming back now. */
static int
reviving_hibernated(void)
{
	for (const struct session *s = sessions; s; s = s->next)
		if (s->hibernated && s->revival)
			return 1;
	return 0;
}

/*
 * Close hibernated, quiet `s` (`why` says which bound): 1 once closed, 0
 * while a worker comes back to its directory first, for before_close
 * (close_needs_worker); a later tick closes it then. A call that comes
 * meanwhile takes that worker, and the session lives on. One at a time:
 * a start with many expired sessions must not start a kernel for each.
 */
static int
retire(struct session *s, const char *why)
{
	char err[ERR_LEN] = "";
	struct worker *w = NULL;

	if (close_needs_worker && close_needs_worker() && s->kept_dir) {
		if (s->revival == NULL) {
			if (reviving_hibernated())
				return 0;
			s->revival = xcalloc(1, sizeof(*s->revival));
			pool_revive_join(s->revival, s->kept_dir);
			log_info("session %.8s: %s; a worker comes back to its directory first, for "
				 "its outputs/", s->id, why);
			return 0;
		}
		if (!pool_revive_poll(s->revival, &w, err, sizeof(err)))
			return 0;
		free(s->revival);
		s->revival = NULL;
		if (w) {
			session_take_worker(s, w);
			w->session = s->id;
			s->kept_dir = 0;
		} else {
			log_warnx("session %.8s: no worker for its outputs/: %s", s->id, err);
		}
	}
	log_info("session %.8s closed: %s", s->id, why);
	session_close(s);
	return 1;
}

void
session_hibernate_idle(double after_s, double retention_s, int max_hibernated)
{
	time_t now = time(NULL);

again:
	for (struct session *s = sessions; s; s = s->next) {
		if (s->hibernated && retention_s > 0 && difftime(now, s->last_used) > retention_s &&
		    quiet(s)) {
			if (retire(s, "hibernated longer than session_retention"))
				goto again; /* closing may release the lock */
			continue;
		}
		if (!s->hibernated && after_s > 0 && difftime(now, s->last_used) > after_s &&
		    s->worker && s->worker->state == WORKER_ASSIGNED && s->worker->call == NULL &&
		    quiet(s) && now >= s->hibernate_retry)
			session_state_hibernate(s);
	}
	while (session_hibernated_count() > max_hibernated) {
		struct session *s = lru_hibernated();
		if (s == NULL || !quiet(s))
			break;
		if (!retire(s, "max_hibernated_sessions are hibernated"))
			break;
	}
}

int
session_any_busy(void)
{
	for (struct session *s = sessions; s; s = s->next)
		if (s->busy)
			return 1;
	return 0;
}

void
session_keep_all_dirs(void)
{
	for (struct session *s = sessions; s; s = s->next)
		if (s->worker)
			s->worker->keep_dir = 1;
}

void
session_close_all(void)
{
	while (sessions)
		session_close(sessions);
}

void
session_enqueue(struct session *s, struct call *c)
{
	c->next_in_line = NULL;
	if (s->line_tail)
		s->line_tail->next_in_line = c;
	else
		s->line_head = c;
	s->line_tail = c;
}

/* Take `c` out of the line, wherever it is, and let the next one look. */
static void
leave_line(struct session *s, struct call *c)
{
	struct call *prev = NULL;
	for (struct call *x = s->line_head; x; prev = x, x = x->next_in_line) {
		if (x != c)
			continue;
		if (prev)
			prev->next_in_line = c->next_in_line;
		else
			s->line_head = c->next_in_line;
		if (s->line_tail == c)
			s->line_tail = prev;
		break;
	}
	pthread_cond_broadcast(&s->turn);
}

/* Nonzero if `c` is in the session's line. */
static int
in_line(const struct session *s, const struct call *c)
{
	for (const struct call *x = s->line_head; x; x = x->next_in_line)
		if (x == c)
			return 1;
	return 0;
}

void
session_take_turn(struct session *s)
{
	set_busy(s, 1);
}

void
session_turn_over(struct session *s)
{
	set_busy(s, 0);
	pthread_cond_broadcast(&s->turn);
}

/* Call `c` has its result: free the kernel for the next in line if it ran
 * (`ran`), and wake whoever waits for it. Returns 1, for session_run. */
static int
call_ended(struct session *s, struct call *c, int ran)
{
	if (ran) {
		s->last_used = time(NULL);
		if (!session_state_after_call(s, c))
			session_turn_over(s);
	}
	c->phase = CALL_ENDED;
	c->done = 1;
	c->changes++;
	pthread_cond_broadcast(&c->cond);
	return 1;
}

char *
session_tell_identity(struct worker *w, const char *identity, pid_t *told)
{
	struct call c;
	struct json_object *v;
	char *note = NULL;
	/* A kernel whose pid was not proven (a pid namespace) is told once. */
	pid_t kernel = w->kernel_pid != 0 ? w->kernel_pid : -1;

	if (strcmp(identity, "anonymous") == 0 || kernel == *told)
		return NULL;
	char *lit = pylit(identity);
	char *code = xasprintf("import os as _codeexecd_os\n"
			       "_codeexecd_os.environ[\"USER_IDENTITY\"] = %s\n"
			       "del _codeexecd_os\n", lit);
	free(lit);
	call_init(&c);
	pool_execute(w, &c, code, 30, 1);
	*told = kernel;
	/* The first execution in a new kernel says so; this one must not eat it. */
	if (json_object_object_get_ex(c.result, "kernel_restarted", &v) &&
	    json_object_get_boolean(v))
		note = xstrdup(json_member_str(c.result, "stderr"));
	call_clear(&c);
	free(code);
	return note;
}

/* Give call c's result the restart its identity's silent execution saw. */
static void
carry_restart(struct session *s, struct call *c)
{
	if (s->restart_note == NULL || c->result == NULL)
		return;
	char *err = xasprintf("%s%s", s->restart_note, json_member_str(c->result, "stderr"));
	json_object_object_add(c->result, "stderr", json_object_new_string(err));
	json_object_object_add(c->result, "kernel_restarted", json_object_new_boolean(1));
	free(err);
	free(s->restart_note);
	s->restart_note = NULL;
}

/* Send c's code to the session's kernel, which it now has, after what the
 * daemon runs there first. 1 if c ended instead: the session closed, or c
 * was cancelled, while that ran. */
static int
call_send(struct session *s, struct call *c, const char *code, double timeout_s, int silent)
{
	s->worker->session = s->id;
	char *note = session_tell_identity(s->worker, s->identity, &s->told_kernel);
	if (note != NULL) {
		free(s->restart_note);
		s->restart_note = note;
	}
	session_state_revive(s);
	if (s->closed || c->cancelled) {
		c->result = result_failed(s->closed ? "SessionClosed" : "Cancelled",
					  s->closed ? "the session was closed"
						    : "cancelled before it started");
		return call_ended(s, c, 1);
	}
	/* Its kernel ran a checkpoint cell, which armed the checkpoint before a kill. */
	c->rescue_s = s->checkpoints > 0 && pool.cfg ? pool.cfg->checkpoint_max_seconds : 0;
	pool_execute_start(s->worker, c, code, timeout_s, silent);
	c->phase = CALL_RUNNING;
	return 0;
}

void
session_keep_dir(struct session *s)
{
	struct worker *w = s->worker;

	s->kept_dir = w->dir_id;
	free(s->kept_workdir);
	s->kept_workdir = w->workdir ? xstrdup(w->workdir) : NULL;
	w->keep_dir = 1;
	pool_release(w);
	s->worker = NULL;
	s->revive_due = 1;
}

/*
 * call_take for a session that kept its directory: wait for the worker
 * started there. A call cancelled meanwhile ends, the revival going on
 * for the session's next call.
 */
static int
call_revive(struct session *s, struct call *c, const char *code, double timeout_s, int silent,
	    double end, int on_change)
{
	char why[ERR_LEN] = "";
	struct worker *w;

	for (;;) {
		if (s->closed || c->cancelled) {
			c->result = result_failed(s->closed ? "SessionClosed" : "Cancelled",
						  s->closed ? "the session was closed"
							    : "cancelled while it waited for a kernel");
			return call_ended(s, c, 1);
		}
		double left = end < 0 ? -1 : end - clock_mono();
		if (end >= 0 && left <= 0)
			return 0;
		if (pool_revive_wait(s->revival, left, &w, why, sizeof(why)))
			break;
		if (on_change)
			return 0;
	}
	free(s->revival);
	s->revival = NULL;
	if (w == NULL) {
		char *msg = xasprintf("the session's worker died, and a new one could not be "
				      "started in its directory: %s",
				      why);
		c->result = result_failed("WorkerDied", msg);
		free(msg);
		return call_ended(s, c, 1);
	}
	s->kept_dir = 0;
	session_take_worker(s, w);
	s->told_kernel = 0;
	session_set_hibernated(s, 0);
	/* As the worker says of a kernel it restarted; a restored checkpoint's
	 * line replaces it (session_state.h). */
	free(s->restart_note);
	s->restart_note = xasprintf("[codeexecd] %s and a new kernel was started in its "
				    "directory; variables from earlier calls are lost\n",
				    s->lost_because ? s->lost_because : "the session's worker died");
	s->lost_because = NULL;
	log_info("session %.8s of %s: a new worker in its directory, kernel pid %d, uid %d", s->id,
		 s->identity, (int)w->kernel_pid, (int)w->uid);
	return call_send(s, c, code, timeout_s, silent);
}

/* c's turn has come, unless the session closed or the call was cancelled:
 * send the code, or join the pool's queue for a kernel. 1 if it ended. */
static int
call_begin(struct session *s, struct call *c, const char *code, double timeout_s, int silent)
{
	leave_line(s, c);
	if (s->closed) {
		c->result = result_failed("SessionClosed", "the session was closed");
		return call_ended(s, c, 0);
	}
	if (c->cancelled) {
		c->result = result_failed("Cancelled", "cancelled before it started");
		return call_ended(s, c, 0);
	}
	set_busy(s, 1);
	if (s->worker)
		pool_settle_hung_up(s->worker);
	if (s->worker && s->worker->state == WORKER_DEAD) {
		log_info("session %.8s: its worker %s; a new one starts in its directory", s->id,
			 s->worker->death ? s->worker->death : "died");
		session_keep_dir(s);
	}
	if (s->worker == NULL) {
		if (s->kept_dir && s->revival == NULL) {
			/* Its kernel comes back: make room, as a new session would. */
			if (s->hibernated && pool.cfg &&
			    session_kernels() >= pool.cfg->pool_max_sessions)
				hibernate_for_room();
			s->revival = xcalloc(1, sizeof(*s->revival));
			pool_revive_join(s->revival, s->kept_dir);
		} else if (s->revival == NULL) {
			pool_queue_join(&c->ticket);
		}
		c->phase = CALL_TAKING;
		return 0;
	}
	return call_send(s, c, code, timeout_s, silent);
}

/*
 * c waits in the pool's queue for its session's first kernel, until
 * monotonic `end` (<0: no bound), or with `on_change` until the queue
 * moves or the driver is woken: 0 then, c keeping its place. 1 if it
 * ended: no kernel came, or the session closed or the call was cancelled
 * meanwhile (job_cancel and session_close wake the queue).
 */
static int
call_take(struct session *s, struct call *c, const char *code, double timeout_s, int silent,
	  double end, int on_change)
{
	char why[ERR_LEN] = "";
	struct worker *w;

	if (s->revival)
		return call_revive(s, c, code, timeout_s, silent, end, on_change);
	for (;;) {
		if (s->closed || c->cancelled) {
			const char *why_not = s->closed ? "the session was closed"
							: "cancelled while it waited for a kernel";
			pool_queue_leave(&c->ticket);
			c->result =
				result_failed(s->closed ? "SessionClosed" : "Cancelled", why_not);
			return call_ended(s, c, 1);
		}
		double left = end < 0 ? -1 : end - clock_mono();
		if (end >= 0 && left <= 0)
			return 0;
		if (pool_queue_wait(&c->ticket, TAKE_WAIT_S, left, &w, why, sizeof(why)))
			break;
		if (on_change)
			return 0; /* the queue moved, or the driver was woken */
	}
	if (w == NULL) {
		c->result = result_failed("NoKernel", why);
		return call_ended(s, c, 1);
	}
	session_take_worker(s, w);
	/* Which identity holds which kernel uid (kernel_uid_range). */
	log_info("session %.8s of %s takes kernel pid %d, uid %d", s->id, s->identity,
		 (int)w->kernel_pid, (int)w->uid);
	return call_send(s, c, code, timeout_s, silent);
}

int
session_run(struct session *s, struct call *c, const char *code, double timeout_s, int silent,
	    double seconds, int on_change)
{
	unsigned long seen = c->changes;
	struct timespec until = clock_deadline(seconds < 0 ? 0 : seconds);
	double start = clock_mono();

	if (c->phase == CALL_NEW) {
		c->silent = silent;
		if (!in_line(s, c))
			session_enqueue(s, c);
		/* Waiting for earlier executions counts against this call's timeout. */
		c->turn_deadline = clock_deadline(timeout_s);
		c->phase = CALL_IN_LINE;
	}
	if (c->phase == CALL_IN_LINE) {
		const struct timespec *d = seconds < 0 ? &c->turn_deadline
						       : clock_earlier(&c->turn_deadline, &until);
		while ((s->busy || s->line_head != c) && !s->closed && !c->cancelled) {
			if (on_change && c->changes != seen)
				return 0;
			if (pthread_cond_timedwait(&s->turn, pool_mutex(), d) != ETIMEDOUT)
				continue;
			if (d != &c->turn_deadline)
				return 0;
			leave_line(s, c);
			c->result = result_failed("TimeoutError",
						  "an earlier execution of this session was still "
						  "running when this call's timeout expired");
			return call_ended(s, c, 0);
		}
		if (call_begin(s, c, code, timeout_s, silent))
			return 1;
	}
	if (c->phase == CALL_TAKING) {
		if (call_take(s, c, code, timeout_s, silent, seconds < 0 ? -1 : start + seconds,
			      on_change))
			return 1;
		if (c->phase == CALL_TAKING)
			return 0; /* `seconds` passed */
	}
	if (c->phase == CALL_RUNNING) {
		double left = seconds < 0 ? -1 : seconds - (clock_mono() - start);
		if (!pool_execute_wait(s->worker, c, seconds < 0 || left > 0 ? left : 0, on_change))
			return 0;
		if (c->kind == CALL_EXECUTE) {
			carry_restart(s, c);
			session_state_result(s, c);
			/* Still busy: nothing else runs on the worker while the hook works. */
			if (after_run)
				after_run(s, c);
		}
		return call_ended(s, c, 1);
	}
	return 1;
}

void
session_execute(struct session *s, struct call *c, const char *code, double timeout_s, int silent)
{
	session_run(s, c, code, timeout_s, silent, -1, 0);
}
