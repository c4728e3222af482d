/* session_state.c - see session_state.h. */
#include "autoconf.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checkpoint_cell.h"
#include "clock.h"
#include "config.h"
#include "json_member.h"
#include "kernelspec.h"
#include "log.h"
#include "pool.h"
#include "session.h"
#include "session_state.h"
#include "xmalloc.h"

static const struct config *state_cfg;
static int stopping; /* session_state_stop: every checkpoint is the stop's */
static struct session *due_head, *due_tail; /* sessions waiting for the saver */
static pthread_cond_t due_cond = PTHREAD_COND_INITIALIZER;

/* Whether `result` ended in a way that may have replaced the kernel: it
 * died or was killed, or a timeout or cancel may have ended it. */
static int
kernel_may_be_new(struct json_object *result)
{
	static const char *const types[] = {"KernelDied", "MemoryLimitExceeded", "WorkerDied",
					    "TimeoutError", "Cancelled", NULL};
	struct json_object *e, *t, *restarted;

	if (json_object_object_get_ex(result, "kernel_restarted", &restarted) &&
	    json_object_get_boolean(restarted))
		return 1;
	if (!json_object_object_get_ex(result, "error", &e) ||
	    !json_object_object_get_ex(e, "type", &t))
		return 0;
	for (size_t i = 0; types[i]; i++)
		if (strcmp(json_object_get_string(t), types[i]) == 0)
			return 1;
	return 0;
}

/* A daemon's cell that was the new kernel's first took the restart note,
 * which belongs to the agent's next result. */
static void
keep_restart_note(struct session *s, struct json_object *result)
{
	struct json_object *v;

	if (!json_object_object_get_ex(result, "kernel_restarted", &v) ||
	    !json_object_get_boolean(v))
		return;
	char *note = xasprintf("%s%s", s->restart_note ? s->restart_note : "",
			       json_member_str(result, "stderr"));
	free(s->restart_note);
	s->restart_note = note;
	s->revive_due = 1;
	s->told_kernel = 0;
}

/* Run the cell for `op` in s's kernel; what it printed, or NULL with
 * *failed set to {type, message} (caller owns either). Lock held. */
static struct json_object *
run_cell(struct session *s, const char *op, const char *arg, struct json_object **failed)
{
	struct call c;
	char *code = checkpoint_cell(state_cfg, s->worker->workdir, op, arg);

	call_init(&c);
	pool_execute(s->worker, &c, code, state_cfg->checkpoint_max_seconds + CHECKPOINT_CELL_SLACK_S, 1);
	free(code);
	keep_restart_note(s, c.result);
	struct json_object *o = checkpoint_answer(c.result, op), *e;
	*failed = NULL;
	if (o && json_object_object_get_ex(o, "error", &e)) {
		*failed = json_object_get(e);
		json_object_put(o);
		o = NULL;
	} else if (o == NULL && json_object_object_get_ex(c.result, "error", &e) &&
		   json_object_is_type(e, json_type_object)) {
		*failed = json_object_new_object();
		json_object_object_add(*failed, "type", json_object_new_string("CheckpointFailed"));
		json_object_object_add(*failed, "message", json_object_get(json_object_object_get(e, "message")));
	} else if (o == NULL) {
		*failed = json_object_new_object();
		json_object_object_add(*failed, "type", json_object_new_string("CheckpointFailed"));
		json_object_object_add(*failed, "message",
				       json_object_new_string("the kernel's answer was not understood"));
	}
	call_clear(&c);
	return o;
}

static int
usable(const struct session *s)
{
	return !s->closed && s->worker != NULL && s->worker->state != WORKER_DEAD;
}

/* After a hibernation's checkpoint `o` (or `failed`): end its kernel, or
 * keep it if the checkpoint failed. */
static void
hibernate(struct session *s, struct json_object *o, struct json_object *failed)
{
	s->hibernating = 0;
	if (failed || o == NULL || !usable(s)) {
		s->hibernate_retry = time(NULL) + (state_cfg->session_hibernate_after > 0
							   ? state_cfg->session_hibernate_after
							   : 60);
		if (failed)
			log_warnx("session %.8s does not hibernate: its checkpoint failed (%s)",
				  s->id, json_member_str(failed, "message"));
		return;
	}
	const char *id = json_object_object_get_ex(o, "checkpoint", NULL)
				 ? json_member_str(o, "checkpoint")
				 : "unchanged";
	if (stopping)
		log_info("session %.8s of %s hibernated for the next start (checkpoint %s)", s->id,
			 s->identity, id);
	else
		log_info("session %.8s of %s idle for %d s: hibernated (checkpoint %s)", s->id,
			 s->identity, state_cfg->session_hibernate_after, id);
	session_keep_dir(s);
	session_set_hibernated(s, 1);
}

