#!/bin/sh
# 482-front-crash: with persist_sessions, a SIGKILL of the front loses no
# session. The parent keeps every worker and kernel, gives each a new
# socket through its line to the worker (fd 4), and the new front takes
# them over (WORKER_LEFT): 8 idle sessions (2025-11-25 MCP sessions and
# 2026-07-28 execution sessions) and 2 busy ones all answer under their
# old ids, in the same kernel process, with every variable, nothing
# restored from a checkpoint. The calls in flight at the crash fail (their
# connection ends); the code they ran runs to its end, and the session's
# next call waits for it. A warm worker no session held ends. Plain, and
# with kernel_uid_range; and background jobs: an ended one's result kept,
# the running one Aborted.
. "$(dirname "$0")/lib.sh"

require_py ipykernel
require_py dill
require_binaries
setup_tmp
PORT=$(free_port)
CFG_PERSIST=true

one_round() {
	round=$1
	CFG_WARM=1
	CFG_EXTRA=
	if [ "$round" = uids ]; then
		worker_for_other_uids
		chmod 711 "$TMPD"
		CFG_EXTRA='kernel_uid_range: "63490-63505"'
	fi
	write_config
	config_set pool.max_sessions 12
	start_daemon
	wait_ready
	front=$(front_pid)
	[ -n "$front" ] || fail "no front"
	: >"$TMPD/killed"
	run_py "$URL" "$TMPD" "$front" "$LOG" <<'EOF2'
import json, os, signal, sys, threading, time
from mcp import Client, ModernClient, check, ok, value_of
from calls import sc, wait_busy, wait_for

url, tmpd, front, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def run(c, code, **kw):
    r = c.execute(code, **kw) if not isinstance(c, ModernClient) else \
        c.call("execute_py_code", dict(code=code, **kw))
    check(sc(r).get("success") is True, "runs: " + code, r)
    return r

# Eight idle sessions: six of 2025-11-25, two execution sessions of 2026-07-28.
idle = []
for i in range(6):
    c = Client(url)
    c.initialize()
    r = run(c, "import os\nx = %d\nos.getpid()" % i)
    idle.append({"kind": "mcp", "id": c.session_id, "x": i, "pid": int(value_of(r))})
m = ModernClient(url)
for i in range(6, 8):
    r = m.call("execute_py_code", {"code": "import os\nx = %d\nos.getpid()" % i})
    idle.append({"kind": "modern", "id": sc(r)["execution_session_id"], "x": i,
                 "pid": int(value_of(r))})
# One more whose client declared elicitation: the journal keeps that too.
el = Client(url)
el.initialize(capabilities={"elicitation": {}})
run(el, "e = 1")
# Two busy ones: a call runs a cell that ends 6 s later, setting `done`.
busy, outcomes, threads = [], {}, []
for i in range(2):
    c = Client(url)
    c.initialize()
    r = run(c, "import os\ny = %d\nos.getpid()" % i)
    busy.append({"id": c.session_id, "y": i, "pid": int(value_of(r))})
    def go(c=c, i=i):
        try:
            r = c.execute("import time\ntime.sleep(6)\ndone = 'yes %d'" % i, http_timeout=60)
            outcomes[i] = ("answered", r)
        except Exception as e:  # the connection ends with the front
            outcomes[i] = ("failed", repr(e))
    t = threading.Thread(target=go)
    t.start()
    threads.append(t)
for b in busy:
    c = Client(url)
    c.session_id = b["id"]
    wait_busy(c)
time.sleep(2.5)  # the journal is written each second it changed
os.kill(front, signal.SIGKILL)
for t in threads:
    t.join(70)
for i in range(2):
    check(outcomes.get(i, ("none",))[0] == "failed",
          "the call in flight at the crash fails: its connection ended", outcomes.get(i))
ok("8 idle and 2 busy sessions, then SIGKILL of the front: the calls in flight fail")

crashed = time.time()
check(wait_for(lambda: "takes over 11 live workers" in open(log).read() or
               "takes over 12 live workers" in open(log).read(), 30),
      "the new front takes over every live worker")
def answers():
    try:
        return Client(url).initialize() is not None
    except Exception:
        return False
check(wait_for(answers, 30), "the new front answers")

for s in idle:
    if s["kind"] == "mcp":
        c = Client(url)
        c.session_id = s["id"]
        r = c.execute("x, os.getpid()")
    else:
        r = m.call("execute_py_code", {"code": "x, os.getpid()", "execution_session_id": s["id"]})
    check(sc(r).get("success") is True and eval(value_of(r)) == (s["x"], s["pid"]),
          "an idle session answers under its old id, in the same kernel, with its variables", r)
    check("restored" not in sc(r) and not sc(r).get("kernel_restarted"),
          "nothing was restored: the kernel never stopped", r)
ok("every idle session (both revisions) kept its kernel and its variables")
for b in busy:
    c = Client(url)
    c.session_id = b["id"]
    r = c.execute("done, y, os.getpid()", http_timeout=60)
    check(sc(r).get("success") is True and
          eval(value_of(r)) == ("yes %d" % b["y"], b["y"], b["pid"]),
          "a busy session's cell ran to its end in the same kernel", r)
    check("restored" not in sc(r), "nothing was restored", r)
ok("both busy sessions kept their kernels; the cell running at the crash ran to its end")
journal = tmpd + "/state/journal/sessions.json"
def declared():
    if os.stat(journal).st_mtime <= crashed:
        return None  # not yet written by the new front
    for e in json.load(open(journal))["sessions"]:
        if e["id"] == el.session_id:
            return e.get("elicitation")
check(wait_for(lambda: declared() is True, 10), "the new front still knows that the client "
      "declared elicitation (its journal says so)")
r = el.execute("e")
check(value_of(r) == "1", "that session goes on too", r)
ok("a client's elicitation capability survives the crash")
EOF2
	grep -q "worker .* of session directory .* is in no journal entry: ending it" "$LOG" ||
		fail "the warm worker no session held was not ended"
	stop_daemon
	[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
	rm -rf "$TMPD/state"
}

# Background jobs: one that ended before the crash answers with its
# result, the one running then ends as Aborted, and the session goes on in
# the same kernel, the cell that job ran having run to its end.
jobs_round() {
	CFG_WARM=1
	CFG_EXTRA='execution_mode: async_only
job_retention_s: 600'
	write_config
	start_daemon
	wait_ready
	front=$(front_pid)
	run_py "$URL" "$TMPD" "$front" "$LOG" <<'EOF2'
import os, signal, sys, time
from mcp import Client, check, ok
from calls import sc, tool, wait_for

url, tmpd, front, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
a = Client(url)
a.initialize()
def status(j):
    return sc(tool(a, "py_check_job", {"job_id": j}))
done = sc(tool(a, "execute_py_code", {"code": "import os\nx = 6 * 7\nos.getpid()"}))["job_id"]
check(wait_for(lambda: status(done)["status"] == "completed", 30, 0.2), "the first job completes")
pid = status(done)["rich_outputs"][0]["data"]
running = sc(tool(a, "execute_py_code", {"code": "import time\ntime.sleep(5)\nlate = 'ran'"}))["job_id"]
check(wait_for(lambda: status(running)["status"] == "running", 10, 0.2), "the second runs")
time.sleep(2.5)  # the journal is written each second it changed
os.kill(front, signal.SIGKILL)
def answers():
    try:
        return status(done)["status"] == "completed"
    except Exception:
        return False
check(wait_for(answers, 30, 0.2), "the new front answers")
s = status(done)
check(s.get("rich_outputs") == [{"mime_type": "text/plain", "data": pid}],
      "the job that ended before the crash answers with its whole result", s)
s = status(running)
check(s.get("status") == "failed" and (s.get("error") or {}).get("type") == "Aborted" and
      s["error"].get("message") == "the daemon stopped while this job ran, or its front "
                                   "crashed: its output is lost",
      "the job running at the crash: failed, Aborted", s)
j = sc(tool(a, "execute_py_code", {"code": "x, late, os.getpid()"}))["job_id"]
check(wait_for(lambda: status(j)["status"] == "completed", 30, 0.2), "the next job completes")
s = status(j)
check(s["rich_outputs"][0]["data"] == "(42, 'ran', %s)" % pid and "restored" not in s,
      "the session goes on in the same kernel, the aborted job's cell having run to its end", s)
ok("jobs: an ended one's result is kept, the running one is Aborted, the kernel goes on")
EOF2
	stop_daemon
	[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
	rm -rf "$TMPD/state"
}

one_round plain
jobs_round
if [ "$(id -u)" = 0 ]; then one_round uids; else echo "# uids: needs root; not run"; fi
