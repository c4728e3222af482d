#!/bin/sh
# 560-pool-bound: the pool keeps its bound. With pool.max_sessions 8,
# pool.warm 2 and pool.warm_max 2, three sessions hold kernels and one of
# them runs a py_parallel_execute of 30 short items. Sampled from /proc
# (the daemon's children but the front) while the batch runs, the live
# workers never exceed max_sessions + warm_max = 10; the batch did run
# side by side (the peak reaches the sessions' kernels plus the five
# places left to it), and every item completes.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_WARM=2
write_config
config_set pool.max_sessions 8
config_set pool.warm_max 2
start_daemon
wait_ready

run_py "$URL" "$DAEMON_PID" <<'EOF2'
import sys, threading, time
from mcp import Client, check, ok
from calls import tool, sc, wait_for

url, daemon = sys.argv[1], int(sys.argv[2])
MAX_SESSIONS, WARM_MAX = 8, 2
BOUND = MAX_SESSIONS + WARM_MAX


def comm(pid):
    try:
        with open("/proc/%s/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return None


def state(pid):
    try:
        with open("/proc/%s/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def live_workers():
    """The daemon's children but the front, not yet exited: every worker
    process, starting, idle, running or shutting down."""
    kids = []
    try:
        with open("/proc/%d/task/%d/children" % (daemon, daemon)) as f:
            kids = f.read().split()
    except OSError:
        pass
    return [p for p in kids if comm(p) not in (None, "codeexecd-front")
            and state(p) not in ("Z", "X", "gone")]


clients = []
for _ in range(3):
    c = Client(url)
    c.initialize()
    check(sc(c.execute("1")).get("success") is True, "a session holds a kernel")
    clients.append(c)
ok("three sessions hold kernels")

peak, stop = [0, []], threading.Event()
def watch():
    while not stop.is_set():
        w = live_workers()
        if len(w) > peak[0]:
            peak[0], peak[1] = len(w), w
        time.sleep(0.01)
watcher = threading.Thread(target=watch, daemon=True)
watcher.start()

code = "import time\ntime.sleep(0.5)\nresult = i * i"
r = tool(clients[0], "py_parallel_execute", {"code": code,
                                              "inputs": [{"i": k} for k in range(30)]})
bid = sc(r).get("batch_id")
check(bid, "the batch started", r)

def done():
    s = sc(tool(clients[0], "py_check_batch", {"batch_id": bid}))
    return s if s.get("status") in ("completed", "failed", "cancelled") else None
s = wait_for(done, 240, 0.3)
stop.set()
watcher.join(5)
check(s is not None, "the batch ends within 240 s")
items = sorted(s["items"], key=lambda x: x["index"])
bad = [x for x in items if x["status"] != "completed" or x.get("result") != x["index"] ** 2]
check(s["status"] == "completed" and not bad, "every item completes with its value", bad or s)
ok("the batch of 30 completed")

check(peak[0] <= BOUND,
      "live workers peaked at %d, above max_sessions + warm_max = %d" % (peak[0], BOUND),
      peak[1])
check(peak[0] >= MAX_SESSIONS,
      "the batch ran side by side (peak %d, at least %d)" % (peak[0], MAX_SESSIONS), peak[1])
ok("live workers peaked at %d while the batch ran (bound %d)" % (peak[0], BOUND))
check(all(sc(c.execute("6 * 7")).get("success") is True for c in clients),
      "the three sessions still work")
EOF2
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
ok "daemon stopped cleanly"
