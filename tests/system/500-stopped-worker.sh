#!/bin/sh
# 500-stopped-worker: one stopped worker must not stop the daemon.
# Session a's worker is stopped with SIGSTOP, then a gets a call
# with 2 MB of code, more than the worker's socket takes unread. Throughout,
# /health, a call of session b and the control socket's status (what
# `codeexecctl status` asks; codeexecctl itself is run too) each answer
# within a second. Once the worker has left its socket unread for the bound (10 s),
# it is killed, and a's call fails with WorkerDied saying why.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
CTL=$top_builddir/ctl/codeexecctl
[ -x "$CTL" ] || fail "$CTL not built"
setup_tmp
PORT=$(free_port)
CFG_WARM=2
write_config
config_set max_request_bytes 8388608
start_daemon
wait_ready

run_py "$URL" "$BASE" "$TMPD/run" "$CTL" <<'EOF2'
import os, signal, subprocess, sys, threading, time, urllib.request
from mcp import Client, check, ok, text_of, value_of
from calls import control, sc, proc_alive

url, base, rundir, ctl = sys.argv[1:5]
BOUND = 10          # WORKER_UNREAD_S in supervisor/front/pool_io.c
LIMIT = 1.0         # what the issue demands of everything else

a = Client(url)
a.initialize()
b = Client(url)
b.initialize()
check(sc(a.execute("1")).get("success") is True, "a has a kernel")
check(sc(b.execute("1")).get("success") is True, "b has a kernel")
wpid = [w["pid"] for w in control(rundir)["workers"] if w.get("session") == a.session_id[:8]]
check(len(wpid) == 1, "a's worker is in the status", control(rundir))
wpid = wpid[0]
os.kill(wpid, signal.SIGSTOP)
ok("stopped a's worker %d" % wpid)

code = "x = '" + "y" * (2 << 20) + "'\nlen(x)"
got = {}
def big():
    t0 = time.time()
    got["r"] = a.execute(code, http_timeout=120)
    got["took"] = time.time() - t0
t = threading.Thread(target=big, daemon=True)
t.start()

def timed(what, fn):
    t0 = time.time()
    v = fn()
    took = time.time() - t0
    check(took < LIMIT, "%s answered in %.2f s (limit %.1f s) while a's worker is stopped"
          % (what, took, LIMIT))
    return v, took

def health():
    with urllib.request.urlopen(base + "/health", timeout=5) as r:
        check(r.status == 200, "/health 200")

def status():
    # What `codeexecctl status` asks, timed from Python: the time to start
    # a process on a loaded machine (a second and more for a sanitizer
    # build) is not the daemon's.
    check(control(rundir).get("status") == "ok", "the control socket's status is ok")

def ctl_status():
    p = subprocess.run([ctl, "-s", rundir + "/control/codeexecd.sock", "status"], timeout=30,
                       capture_output=True, text=True)
    check(p.returncode == 0, "codeexecctl status exits 0", p.stdout + p.stderr)

worst = {"health": 0, "b": 0, "status": 0}
rounds = 0
end = time.time() + BOUND + 20
while t.is_alive() and time.time() < end:
    worst["health"] = max(worst["health"], timed("/health", health)[1])
    r, took = timed("b's call", lambda: b.execute("21 * 2", http_timeout=30))
    check(value_of(r) == "42", "b's call works", r)
    worst["b"] = max(worst["b"], took)
    worst["status"] = max(worst["status"], timed("the control socket's status", status)[1])
    if rounds % 5 == 0:
        ctl_status()
    rounds += 1
    time.sleep(0.2)
t.join(30)
check("r" in got, "a's call has an answer within %d s" % (BOUND + 50))
ok("%d rounds while a's worker was stopped; slowest /health %.2f s, b %.2f s, status %.2f s"
   % (rounds, worst["health"], worst["b"], worst["status"]))
check(rounds >= 10, "the probes ran throughout (%d rounds)" % rounds)

r = got["r"]
err = sc(r).get("error") or {}
check(r.get("isError") is True and err.get("type") == "WorkerDied",
      "a's call fails with WorkerDied", r)
check("unread" in err.get("message", ""), "the error says the worker left its socket unread", r)
check(BOUND - 1 <= got["took"] < BOUND + 15,
      "a's call failed after the bound (%.1f s)" % got["took"], r)
ok("a's call: %r after %.1f s" % (err.get("message"), got["took"]))

def reaped():
    return not proc_alive(wpid)
t0 = time.time()
while not reaped() and time.time() - t0 < 10:
    time.sleep(0.1)
check(reaped(), "the stopped worker %d is gone" % wpid)
check(value_of(b.execute("6 * 7")) == "42", "b still works")
ok("the stopped worker was killed; the daemon serves on")
EOF2
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
ok "daemon stopped cleanly"
