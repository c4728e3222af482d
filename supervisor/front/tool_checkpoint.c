/*
 * tool_checkpoint.c - {name}_checkpoint and {name}_restore: a Python
 * kernel's namespace saved by the kernel itself with dill, into its own
 * session directory, and put back.
 *
 * Both run as a silent cell, so nothing shows in In, Out, _, the history
 * or the execution count, and the function they define is deleted again.
 * Each name is saved on its own: one that cannot be (an open file, a
 * socket, a thread, a generator, an object pickling refuses) is skipped
 * with its reason and the rest are kept. A checkpoint is two files of
 * TOOL_CHECKPOINT_DIR in the session's working directory, written by the kernel
 * under its own uid with mode 0600: ID.pkl, then ID.json (what it holds),
 * each renamed into place only when whole, so a failure (a limit, a full
 * disk) leaves the earlier checkpoints as they were. A session loads only
 * its own directory's checkpoints, which only kernels of its identity
 * wrote.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "job.h"
#include "pool.h"
#include "pylit.h"
#include "result.h"
#include "session.h"
#include "tools.h"
#include "xmalloc.h"

/* Where Debian's python3-dill lives: added to sys.path only while the
 * cell imports it, when the kernel's environment has no dill of its own. */
#define SYSTEM_SITE "/usr/lib/python3/dist-packages"
/* Longest label and checkpoint id accepted. */
#define LABEL_MAX 200
#define ID_MAX 64

/*
 * One function for both: op "save" (arg: the label) or "load" (arg: an id,
 * or None for the latest). It prints one JSON object: what was saved or
 * restored, or {"error": {type, message}}. Arguments, in order: the
 * directory, op, arg, max_bytes, max_seconds, the system site directory.
 */
