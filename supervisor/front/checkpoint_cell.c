/* checkpoint_cell.c - see checkpoint_cell.h. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "checkpoint_cell.h"
#include "config.h"
#include "json_member.h"
#include "pylit.h"
#include "xmalloc.h"

/* Where Debian's python3-dill lives: added to sys.path only while the
 * cell imports it, when the kernel's environment has no dill of its own. */
#define SYSTEM_SITE "/usr/lib/python3/dist-packages"

/*
 * One function for all: op "save" (arg: the label), "load" (arg: an id, or
 * None for the latest), "revive" (the latest, unless this kernel saved or
 * loaded one: then it prints {"kept": true}) or "autosave" (save, unless
 * this is a new kernel that loaded nothing while a checkpoint exists: its
 * empty namespace must not become the latest; {"kept": true} then). It prints one JSON
 * object: what was saved or restored, or {"error": {type, message}}.
 * Arguments, in order: the directory, op, arg, max_bytes, max_seconds,
 * the system site directory. A kernel that saved or loaded a checkpoint is
 * marked in sys (MARK), which a new kernel does not have: that is how
 * "revive" tells a kernel that kept its state (an interrupt that worked)
 * from one that replaced it. Each arms SIGUSR2 with a checkpoint labelled
 * "before a kill" that then kills the kernel: the worker sends it to a
 * kernel that ignored the interrupt (ipc_msg.h's rescue_s).
 */
static const char checkpoint_code[] =
	"def _codeexecd_checkpoint(d, op, arg, max_bytes, max_seconds, site):\n"
	"    import io, json, os, pickle, signal, socket, sys, threading, time, types\n"
	"    ip = get_ipython()\n"
	"    MARK = '_codeexecd_checkpointed'\n"
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
	"    def save(label):\n"
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
	"            meta = {'checkpoint': cid, 'label': label,\n"
	"                    'taken_at': time.strftime('%%Y-%%m-%%dT%%H:%%M:%%SZ', time.gmtime()),\n"
	"                    'size_bytes': size, 'names': names, 'skipped': skipped}\n"
	"            os.rename(tmp, os.path.join(d, cid + '.pkl'))\n"
	"            tmp = os.path.join(d, '.' + cid + '.json.tmp')\n"
	"            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), 'w') as f:\n"
	"                json.dump(meta, f)\n"
	"            os.rename(tmp, os.path.join(d, cid + '.json'))\n"
	"            setattr(sys, MARK, True)\n"
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
	"    def latest():\n"
	"        ids = sorted(n[:-5] for n in (os.listdir(d) if os.path.isdir(d) else [])\n"
	"                     if n.endswith('.json') and not n.startswith('.'))\n"
	"        return ids[-1] if ids else None\n"
	"    def load(cid):\n"
	"        if cid is None:\n"
	"            cid = latest()\n"
	"            if cid is None:\n"
	"                return fail('NoCheckpoint', 'this session has no checkpoint')\n"
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
	"        setattr(sys, MARK, True)\n"
	"        print(json.dumps({'checkpoint': cid, 'taken_at': meta.get('taken_at'),\n"
	"                          'names': sorted(loaded), 'skipped': skipped}))\n"
	"    def rescue(signum, frame):\n"
	"        sys.stdout = io.StringIO()\n"
	"        signal.signal(signal.SIGALRM, over_time)\n"
	"        signal.setitimer(signal.ITIMER_REAL, max_seconds)\n"
	"        try:\n"
	"            save('before a kill')\n"
	"        finally:\n"
	"            os.kill(os.getpid(), signal.SIGKILL)\n"
	"    old = signal.signal(signal.SIGALRM, over_time)\n"
	"    signal.setitimer(signal.ITIMER_REAL, max_seconds)\n"
	"    try:\n"
	"        if op == 'save':\n"
	"            save(arg)\n"
	"        elif op == 'autosave':\n"
	"            if getattr(sys, MARK, False) or latest() is None:\n"
	"                save(arg)\n"
	"            else:\n"
	"                print(json.dumps({'kept': True}))\n"
	"        elif op == 'revive' and getattr(sys, MARK, False):\n"
	"            print(json.dumps({'kept': True}))\n"
	"        else:\n"
	"            load(arg)\n"
	"    except TimeoutError:\n"
	"        fail('CheckpointTimeout', 'loading the checkpoint took longer than '\n"
	"             'checkpoint.max_seconds (%%g s); the namespace is unchanged' %% max_seconds)\n"
	"    finally:\n"
	"        signal.setitimer(signal.ITIMER_REAL, 0)\n"
	"        signal.signal(signal.SIGALRM, old)\n"
	"        signal.signal(signal.SIGUSR2, rescue)\n"
	"        for m in set(sys.modules) - had:\n"
	"            if m == 'dill' or m.startswith('dill.'):\n"
	"                del sys.modules[m]\n"
	"try:\n"
	"    _codeexecd_checkpoint(%s, %s, %s, %llu, %g, %s)\n"
	"finally:\n"
	"    del _codeexecd_checkpoint\n";

char *
checkpoint_cell(const struct config *cfg, const char *workdir, const char *op,
		  const char *arg)
{
	struct buf dir, a;
	char *d = xasprintf("%s/%s", workdir, CHECKPOINT_DIR);
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
well_formed(struct json_object *o, const char *op)
{
	if (!json_object_is_type(o, json_type_object))
		return 0;
	if (json_object_object_get_ex(o, "kept", NULL))
		return strcmp(op, "save") != 0 && strcmp(op, "load") != 0 &&
		       is_type(o, "kept", json_type_boolean);
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

struct json_object *
checkpoint_answer(struct json_object *result, const char *op)
{
	struct json_object *success, *o;

	if (result == NULL || !json_object_object_get_ex(result, "success", &success) ||
	    !json_object_get_boolean(success))
		return NULL;
	o = json_tokener_parse(json_member_str(result, "stdout"));
	if (o != NULL && !well_formed(o, op)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}
