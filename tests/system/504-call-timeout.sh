#!/bin/sh
# 504-call-timeout: a call answers within its timeout plus the documented
# grace (IPC_EXEC_GRACE_S + IPC_EXEC_ANSWER_S in common/ipc_msg.h: 8 s)
# whatever its worker does. Three workers that would keep a caller waiting:
#   1. a real worker stopped with SIGSTOP (it used to take timeout + 30 s);
#   2. a fake worker that reads EXECUTE and never answers (fake-worker mute);
#   3. a real worker whose kernel takes 15 s to restart: it says the call
#      waits for the start (WAITING), so the call runs then, its timeout
#      counted from there, and the worker is not judged stuck.
# The stuck workers' calls fail with their reason and the workers are
# killed; the daemon and other sessions go on.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
FAKE=$top_builddir/tests/system/fake-worker
[ -x "$FAKE" ] || fail "$FAKE not built (make check builds it)"
setup_tmp
PORT=$(free_port)
GRACE=8
TIMEOUT=3
# Old answer came after TIMEOUT + 30 s; the bound is TIMEOUT + GRACE, with
# room for a loaded machine.
BOUND=$((TIMEOUT + GRACE + 10))

# --- 1 and 3: real workers ------------------------------------------------
CFG_WARM=2
write_config
start_daemon
wait_ready
# The environment's python, which kernels run, starts slowly while
# $TMPD/slow exists (case 3).
py=$TMPD/env/bin/python
[ -e "$py" ] || fail "no $py: the environment was not built where the test expects"
rm -f "$py"
cat >"$py" <<EOF
#!/bin/sh
[ -e "$TMPD/slow" ] && sleep 15
exec "$TMPD/env/bin/python3" "\$@"
EOF
chmod 755 "$py"
run_py "$URL" "$TMPD" "$TIMEOUT" "$BOUND" <<'EOF2'
import os, signal, sys, time
from mcp import Client, check, ok
from calls import control, sc, wait_for, proc_alive

url, tmpd, timeout, bound = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
rundir = tmpd + "/run"

def timed_call(c, code, t=timeout):
    t0 = time.time()
    r = sc(c.execute(code, timeout=t, http_timeout=120))
    return r, time.time() - t0

a, b = Client(url), Client(url)
a.initialize()
b.initialize()
check(sc(a.execute("x = 41")).get("success") is True, "a has a kernel")
check(sc(b.execute("y = 1")).get("success") is True, "b has a kernel")
wpid = [w["pid"] for w in control(rundir)["workers"] if w.get("session") == a.session_id[:8]]
check(len(wpid) == 1, "a's worker is in the status", control(rundir))
os.kill(wpid[0], signal.SIGSTOP)
r, took = timed_call(a, "x + 1")
print("# stopped worker: %.1f s: %r" % (took, r.get("error")))
check(r.get("success") is False and (r.get("error") or {}).get("type") == "WorkerDied",
      "a's call fails with WorkerDied", r)
check("gave no answer within 3 s" in r["error"].get("message", ""), "and says why", r)
check(took < bound, "answered in %.1f s, within the timeout and grace (bound %g s)"
      % (took, bound))
check(wait_for(lambda: not proc_alive(wpid[0]), 20), "the stopped worker is killed")
ok("a stopped worker's call answers at its timeout and grace")
check(sc(b.execute("y + 1")).get("success") is True, "b goes on")

# 3: the kernel dies; its restart is slow (15 s, more than the timeout
# and grace). The worker says the call waits for the start (WAITING):
# the call runs once the kernel is up, with its whole timeout, and the
# worker is not judged stuck.
check(sc(b.execute("import os; os.getpid()")).get("success") is True, "b's kernel runs")
open(tmpd + "/slow", "w").close()
r = sc(b.execute("import os; os._exit(1)", timeout=30))
check((r.get("error") or {}).get("type") == "KernelDied", "b's kernel died", r)
r, took = timed_call(b, "y = 'ran'; y")
os.unlink(tmpd + "/slow")
print("# slow restart: %.1f s: %r" % (took, r.get("error")))
check(r.get("success") is True and r.get("kernel_restarted") is True,
      "the call on a restarting kernel runs once the kernel is up", r)
check(sc(b.execute("y")).get("success") is True, "and its code ran")
ok("a call waits for a slow kernel start, which its timeout does not count")
EOF2
stop_daemon TERM

# --- 2: a worker that reads EXECUTE and never answers ---------------------
cp "$FAKE" "$TMPD/fake-worker"
printf '#!/bin/sh\nexec "%s" mute "%s"\n' "$TMPD/fake-worker" "$TMPD" >"$TMPD/mute"
chmod 755 "$TMPD/mute"
WORKER=$TMPD/mute
CFG_WARM=1
write_config
start_daemon
wait_ready
run_py "$URL" "$TIMEOUT" "$BOUND" <<'EOF2'
import sys, time
from mcp import Client, check, ok
from calls import sc

url, timeout, bound = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
c = Client(url)
c.initialize()
t0 = time.time()
r = sc(c.execute("1", timeout=timeout, http_timeout=120))
took = time.time() - t0
print("# mute worker: %.1f s: %r" % (took, r.get("error")))
check(r.get("success") is False and (r.get("error") or {}).get("type") == "WorkerDied",
      "the call to a mute worker fails with WorkerDied", r)
check(took < bound, "answered in %.1f s (bound %g s)" % (took, bound))
ok("a worker that never answers is killed at the call's timeout and grace")
EOF2
grep -q "it gave no result by the call's timeout and grace" "$LOG" ||
	fail "the log does not say why the mute worker was killed"
stop_daemon TERM
ok "504-call-timeout"