/* The saver's work on one session, its turn held. */
static void
autosave(struct session *s)
{
	struct json_object *failed, *o;

	if (!usable(s)) {
		s->hibernating = 0;
		return;
	}
	o = run_cell(s, "autosave",
		     stopping ? "shutdown" : s->hibernating ? "hibernation" : "automatic", &failed);
	if (s->hibernating) {
		/* A kernel that kept its state had it checkpointed: nothing new is lost. */
		if (!failed && !json_object_object_get_ex(o, "kept", NULL))
			s->checkpoints++;
		hibernate(s, o, failed);
		json_object_put(failed);
		json_object_put(o);
		return;
	}
	json_object_put(s->save_failed);
	s->save_failed = failed;
	/* A failed one too: the next try waits as long, not one per call. */
	s->checkpointed = clock_mono();
	if (failed) {
		log_warnx("session %.8s: automatic checkpoint not taken: %s", s->id,
			  json_member_str(failed, "message"));
	} else if (!json_object_object_get_ex(o, "kept", NULL)) {
		s->checkpoints++;
		log_debug("session %.8s: checkpoint %s taken", s->id,
			  json_member_str(o, "checkpoint"));
	}
	json_object_put(o);
}

static void *
saver_thread(void *unused)
{
	(void)unused;
	pool_lock();
	for (;;) {
		while (due_head == NULL)
			pthread_cond_wait(&due_cond, pool_mutex());
		struct session *s = due_head;
		due_head = s->save_next;
		if (due_head == NULL)
			due_tail = NULL;
		s->save_next = NULL;
		autosave(s);
		s->saving = 0;
		session_turn_over(s);
		session_put(s);
	}
	return NULL;
}

void
session_state_init(const struct config *cfg)
{
	pthread_t t;

	state_cfg = cfg;
	if (pthread_create(&t, NULL, saver_thread, NULL) != 0)
		fatalx("cannot start the checkpoint thread");
	pthread_detach(t);
}

/* Hand s, its turn taken, to the saver thread. */
static void
queue_save(struct session *s)
{
	s->refs++;
	s->saving = 1;
	if (due_tail)
		due_tail->save_next = s;
	else
		due_head = s;
	due_tail = s;
	pthread_cond_signal(&due_cond);
}

int
session_state_after_call(struct session *s, struct call *c)
{
	if (c->kind != CALL_EXECUTE || state_cfg == NULL)
		return 0;
	if (c->result && kernel_may_be_new(c->result)) {
		s->revive_due = 1;
		s->told_kernel = 0; /* its next kernel is told USER_IDENTITY again */
		return 0; /* a new kernel holds nothing worth saving yet */
	}
	double every = state_cfg->checkpoint_interval_s;
	if (c->silent || every <= 0 || !usable(s) ||
	    (s->checkpointed > 0 && clock_mono() - s->checkpointed < every))
		return 0;
	queue_save(s);
	return 1;
}

void
session_state_hibernate(struct session *s)
{
	if (state_cfg == NULL || s->saving)
		return;
	session_take_turn(s);
	s->hibernating = 1;
	queue_save(s);
}

void
session_state_revive(struct session *s)
{
	struct json_object *failed, *o;

	if (!usable(s) || !(s->revive_due || s->worker->kernel_lost))
		return;
	if (s->checkpoints == 0) { /* nothing to load: the new kernel starts empty */
		s->revive_due = s->worker->kernel_lost = 0;
		return;
	}
	s->revive_due = 0;
	s->worker->kernel_lost = 0;
	o = run_cell(s, "revive", NULL, &failed);
	if (o && json_object_object_get_ex(o, "kept", NULL)) {
		json_object_put(o);
		return;
	}
	if (failed && strcmp(json_member_str(failed, "type"), "NoCheckpoint") == 0) {
		json_object_put(failed);
		return;
	}
	json_object_put(s->revived);
	s->revived = o ? o : failed;
	if (o) {
		/* The result's own line replaces "variables ... are lost". */
		free(s->restart_note);
		s->restart_note = NULL;
		log_info("session %.8s: checkpoint %s restored into its new kernel", s->id,
			 json_member_str(o, "checkpoint"));
	} else {
		log_warnx("session %.8s: the last checkpoint could not be restored: %s", s->id,
			  json_member_str(failed, "message"));
	}
}

void
session_state_result(struct session *s, struct call *c)
{
	if (c->silent || c->result == NULL)
		return;
	if (s->revived) {
		int ok = json_object_object_get_ex(s->revived, "checkpoint", NULL);
		json_object_object_add(c->result, ok ? "restored" : "restore_error", s->revived);
		json_object_object_add(c->result, "kernel_restarted", json_object_new_boolean(1));
		s->revived = NULL;
	}
	if (s->save_failed) {
		json_object_object_add(c->result, "checkpoint_error", s->save_failed);
		s->save_failed = NULL;
	}
}

void
session_state_free(struct session *s)
{
	json_object_put(s->revived);
	json_object_put(s->save_failed);
}

static void
stop_one(struct session *s, void *count)
{
	if (!usable(s) || s->hibernating || s->transient)
		return;
	if (s->saving) { /* an automatic one runs: it becomes the stop's */
		s->hibernating = 1;
		++*(int *)count;
		return;
	}
	if (s->busy) /* past shutdown_grace_s: it keeps its last checkpoint */
		return;
	session_state_hibernate(s);
	++*(int *)count;
}

int
session_state_stop(void)
{
	int n = 0;

	stopping = 1;
	if (kernelspec_is_ipykernel(state_cfg)) /* the cell is ipykernel's Python */
		session_each(stop_one, &n);
	return n;
}

static void
count_saving(struct session *s, void *count)
{
	*(int *)count += s->saving || s->hibernating;
}

int
session_state_saving(void)
{
	int n = 0;

	session_each(count_saving, &n);
	return n;
}
