#!/bin/sh
# 463-hibernate: an idle session hibernates instead of ending.
# After session_hibernate_after seconds without a call, a session's
# namespace is checkpointed and its kernel and worker end; the session, its
# id and its directory remain, listed as hibernated. pool.max_sessions then
# bounds live kernels, not sessions: two new sessions get kernels beside
# it. Its next call runs in a new worker in its directory with the
# checkpoint restored (its result says so exactly), and since the pool is
# full the least recently used idle session hibernates to make room. After
# session_retention (set by SIGHUP) a hibernated session is closed and its
# directory removed.
. "$(dirname "$0")/lib.sh"

require_py ipykernel
require_py dill
require_py numpy
require_binaries
setup_tmp
PORT=$(free_port)
CFG_HIBERNATE_AFTER=2
write_config
config_set pool.max_sessions 2
start_daemon
wait_ready

run_py "$URL" "$TMPD/run" "$DAEMON_PID" "$TMPD/codeexecd.yaml" <<'EOF2'
import glob, json, os, signal, sys, time
from mcp import Client, check, ok, text_of, value_of
from calls import control, sc, session_info, wait_for, proc_alive

url, rundir, daemon, conf = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]


def workers_of(c):
    return [w["pid"] for w in control(rundir)["workers"] if w.get("session") == c.session_id[:8]]


def seen(c):
    """c's session as the control socket lists it ({} if it is not): asking
    the session itself (list_sessions) would be a call that keeps it busy."""
    for x in control(rundir, "sessions").get("sessions", []):
        if x.get("id") == c.session_id:
            return x
    return {}


def hibernated(c):
    return seen(c).get("hibernated") is True


a = Client(url)
a.initialize()
r = a.execute("import os, numpy as np\nx = 41\narr = np.arange(1000000)\n"
              "open('kept.txt', 'w').write('here')\n(os.getpid(), os.getcwd())")
check(sc(r).get("success") is True, "a's first call runs", r)
kpid, cwd = eval(value_of(r))
check(wait_for(lambda: hibernated(a), 30, 0.2), "a hibernates", seen(a))
check(session_info(a).get("state") == "hibernated" and
      session_info(a).get("working_directory") == cwd,
      "list_sessions says a is hibernated, with its working directory", session_info(a))
check(wait_for(lambda: not proc_alive(kpid), 10), "a's kernel ends", kpid)
check(wait_for(lambda: workers_of(a) == [], 10), "a holds no worker", control(rundir))
metas = [json.load(open(p)) for p in glob.glob(cwd + "/.codeexecd-checkpoints/*.json")]
check(len(metas) == 1 and metas[0]["label"] == "hibernation" and
      sorted(metas[0]["names"]) == ["arr", "np", "os", "x"], "a's checkpoint was taken for it",
      metas)
meta = metas[0]
ok("a hibernated after 2 s idle: kernel %d ended, checkpoint %s" % (kpid, meta["checkpoint"]))

b = Client(url)
b.initialize()
c = Client(url)
c.initialize()
check(value_of(b.execute("'b'")) == "'b'", "b gets a kernel beside hibernated a")
check(value_of(c.execute("'c'")) == "'c'", "c too: max_sessions 2 bounds live kernels")
ok("two live sessions beside a hibernated one under pool.max_sessions 2")

r = a.execute("x, int(arr.sum()), open('kept.txt').read(), os.getcwd()", http_timeout=90)
s = sc(r)
check(s.get("success") is True and eval(value_of(r)) == (41, 499999500000, "here", cwd),
      "a's next call sees its variables and files, in its directory", r)
at = meta["taken_at"]
check(s.get("restored") == {"checkpoint": meta["checkpoint"], "taken_at": at,
                            "names": ["arr", "np", "os", "x"], "skipped": []},
      "restored names the checkpoint", s)
check(s.get("kernel_restarted") is True, "kernel_restarted", s)
check(text_of(r).startswith("[codeexecd] the kernel was restarted and checkpoint %s, taken at "
      "%s, was restored (4 names): what changed after %s is lost\n" % (meta["checkpoint"], at, at)),
      "the text says so first", text_of(r))
check(session_info(a).get("state") == "idle", "a is live again", session_info(a))
# b is the least recently used: it makes room (a checkpoint first, so nothing is lost).
check(wait_for(lambda: hibernated(b), 30, 0.2), "b hibernated to make room", seen(b))
# c was not the one made to hibernate for room (on a slow machine it may
# have idled past session_hibernate_after meanwhile, which is its right).
log = open(os.path.join(os.path.dirname(rundir), "daemon.log")).read()
check(session_info(c).get("state") == "idle" or
      ("session %.8s of anonymous hibernates to make room" % c.session_id) not in log,
      "c is live, or hibernated only by its own idle time", session_info(c))
ok("a woke with checkpoint %s; b hibernated to make room" % meta["checkpoint"])

r = b.execute("'b again'", http_timeout=90)
check(value_of(r) == "'b again'" and (sc(r).get("restored") or {}).get("names") == [],
      "b wakes too, with its (empty) checkpoint", r)
bdir = session_info(b).get("working_directory")

# A new session at a full pool, the caller's share (anonymous: the whole
# pool) held too: an idle session hibernates for it, none is closed.
d = Client(url)
d.initialize()
check(value_of(d.execute("'d'", http_timeout=90)) == "'d'", "d gets a kernel at a full pool")
check(all(seen(x) != {} for x in (a, b, c)), "no session was closed for d",
      control(rundir, "sessions"))
ok("a new session at a full pool: an idle one hibernated, none closed")

# session_retention, live: a hibernated session is closed once its last call is older.
check(wait_for(lambda: hibernated(b), 30, 0.2), "b hibernates", seen(b))
with open(conf, "a") as f:
    f.write("session_retention: 3\n")
os.kill(daemon, signal.SIGHUP)
check(wait_for(lambda: seen(b) == {}, 30, 0.2), "b is closed after session_retention")
check(wait_for(lambda: not os.path.exists(bdir), 10), "and its directory removed", bdir)
ok("a hibernated session past session_retention is closed and its directory removed")
EOF2
if grep -q "closed to make room" "$LOG"; then fail "a session was closed to make room"; fi
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
