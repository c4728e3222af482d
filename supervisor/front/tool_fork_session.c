/*
 * tool_fork_session.c - {name}_fork_session: a new session of the same
 * identity from a fresh checkpoint of the one the call acts in and a copy
 * of its working directory, so that an agent can try two ways from one
 * state.
 *
 * The checkpoint is the source kernel's own (checkpoint_cell.h), taken in
 * its turn as any call's; a hibernated source has no kernel and forks
 * from the checkpoint it hibernated with. The privileged parent copies the
 * directory, checkpoints included (FORK_DIR, priv_msg.h; fs_copy.h says
 * what it skips), into one of the fork's own kernel uid. The fork is left
 * hibernated: its first call starts a kernel there and restores that
 * latest checkpoint, and its result says so. The checkpoint is never
 * loaded by another identity: the fork is of the caller's, which is the
 * source's (an id of another identity answers as unknown, mcp_call.c).
 */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "err.h"
#include "json_member.h"
#include "kernelspec.h"
#include "log.h"
#include "parent_link.h"
#include "pool.h"
#include "result.h"
#include "session.h"
#include "tools.h"
#include "xmalloc.h"

/* The fork's session: hibernated in its copied directory, its latest
 * checkpoint loaded at its first call. Lock held. */
static void
settle(struct session *n, const struct priv_dir_forked *f, const struct config *cfg)
{
	n->stateless = 1; /* named by execution_session_id on both revisions */
	n->named = 1;	  /* not an unused one (session_idle_timeout_unused) */
	n->kept_dir = f->dir;
	n->kept_workdir = xasprintf("%s/sessions/%s", cfg->state_dir, f->name);
	n->checkpoints = 1;
	n->revive_due = 1;
	n->lost_because = "the session is a fork";
	session_set_hibernated(n, 1);
}

/* The answer: the fork's id, what its checkpoint holds, what was copied. */
static struct json_object *
answer(const struct session *src, const struct session *n, struct json_object *cp,
       const struct priv_dir_forked *f)
{
	struct json_object *o = json_object_new_object();
	long long bytes = (long long)((uint64_t)f->bytes_hi << 32 | f->bytes_lo);
	struct buf b;

	json_object_object_add(o, "success", json_object_new_boolean(1));
	json_object_object_add(o, "execution_session_id", json_object_new_string(n->id));
	json_object_object_add(o, "forked_from", json_object_new_string(src->id));
	json_object_object_add(o, "checkpoint",
			       cp ? json_object_get(json_object_object_get(cp, "checkpoint"))
				  : NULL);
	if (cp) {
		json_member_share(o, "names", cp, "names");
		json_member_share(o, "skipped", cp, "skipped");
	}
	json_object_object_add(o, "bytes_copied", json_object_new_int64(bytes));
	json_object_object_add(o, "files_copied", json_object_new_int64(f->files));
	json_object_object_add(o, "entries_skipped", json_object_new_int64(f->skipped));
	buf_init(&b);
	buf_printf(&b, "execution session %s forked from %s: ", n->id, src->id);
	if (cp) {
		buf_printf(&b, "checkpoint %s (%zu names", json_member_str(cp, "checkpoint"),
			   json_object_array_length(json_object_object_get(cp, "names")));
		if (json_object_array_length(json_object_object_get(cp, "skipped"))) {
			buf_adds(&b, "; skipped: ");
			result_name_reasons(&b, json_object_object_get(cp, "skipped"));
		}
		buf_adds(&b, ")");
	} else {
		buf_adds(&b, "its latest checkpoint (it was hibernated)");
	}
	buf_printf(&b, ", %lld bytes in %u files copied", bytes, (unsigned)f->files);
	if (f->skipped)
		buf_printf(&b, ", %u entries not copied (links, devices, FIFOs, sockets, "
			   "unreadable)", (unsigned)f->skipped);
	buf_adds(&b, ". Pass this execution_session_id to run in the fork; its first call "
		     "restores the checkpoint.");
	struct json_object *r = tool_result(o, b.data, 0);
	buf_free(&b);
	return r;
}

static struct json_object *
fork_call(struct tool_call *tc)
{
	struct session *src = tc->session;
	struct json_object *cp = NULL, *failed = NULL;
	struct priv_dir_forked f;
	char why[ERR_LEN];
	int bad;
	const char *label = tool_label_arg(tc, &bad);

	if (bad)
		return NULL;
	if (tc->cfg->fork_max_bytes == 0)
		return tool_refuse(tc, "cannot fork: fork_max_bytes is 0: forks are off");
	if (session_hibernated_count() >= tc->cfg->max_hibernated_sessions)
		return tool_refuse(tc, "cannot fork: max_hibernated_sessions are hibernated already");
	/* A live (or never started) source checkpoints now, in its turn. */
	if (src->worker != NULL || src->kept_dir == 0) {
		cp = tool_checkpoint_cell(tc, src, "save", label ? label : "fork", &failed);
		if (cp == NULL)
			return failed;
	}
	uint32_t dir = src->worker ? src->worker->dir_id : src->kept_dir;
	if (dir == 0) {
		json_object_put(cp);
		return tool_refuse(tc, "cannot fork: the session has no directory");
	}
	pool_unlock();
	int rc = parent_link_fork_dir(dir, &f, why, sizeof(why));
	pool_lock();
	if (rc == -1) {
		json_object_put(cp);
		return tool_refuse(tc, "cannot fork the session: %.200s", why);
	}
	struct session_limits lim = {tc->cfg->pool_max_sessions, config_identity_share(tc->cfg)};
	struct session *n = session_create(src->identity, &lim, why, sizeof(why));
	if (n == NULL) {
		parent_link_remove_dir(f.dir);
		json_object_put(cp);
		return tool_refuse(tc, "cannot fork the session: %.200s", why);
	}
	settle(n, &f, tc->cfg);
	log_info("session %.8s of %s forked from %.8s (kernel uid %u)", n->id, n->identity,
		 src->id, (unsigned)f.uid);
	struct json_object *r = answer(src, n, cp, &f);
	session_put(n);
	json_object_put(cp);
	return r;
}

static void
fork_describe(const struct config *cfg, struct json_object *tool)
{
	(void)cfg;
	json_object_object_add(
		tool, "description",
		json_object_new_string(
			"Fork the session: a new execution session of yours starts from a fresh "
			"checkpoint of this one's Python variables and a copy of its working "
			"directory, so that two approaches can go on from one state. Answers the "
			"new execution_session_id; its first call restores the checkpoint. Links, "
			"devices, FIFOs and sockets in the directory are not copied."));
	json_object_object_add(
		tool, "inputSchema",
		tool_schema("{\"type\":\"object\",\"properties\":{"
			    "\"label\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200,"
			    "\"description\":\"A note kept with the checkpoint (default: "
			    "fork).\"}}}"));
}

const struct tool tool_fork_session = {
	.name_format = "{name}_fork_session",
	.describe = fork_describe,
	/* dill of a Python namespace: ipykernel only (kernelspec.h). */
	.listed = kernelspec_is_ipykernel,
	.call = fork_call,
	.in_session = 1,
};
