/* batch_from.c - see batch_from.h. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "batch_from.h"
#include "checkpoint_cell.h"
#include "clock.h"
#include "config.h"
#include "err.h"
#include "json_member.h"
#include "parent_link.h"
#include "pool.h"
#include "pool_revive.h"
#include "xmalloc.h"

/* Start a worker in kept directory `dir` and wait for it. NULL with why. */
static struct worker *
start_in(uint32_t dir, double wait_s, char *why, size_t why_len)
{
	struct pool_revival r;
	struct worker *w = NULL;
	double end = clock_mono() + wait_s;

	pool_revive_join(&r, dir);
	while (!pool_revive_wait(&r, end - clock_mono(), &w, why, why_len)) {
		if (clock_mono() >= end) {
			pool_revive_leave(&r); /* what comes is ended, the directory goes */
			err_set(why, why_len, "no kernel in %.0f s", wait_s);
			return NULL;
		}
	}
	if (w == NULL)
		parent_link_remove_dir(dir); /* the caller's again: nobody else wants it */
	return w;
}

/* Load checkpoint `id` (NULL: the latest) into w's kernel. 0, or -1 with why. */
static int
load(const struct config *cfg, struct worker *w, const char *id, char *why, size_t why_len)
{
	struct call c;
	char *code = checkpoint_cell(cfg, w->workdir, "load", id);

	call_init(&c);
	pool_execute(w, &c, code, cfg->checkpoint_max_seconds + CHECKPOINT_CELL_SLACK_S, 1);
	free(code);
	struct json_object *o = checkpoint_answer(c.result, "load"), *e;
	int rc = 0;
	if (o == NULL) {
		struct json_object *err = json_object_object_get(c.result, "error");
		rc = err_set(why, why_len, "the checkpoint could not be loaded: %s",
			     json_member_str(err, "message"));
	} else if (json_object_object_get_ex(o, "error", &e))
		rc = err_set(why, why_len, "%s", json_member_str(e, "message"));
	json_object_put(o);
	call_clear(&c);
	return rc;
}

struct worker *
batch_from_kernel(const struct config *cfg, uint32_t dir, const char *checkpoint, double wait_s,
		  char *why, size_t why_len)
{
	struct priv_dir_forked f;

	pool_unlock();
	int rc = parent_link_fork_dir(dir, &f, why, why_len);
	pool_lock();
	if (rc == -1)
		return NULL;
	struct worker *w = start_in(f.dir, wait_s, why, why_len);
	if (w && load(cfg, w, checkpoint, why, why_len) == -1) {
		pool_release(w); /* its directory goes with it */
		w = NULL;
	}
	return w;
}