static const char checkpoint_code[] =
	"def _codeexecd_checkpoint(d, op, arg, max_bytes, max_seconds, site):\n"
	"    import io, json, os, pickle, signal, socket, sys, threading, time, types\n"
	"    ip = get_ipython()\n"
	"    ns, hidden = ip.user_ns, ip.user_ns_hidden\n"
	"    had = set(sys.modules)\n"
	"    try:\n"
	"        import dill\n"
	"    except ImportError:\n"
	"        sys.path.append(site)\n"
	"        try:\n"
	"            import dill\n"
	"        finally:\n"
	"            sys.path.remove(site)\n"
	"    def fail(kind, msg):\n"
	"        print(json.dumps({'error': {'type': kind, 'message': msg}}))\n"
	"    def user_names():\n"
	"        return sorted(k for k in ns if not k.startswith('_') and k not in hidden)\n"
	"    def why_not(v):\n"
	"        for t, why in ((io.IOBase, 'an open file'), (socket.socket, 'a socket'),\n"
	"                       (threading.Thread, 'a thread'),\n"
	"                       (types.GeneratorType, 'a generator')):\n"
	"            if isinstance(v, t):\n"
	"                return why\n"
	"    def over_time(*a):\n"
	"        raise TimeoutError()\n"
	"    def save():\n"
	"        os.makedirs(d, mode=0o700, exist_ok=True)\n"
	"        now = time.time()\n"
	"        cid = '%%s%%06dZ-%%s' %% (time.strftime('%%Y%%m%%dT%%H%%M%%S', time.gmtime(now)),\n"
	"                               int(now %% 1 * 1e6), os.urandom(3).hex())\n"
	"        tmp = os.path.join(d, '.' + cid + '.tmp')\n"
	"        names, skipped, size = [], [], 0\n"
	"        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)\n"
	"        try:\n"
	"            with os.fdopen(fd, 'wb') as f:\n"
	"                for k in user_names():\n"
	"                    why = why_not(ns[k])\n"
	"                    if why is None:\n"
	"                        try:\n"
	"                            blob = pickle.dumps((k, dill.dumps(ns[k])), 4)\n"
	"                        except TimeoutError:\n"
	"                            raise\n"
	"                        except Exception as e:\n"
	"                            why = '%%s: %%s' %% (type(e).__name__, str(e)[:200])\n"
	"                    if why is not None:\n"
	"                        skipped.append({'name': k, 'reason': why})\n"
	"                        continue\n"
	"                    size += len(blob)\n"
	"                    if size > max_bytes:\n"
	"                        raise OverflowError()\n"
	"                    f.write(blob)\n"
	"                    names.append(k)\n"
	"            meta = {'checkpoint': cid, 'label': arg,\n"
	"                    'taken_at': time.strftime('%%Y-%%m-%%dT%%H:%%M:%%SZ', time.gmtime()),\n"
	"                    'size_bytes': size, 'names': names, 'skipped': skipped}\n"
	"            os.rename(tmp, os.path.join(d, cid + '.pkl'))\n"
	"            tmp = os.path.join(d, '.' + cid + '.json.tmp')\n"
	"            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), 'w') as f:\n"
	"                json.dump(meta, f)\n"
	"            os.rename(tmp, os.path.join(d, cid + '.json'))\n"
	"            print(json.dumps(meta))\n"
	"        except OverflowError:\n"
	"            fail('CheckpointTooLarge', 'the namespace pickles to more than checkpoint.max_bytes '\n"
	"                 '(%%d bytes): no checkpoint was taken, the earlier ones are kept' %% max_bytes)\n"
	"        except TimeoutError:\n"
	"            fail('CheckpointTimeout', 'pickling the namespace took longer than '\n"
	"                 'checkpoint.max_seconds (%%g s): no checkpoint was taken, the earlier ones '\n"
	"                 'are kept' %% max_seconds)\n"
	"        except OSError as e:\n"
	"            fail('CheckpointFailed', 'writing the checkpoint failed (%%s): no checkpoint was '\n"
	"                 'taken, the earlier ones are kept' %% e)\n"
	"        finally:\n"
	"            if os.path.exists(tmp):\n"
	"                os.unlink(tmp)\n"
	"    def load(cid):\n"
	"        if cid is None:\n"
	"            ids = sorted(n[:-5] for n in (os.listdir(d) if os.path.isdir(d) else [])\n"
	"                         if n.endswith('.json') and not n.startswith('.'))\n"
	"            if not ids:\n"
	"                return fail('NoCheckpoint', 'this session has no checkpoint')\n"
	"            cid = ids[-1]\n"
	"        try:\n"
	"            with open(os.path.join(d, cid + '.json')) as f:\n"
	"                meta = json.load(f)\n"
	"            f = open(os.path.join(d, cid + '.pkl'), 'rb')\n"
	"        except OSError:\n"
	"            return fail('NoCheckpoint', 'this session has no checkpoint %%s' %% cid)\n"
	"        loaded, skipped = {}, list(meta.get('skipped', []))\n"
	"        with f:\n"
	"            while True:\n"
	"                try:\n"
	"                    k, blob = pickle.load(f)\n"
	"                except EOFError:\n"
	"                    break\n"
	"                try:\n"
	"                    loaded[k] = dill.loads(blob)\n"
	"                except TimeoutError:\n"
	"                    raise\n"
	"                except Exception as e:\n"
	"                    skipped.append({'name': k, 'reason': 'not restored: %%s: %%s'\n"
	"                                    %% (type(e).__name__, str(e)[:200])})\n"
	"        for k in user_names():\n"
	"            del ns[k]\n"
	"        ns.update(loaded)\n"
	"        print(json.dumps({'checkpoint': cid, 'taken_at': meta.get('taken_at'),\n"
	"                          'names': sorted(loaded), 'skipped': skipped}))\n"
	"    old = signal.signal(signal.SIGALRM, over_time)\n"
	"    signal.setitimer(signal.ITIMER_REAL, max_seconds)\n"
	"    try:\n"
	"        save() if op == 'save' else load(arg)\n"
	"    except TimeoutError:\n"
	"        fail('CheckpointTimeout', 'loading the checkpoint took longer than '\n"
	"             'checkpoint.max_seconds (%%g s); the namespace is unchanged' %% max_seconds)\n"
	"    finally:\n"
	"        signal.setitimer(signal.ITIMER_REAL, 0)\n"
	"        signal.signal(signal.SIGALRM, old)\n"
	"        for m in set(sys.modules) - had:\n"
	"            if m == 'dill' or m.startswith('dill.'):\n"
	"                del sys.modules[m]\n"
	"try:\n"
	"    _codeexecd_checkpoint(%s, %s, %s, %llu, %g, %s)\n"
	"finally:\n"
	"    del _codeexecd_checkpoint\n";

