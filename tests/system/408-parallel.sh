#!/bin/sh
# 408-parallel: parallel fan-out. py_parallel_execute over
# 20 inputs with parallel_max_concurrency 4 runs each input in a fresh
# kernel with its keys bound as variables, never more than 4 at once
# (observed twice: by polling the control socket's worker list while it
# runs, and from the start and end times the kernels themselves record),
# and py_check_batch returns all 20 results, one item's error, and nothing
# to another session; an item past its timeout or whose kernel dies fails
# alone; finished batches are dropped after job_retention_s.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_EXTRA='parallel_max_concurrency: 4
job_retention_s: 2'
write_config
start_daemon
wait_ready

run_py "$URL" "$TMPD/run" <<'EOF2'
import sys, threading, time
from mcp import Client, check, ok, text_of
from calls import tool, sc, control, wait_for

url, rundir = sys.argv[1], sys.argv[2]
a = Client(url)
a.initialize()
names = [t["name"] for t in a.result("tools/list")["tools"]]
check({"py_parallel_execute", "py_check_batch"} <= set(names), "tools/list has the batch tools", names)

# Watch the workers while the batch runs: batch kernels are assigned
# workers that belong to no session.
samples, stop = [], threading.Event()
def watch():
    while not stop.is_set():
        try:
            ws = control(rundir)["workers"]
        except Exception as e:
            samples.append(("error", str(e)))
        else:
            samples.append((time.time(), sum(1 for w in ws if w["state"] == "assigned"
                                             and not w.get("session")), len(ws)))
        time.sleep(0.05)
watcher = threading.Thread(target=watch, daemon=True)
watcher.start()

code = ("import os, time\nstarted = time.time()\ntime.sleep(2.0)\n"
        "if i == 13:\n    raise ValueError('unlucky %d' % i)\n"
        "print('item', i)\n"
        "answer = {'i': i, 'label': label, 'square': i * i, 'pid': os.getpid(),\n"
        "          'start': started, 'end': time.time()}")
inputs = [{"i": k, "label": "n%02d" % k} for k in range(20)]
t0 = time.time()
r = tool(a, "py_parallel_execute", {"code": code, "inputs": inputs, "timeout": 30,
                                    "result_variable": "answer"})
check(r.get("isError") is not True, "parallel_execute accepted", r)
s = sc(r)
bid = s.get("batch_id")
check(isinstance(bid, str) and len(bid) >= 32, "a batch_id", r)
check(s.get("total") == 20 and s.get("concurrency") == 4, "total 20, concurrency 4", r)
check(time.time() - t0 < 2, "parallel_execute answers at once")

b = Client(url)
b.initialize()
rb = tool(b, "py_check_batch", {"batch_id": bid})
check(rb.get("isError") is True and sc(rb).get("status") == "not_found" and "items" not in sc(rb),
      "another session's check_batch: not_found", rb)

seen_running = False
deadline = time.time() + 120
while True:
    r = tool(a, "py_check_batch", {"batch_id": bid})
    s = sc(r)
    check(s.get("batch_id") == bid and s.get("total") == 20 and len(s.get("items", [])) == 20,
          "check_batch reports 20 items", r)
    check(s.get("running", 0) <= 4, "check_batch: at most 4 running (%s)" % s.get("running"), s)
    if s["status"] == "running":
        seen_running = True
    if s["status"] == "completed":
        break
    check(time.time() < deadline, "the batch finishes within 120 s", s)
    time.sleep(0.3)
took = time.time() - t0
stop.set()
watcher.join()
check(seen_running, "check_batch said running before completed")

errs = [x for x in samples if x[0] == "error"]
check(not errs, "the control socket answered every poll", errs[:3])
peak = max(n for _, n, _ in samples)
check(len(samples) > 20, "the watcher sampled the workers (%d samples)" % len(samples))
check(peak <= 4, "never more than 4 batch kernels at once (control socket peak %d)" % peak,
      [x for x in samples if x[1] > 4][:10])
check(peak >= 2, "the items really ran side by side (control socket peak %d)" % peak)

check(s["finished"] == 20 and s["failed"] == 1 and s["running"] == 0,
      "finished 20, failed 1, running 0", {k: s[k] for k in s if k != "items"})
