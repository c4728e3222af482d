#!/bin/sh
# 522-batch-limits: parallel_execute is bounded. With
# pool.max_sessions 3 and parallel_max_inputs 5: a batch of 6 inputs is
# refused naming parallel_max_inputs; two batches beside one session never
# hold more than 2 kernels at once (observed on the control socket), and a
# new session is refused while they fill the pool; a value of 200,000
# characters (past the 50,000-character output chunk) and a None come back
# whole; py_cancel_batch stops a batch of sleeping items, running and
# pending, and frees their kernels; a batch ends with the session that
# started it.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_EXTRA='parallel_max_inputs: 5'
write_config
config_set pool.max_sessions 3
start_daemon
wait_ready

run_py "$URL" "$TMPD/run" <<'EOF2'
import sys, threading, time
from mcp import Client, check, ok
from calls import tool, sc, control, wait_for

url, rundir = sys.argv[1], sys.argv[2]


def batch_kernels():
    return sum(1 for w in control(rundir)["workers"]
               if w["state"] == "assigned" and not w.get("session"))


def wait_status(c, bid, want, seconds=120):
    r = wait_for(lambda: (lambda r: r if sc(r).get("status") in want else None)(
        tool(c, "py_check_batch", {"batch_id": bid})), seconds, 0.3)
    check(r is not None, "batch %s reaches %s" % (bid[:8], want),
          tool(c, "py_check_batch", {"batch_id": bid}))
    return sc(r)


a = Client(url)
a.initialize()
names = [t["name"] for t in a.result("tools/list")["tools"]]
check("py_cancel_batch" in names, "tools/list has py_cancel_batch", names)

# At most parallel_max_inputs inputs.
r = a.request("tools/call", {"name": "py_parallel_execute",
                             "arguments": {"code": "result = i", "inputs": [{"i": k} for k in range(6)]}})
err = (r.json or {}).get("error") or {}
check(err.get("code") == -32602 and "parallel_max_inputs" in err.get("message", "")
      and "6" in err["message"], "6 inputs: refused, naming parallel_max_inputs", r.raw)
ok("a batch over parallel_max_inputs is refused: %s" % err["message"])

# Values come back whole, not through stdout.
r = tool(a, "py_parallel_execute", {"code": "result = 'v' * n if n else None",
                                    "inputs": [{"n": 200000}, {"n": 0}]})
s = wait_status(a, sc(r)["batch_id"], ("completed",))
items = sorted(s["items"], key=lambda x: x["index"])
check(items[0]["status"] == "completed" and items[0].get("result") == "v" * 200000,
      "a 200,000-character value comes back whole",
      {k: (v if k != "result" else len(v or "")) for k, v in items[0].items()})
check(items[1]["status"] == "completed" and "result" in items[1] and items[1]["result"] is None,
      "a None comes back as null", items[1])
ok("values of 200,000 characters and None come back whole")

# Two batches beside one session: 2 kernels at most (max_sessions 3).
samples, stop = [], threading.Event()
def watch():
    while not stop.is_set():
        samples.append(batch_kernels())
        time.sleep(0.05)
watcher = threading.Thread(target=watch, daemon=True)
watcher.start()
code = "import time\ntime.sleep(1)\nresult = i"
b1 = sc(tool(a, "py_parallel_execute", {"code": code, "inputs": [{"i": k} for k in range(4)]}))["batch_id"]
b2 = sc(tool(a, "py_parallel_execute", {"code": code, "inputs": [{"i": k} for k in range(4)]}))["batch_id"]
check(wait_for(lambda: batch_kernels() == 2, 60), "the batches take the 2 free places")
x = Client(url)
resp = x.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "t", "version": "0"}})
check(resp.status == 503 and "max_sessions" in resp.raw,
      "a new session is refused while batch kernels fill pool.max_sessions", resp.raw)
for bid in (b1, b2):
    s = wait_status(a, bid, ("completed",))
    check([i.get("result") for i in sorted(s["items"], key=lambda x: x["index"])] == [0, 1, 2, 3],
          "batch %s returns every result" % bid[:8], s)
stop.set()
watcher.join()
check(max(samples) <= 2, "never more than 2 batch kernels beside one session (peak %d)"
      % max(samples))
ok("two batches, one session, max_sessions 3: peak %d batch kernels; a new session refused"
   % max(samples))

# Cancel: running items are interrupted, pending ones never start.
bid = sc(tool(a, "py_parallel_execute", {"code": "import time\ntime.sleep(120)\nresult = i",
                                         "inputs": [{"i": k} for k in range(5)]}))["batch_id"]
check(wait_for(lambda: batch_kernels() == 2, 60), "the sleeping batch runs 2 items")
t0 = time.time()
r = tool(a, "py_cancel_batch", {"batch_id": bid})
check(sc(r).get("batch_id") == bid and sc(r).get("status") in ("cancelling", "cancelled"),
      "cancel_batch answers with the batch's state", r)
s = wait_status(a, bid, ("cancelled",), 60)
check(all(i["status"] == "cancelled" for i in s["items"]) and s["finished"] == 5,
      "every item is cancelled", s)
check(wait_for(lambda: batch_kernels() == 0, 30), "the cancelled batch's kernels are gone")
ok("cancel_batch: cancelled in %.1f s, kernels freed" % (time.time() - t0))
r = tool(a, "py_cancel_batch", {"batch_id": "0" * 32})
check(r.get("isError") is True and sc(r).get("status") == "not_found", "an unknown batch: not_found", r)

# A batch ends with its session.
d = Client(url)
d.initialize()
bid = sc(tool(d, "py_parallel_execute", {"code": "import time\ntime.sleep(120)\nresult = i",
                                         "inputs": [{"i": k} for k in range(3)]}))["batch_id"]
check(wait_for(lambda: batch_kernels() >= 1, 60), "d's batch runs")
check(d.delete().status in (200, 202, 204), "d's session ends")
check(wait_for(lambda: batch_kernels() == 0, 30), "its batch's kernels end with it",
      control(rundir)["workers"])
ok("a batch ends with the session that started it")
EOF2