/* The cell for `op` with `arg` (NULL: None) in workdir. Caller owns. */
static char *
checkpoint_source(const struct config *cfg, const char *workdir, const char *op,
		  const char *arg)
{
	struct buf dir, a;
	char *d = xasprintf("%s/%s", workdir, TOOL_CHECKPOINT_DIR);
	char *lop = pylit(op), *site = pylit(SYSTEM_SITE);

	buf_init(&dir);
	buf_init(&a);
	pylit_str(&dir, d, strlen(d));
	if (arg)
		pylit_str(&a, arg, strlen(arg));
	else
		buf_adds(&a, "None");
	char *code = xasprintf(checkpoint_code, dir.data, lop, a.data,
			       (unsigned long long)cfg->checkpoint_max_bytes,
			       cfg->checkpoint_max_seconds, site);
	buf_free(&dir);
	buf_free(&a);
	free(d);
	free(lop);
	free(site);
	return code;
}

static int
is_type(struct json_object *o, const char *key, json_type t)
{
	struct json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, t);
}

/*
 * Whether `o`, parsed from what the kernel printed, has the shape the cell
 * prints: the kernel is the session's own, and code in it may print
 * anything, so nothing is taken on faith.
 */
static int
well_formed(struct json_object *o)
{
	if (!json_object_is_type(o, json_type_object))
		return 0;
	if (json_object_object_get_ex(o, "error", NULL)) {
		struct json_object *e = json_object_object_get(o, "error");
		return is_type(e, "type", json_type_string) && is_type(e, "message", json_type_string);
	}
	if (!is_type(o, "checkpoint", json_type_string) || !is_type(o, "taken_at", json_type_string) ||
	    !is_type(o, "names", json_type_array) || !is_type(o, "skipped", json_type_array))
		return 0;
	struct json_object *skipped = json_object_object_get(o, "skipped");
	for (size_t i = 0; i < json_object_array_length(skipped); i++) {
		struct json_object *e = json_object_array_get_idx(skipped, i);
		if (!is_type(e, "name", json_type_string) || !is_type(e, "reason", json_type_string))
			return 0;
	}
	return 1;
}

/* "a (an open file), b (a socket)" of a checkpoint's skipped list, into b. */
static void
skipped_text(struct buf *b, struct json_object *skipped)
{
	size_t n = json_object_array_length(skipped);

	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(skipped, i);
		buf_printf(b, "%s%s (%s)", i ? ", " : "",
			   json_object_get_string(json_object_object_get(e, "name")),
			   json_object_get_string(json_object_object_get(e, "reason")));
	}
}

/* The line an agent reads of what the cell printed, `o`. Caller owns. */
static char *
answer_text(const char *op, struct json_object *o)
{
	struct json_object *skipped = json_object_object_get(o, "skipped");
	struct buf b;

	buf_init(&b);
	if (strcmp(op, "save") == 0)
		buf_printf(&b, "checkpoint %s: %zu names saved (%lld bytes)",
			   json_object_get_string(json_object_object_get(o, "checkpoint")),
			   json_object_array_length(json_object_object_get(o, "names")),
			   (long long)json_object_get_int64(json_object_object_get(o, "size_bytes")));
	else
		buf_printf(&b, "restored checkpoint %s, taken at %s: %zu names",
			   json_object_get_string(json_object_object_get(o, "checkpoint")),
			   json_object_get_string(json_object_object_get(o, "taken_at")),
			   json_object_array_length(json_object_object_get(o, "names")));
	if (json_object_array_length(skipped)) {
		buf_adds(&b, "; skipped: ");
		skipped_text(&b, skipped);
	}
	return buf_release(&b);
}

/*
 * Run the cell for `op` in the session the call names; its answer, or
 * NULL with the call's error set.
 */