items = sorted(s["items"], key=lambda x: x["index"])
check([x["index"] for x in items] == list(range(20)), "items indexed 0..19", items)
spans, pids = [], set()
for k, x in enumerate(items):
    if k == 13:
        check(x["status"] == "failed" and (x.get("error") or {}).get("type") == "ValueError"
              and "unlucky 13" in x["error"].get("message", "") and "result" not in x,
              "item 13 failed with its ValueError", x)
        continue
    v = x.get("result") or {}
    check(x["status"] == "completed", "item %d completed" % k, x)
    check(v.get("i") == k and v.get("label") == "n%02d" % k and v.get("square") == k * k,
          "item %d: its inputs were bound and its result_variable returned as JSON" % k, x)
    check(x.get("stdout") == "item %d\n" % k, "item %d: its stdout" % k, x)
    spans.append((v["start"], v["end"]))
    pids.add(v["pid"])
check(len(pids) == 19, "every item ran in a fresh kernel (%d distinct pids)" % len(pids))
events = sorted([(st, 1) for st, _ in spans] + [(en, -1) for _, en in spans], key=lambda e: (e[0], e[1]))
cur = overlap = 0
for _, d in events:
    cur += d
    overlap = max(overlap, cur)
check(overlap <= 4, "the kernels' own clocks: at most 4 items overlapped (%d)" % overlap, spans)
check(overlap >= 2, "the kernels' own clocks: items overlapped (%d)" % overlap, spans)
ok("20 inputs in %.1f s: 19 results and 1 error; peak %d batch kernels (control socket), "
   "%d overlapping (kernel clocks)" % (took, peak, overlap))

# Without result_variable, 'result' is read; a bad input is refused.
r = tool(a, "py_parallel_execute", {"code": "result = x * 10", "inputs": [{"x": 1}, {"x": 2}]})
bid = sc(r)["batch_id"]
deadline = time.time() + 60
while sc(r).get("status") != "completed":
    check(time.time() < deadline, "the small batch finishes", sc(r))
    time.sleep(0.3)
    r = tool(a, "py_check_batch", {"batch_id": bid})
check([x.get("result") for x in sorted(sc(r)["items"], key=lambda x: x["index"])] == [10, 20],
      "result_variable defaults to 'result'", r)
resp = a.request("tools/call", {"name": "py_parallel_execute",
                                "arguments": {"code": "result = 1", "inputs": [{"not valid": 1}]}})
j = resp.json or {}
check("error" in j or j.get("result", {}).get("isError") is True,
      "inputs whose keys are not identifiers are refused", j)
ok("default result_variable; invalid inputs refused")

# Items that time out or kill their kernel fail alone.
r = tool(a, "py_parallel_execute", {"code": "import os, time\nif k == 0: time.sleep(30)\n"
                                            "if k == 1: os.kill(os.getpid(), 9)\nresult = k",
                                    "inputs": [{"k": 0}, {"k": 1}, {"k": 2}], "timeout": 1})
bid2 = sc(r)["batch_id"]
deadline = time.time() + 60
while sc(r).get("status") != "completed":
    check(time.time() < deadline, "the failing batch finishes", sc(r))
    time.sleep(0.3)
    r = tool(a, "py_check_batch", {"batch_id": bid2})
items = sorted(sc(r)["items"], key=lambda x: x["index"])
check(items[0]["status"] == "failed" and items[0]["error"]["type"] == "TimeoutError",
      "an item past its timeout fails with TimeoutError", items)
check(items[1]["status"] == "failed" and items[1]["error"]["type"] == "KernelDied" and
      "SIGKILL" in items[1]["error"]["message"], "an item whose kernel dies fails with KernelDied", items)
check(items[2]["status"] == "completed" and items[2]["result"] == 2, "the others complete", items)
check(sc(r)["failed"] == 2, "failed counts 2", sc(r))
ok("item timeout and kernel death fail their item only")

# job_retention_s (2): the small batch, finished a while ago, is dropped.
gone = wait_for(lambda: sc(tool(a, "py_check_batch", {"batch_id": bid})).get("status") == "not_found",
                15, 0.5)
check(gone, "a finished batch is dropped after job_retention_s",
      sc(tool(a, "py_check_batch", {"batch_id": bid})))
ok("finished batches dropped after job_retention_s")
EOF2