static struct json_object *
checkpoint_run(struct tool_call *tc, const char *op, const char *arg)
{
	struct json_object *failed = NULL, *r, *out, *o = NULL, *err;
	struct session *s = tool_session_arg(tc, "session_id");

	if (s == NULL)
		return NULL;
	char *workdir = tool_session_workdir(tc, s, &failed);
	if (workdir == NULL) {
		r = result_to_tool(failed, s->id);
		session_put(s);
		return r;
	}
	char *code = checkpoint_source(tc->cfg, workdir, op, arg);
	struct job *j = job_new(s, tc->session->id, code, tc->cfg->checkpoint_max_seconds + 30,
				1, NULL);
	job_run(j, -1, 0);
	if (j->status == JOB_COMPLETED &&
	    json_object_object_get_ex(j->call.result, "stdout", &out))
		o = json_tokener_parse(json_object_get_string(out));
	if (o == NULL && j->status != JOB_COMPLETED && j->call.result) {
		/* The cell itself failed (a timeout, a dead kernel): its result says how. */
		r = result_to_tool(json_object_get(j->call.result), s->id);
	} else if (o == NULL || !well_formed(o)) {
		r = result_to_tool(result_failed("CheckpointFailed",
						 "the kernel's answer was not understood (did "
						 "code in it replace print or json?)"),
				   s->id);
	} else if (json_object_object_get_ex(o, "error", &err)) {
		r = result_to_tool(
			result_failed(json_object_get_string(json_object_object_get(err, "type")),
				      json_object_get_string(json_object_object_get(err, "message"))),
			s->id);
	} else {
		char *text = answer_text(op, o);
		json_object_object_add(o, "success", json_object_new_boolean(1));
		r = tool_result(json_object_get(o), text, 0);
		free(text);
	}
	json_object_put(o);
	job_unref(j);
	free(code);
	free(workdir);
	session_put(s);
	return r;
}

/* A string argument of at most `max` bytes, each allowed by `ok`; "" if absent. */
static const char *
checked_arg(struct tool_call *tc, const char *key, size_t max, int (*ok)(int c), int *bad)
{
	struct json_object *v;
	const char *s = tool_arg_string(tc, key);

	*bad = 0;
	if (s == NULL) {
		*bad = json_object_object_get_ex(tc->args, key, &v) && v != NULL;
		return NULL;
	}
	*bad = strlen(s) == 0 || strlen(s) > max;
	for (const char *p = s; !*bad && *p; p++)
		*bad = !ok((unsigned char)*p);
	return s;
}

static int
label_char(int c)
{
	return c >= 0x20 && c != 0x7f;
}

static int
id_char(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '-';
}

static void
checkpoint_describe(const struct config *cfg, struct json_object *tool)
{
	(void)cfg;
	json_object_object_add(
		tool, "description",
		json_object_new_string("Save the session's Python variables, functions and "
				       "classes (imported modules by reference) as a checkpoint "
				       "in its working directory, to go back to with restore. "
				       "Names that cannot be saved (open files, sockets, threads, "
				       "generators) are skipped and listed with the reason."));
	json_object_object_add(
		tool, "inputSchema",
		tool_schema("{\"type\":\"object\",\"properties\":{"
			    "\"label\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200,"
			    "\"description\":\"A note kept with the checkpoint.\"},"
			    "\"session_id\":{\"type\":\"string\",\"description\":"
			    "\"Defaults to this connection's own session.\"}}}"));
}

static struct json_object *
checkpoint_call(struct tool_call *tc)
{
	int bad;
	const char *label = checked_arg(tc, "label", LABEL_MAX, label_char, &bad);

	if (bad)
		return tool_bad_params(tc, "argument 'label': a string of 1 to 200 printable "
					   "characters");
	return checkpoint_run(tc, "save", label);
}

static void
restore_describe(const struct config *cfg, struct json_object *tool)
{
	(void)cfg;
	json_object_object_add(
		tool, "description",
		json_object_new_string("Replace the session's Python namespace with a checkpoint "
				       "taken by checkpoint: the given one, or the latest. Names "
				       "defined since are gone; names the checkpoint skipped are "
				       "listed."));
	json_object_object_add(
		tool, "inputSchema",
		tool_schema("{\"type\":\"object\",\"properties\":{"
			    "\"checkpoint_id\":{\"type\":\"string\",\"pattern\":\"^[0-9A-Za-z-]{1,64}$\","
			    "\"description\":\"A checkpoint id; the latest when absent.\"},"
			    "\"session_id\":{\"type\":\"string\",\"description\":"
			    "\"Defaults to this connection's own session.\"}}}"));
}

static struct json_object *
restore_call(struct tool_call *tc)
{
	int bad;
	const char *id = checked_arg(tc, "checkpoint_id", ID_MAX, id_char, &bad);

	if (bad)
		return tool_bad_params(tc, "argument 'checkpoint_id': a checkpoint id (letters, "
					   "digits and '-', at most 64)");
	return checkpoint_run(tc, "load", id);
}

const struct tool tool_checkpoint = {
	.name_format = "{name}_checkpoint",
	.describe = checkpoint_describe,
	.call = checkpoint_call,
};

const struct tool tool_restore = {
	.name_format = "{name}_restore",
	.describe = restore_describe,
	.call = restore_call,
};
