#!/bin/sh
# 402-async-jobs: execution modes and background jobs.
# async_only: execute answers at once with {job_id, session_id, poll_tool,
# message}; py_check_job shows the output so far while the job runs, then
# the whole result; failed (also by kernel death), timed_out and cancelled
# jobs say so; calls of one session take turns; a job id of another MCP
# session answers exactly like an unknown one, and cannot be cancelled from
# there; finished jobs are dropped after job_retention_s. adaptive: a quick
# call answers in place, a slow one is promoted to a job after
# promotion_threshold_s.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_EXTRA='execution_mode: async_only
job_retention_s: 3'
write_config
start_daemon
wait_ready

run_py "$URL" <<'EOF2'
import re, sys, time
from mcp import Client, check, ok, text_of, value_of
from calls import tool, sc, wait_for

a = Client(sys.argv[1])
a.initialize()
b = Client(sys.argv[1])
b.initialize()

tools = [t["name"] for t in a.result("tools/list")["tools"]]
check({"py_check_job", "py_cancel_job"} <= set(tools), "tools/list has check_job and cancel_job", tools)

def start(c, code, **kw):
    args = {"code": code}
    args.update(kw)
    t0 = time.time()
    r = tool(c, "execute_py_code", args)
    took = time.time() - t0
    s = sc(r)
    check(r.get("isError") is not True, "async execute is accepted", r)
    check(isinstance(s.get("job_id"), str) and re.fullmatch(r"[0-9a-f]{32,}", s["job_id"]),
          "the answer has an unguessable job_id (>= 32 hex digits)", r)
    check(s.get("poll_tool") == "py_check_job", "poll_tool is py_check_job", r)
    check(isinstance(s.get("session_id"), str) and s["session_id"], "the answer has session_id", r)
    check(isinstance(s.get("message"), str) and "py_check_job" in s["message"],
          "the message says how to poll", r)
    check(not s.get("promoted"), "async_only: not 'promoted'", r)
    check(s["job_id"] in text_of(r), "the job id is in the text content too", r)
    return s, took

def check_job(c, jid):
    return tool(c, "py_check_job", {"job_id": jid})

def wait_done(c, jid, seconds=30):
    def done():
        r = check_job(c, jid)
        return r if sc(r).get("status") != "running" else None
    r = wait_for(done, seconds, 0.2)
    check(r is not None, "job %s ends within %d s" % (jid, seconds), sc(check_job(c, jid)))
    return r

# A job that prints while it runs.
code = ("import time\nfor i in range(8):\n    print('tick', i, flush=True)\n    time.sleep(0.4)\n"
        "produced = 'by the job'")
h, took = start(a, code)
check(took < 1.5, "async_only answers at once (took %.2f s)" % took)
jid = h["job_id"]
seen = []
def partial():
    r = check_job(a, jid)
    s = sc(r)
    check(s.get("job_id") == jid and s.get("session_id") == h["session_id"],
          "check_job names the job and its session", r)
    check(s.get("status") in ("running", "completed"), "status running or completed", r)
    check(isinstance(s.get("elapsed_seconds"), (int, float)), "elapsed_seconds is a number", r)
    check(isinstance(s.get("stdout"), str) and isinstance(s.get("stderr"), str),
          "check_job has stdout and stderr", r)
    seen.append((s["status"], s["stdout"], s["elapsed_seconds"]))
    return s["status"] == "running" and "tick 1" in s["stdout"] and "tick 7" not in s["stdout"]
check(wait_for(partial, 10, 0.1), "check_job shows partial output while the job runs", seen[-3:])
st, out, el = seen[-1]
ok("while running: status %s, %.1f s elapsed, stdout so far %r" % (st, el, out))
r = wait_done(a, jid)
s = sc(r)
check(s["status"] == "completed", "the job completes", r)
check(s.get("success") is True and s.get("error") is None, "completed: success, no error", r)
check(s["stdout"] == "".join("tick %d\n" % i for i in range(8)), "completed: the whole stdout", r)
check(s["elapsed_seconds"] >= 3.0, "elapsed_seconds covers the run (%.2f)" % s["elapsed_seconds"], r)
check("execution_time" in s and "rich_outputs" in s, "completed: the full execution result", r)
r = check_job(a, jid)
check(sc(r).get("status") == "completed", "a finished job can be checked again", r)
ok("async round trip: partial output, then the full result")

# Its effects are in the session; the session id is the session's.
h2, _ = start(a, "produced")
r = wait_done(a, h2["job_id"])
check(sc(r)["status"] == "completed" and value_of(r) == "'by the job'",
      "the job's variables are in the session", r)

# A failing job, a timed-out one.
h3, _ = start(a, "1 / 0")
r = wait_done(a, h3["job_id"])
s = sc(r)
check(s["status"] == "failed" and (s.get("error") or {}).get("type") == "ZeroDivisionError",
      "a raising job: status failed with the error", r)
h4, _ = start(a, "import time\ntime.sleep(30)", timeout=1)
r = wait_done(a, h4["job_id"], 15)
s = sc(r)
check(s["status"] == "timed_out" and (s.get("error") or {}).get("type") == "TimeoutError",
      "a job past its timeout: status timed_out, TimeoutError", r)
# A job whose kernel dies fails with KernelDied; the next job gets a fresh kernel.
h4k, _ = start(a, "import os\nos.kill(os.getpid(), 9)")
r = wait_done(a, h4k["job_id"], 15)
s = sc(r)
check(s["status"] == "failed" and (s.get("error") or {}).get("type") == "KernelDied" and
      "SIGKILL" in s["error"].get("message", ""), "a job whose kernel dies: failed, KernelDied", r)
h4n, _ = start(a, "6 * 7")
r = wait_done(a, h4n["job_id"], 60)
s = sc(r)
check(s["status"] == "completed" and value_of(r) == "42" and s.get("kernel_restarted") is True,
      "the next job runs on a fresh kernel and says kernel_restarted", r)
ok("failed, timed_out and kernel-died jobs")

# One execution at a time per session: the second waits its turn.
h5, _ = start(a, "import time\ntime.sleep(1.5)\nfirst_done = True")
h6, _ = start(a, "print('second sees', first_done)")
r = wait_done(a, h6["job_id"])
check(sc(r)["status"] == "completed" and "second sees True" in sc(r)["stdout"],
      "a second call runs after the first", r)
check(sc(check_job(a, h5["job_id"]))["status"] == "completed", "the first completed", r)
ok("calls of one session take turns")

# Another session sees nothing of a's jobs.
hb, _ = start(a, "before_cancel = 7")
check(sc(wait_done(a, hb["job_id"]))["status"] == "completed", "before_cancel = 7 ran")
h7, _ = start(a, "import time\nfor i in range(30):\n    print(i, flush=True)\n    time.sleep(0.2)\n"
                 "survived_cancel = False")
foreign = check_job(b, h7["job_id"])
missing = check_job(b, "0" * len(h7["job_id"]))
fs, ms = sc(foreign), sc(missing)
check(foreign.get("isError") is True and fs.get("status") == "not_found",
      "check_job of another session's job: not_found, isError", foreign)
check("stdout" not in fs and "session_id" not in fs, "not_found gives nothing of the job away", foreign)
check(set(fs) == set(ms) and text_of(foreign) == text_of(missing) and
      foreign.get("isError") == missing.get("isError"),
      "another session's job answers exactly like a missing one", [foreign, missing])
r = tool(b, "py_cancel_job", {"job_id": h7["job_id"]})
check(r.get("isError") is True and sc(r).get("status") == "not_found",
      "cancel_job of another session's job: not_found", r)
time.sleep(0.5)
check(sc(check_job(a, h7["job_id"]))["status"] == "running", "and a's job still runs")
ok("another session's job id is not found (check and cancel)")

# cancel_job interrupts it; variables from before survive.
t0 = time.time()
r = tool(a, "py_cancel_job", {"job_id": h7["job_id"]})
check(r.get("isError") is not True and sc(r).get("job_id") == h7["job_id"], "cancel_job accepted", r)
r = wait_done(a, h7["job_id"], 10)
took = time.time() - t0
s = sc(r)
check(s["status"] == "cancelled", "the cancelled job says cancelled", r)
check(took < 5, "cancelled promptly (%.1f s)" % took)
check(s["stdout"].startswith("0\n") and "29\n" not in s["stdout"],
      "it stopped before the end, keeping its output so far", s["stdout"])
h8, _ = start(a, "(before_cancel, 'survived_cancel' in globals())")
r = wait_done(a, h8["job_id"])
check(sc(r)["status"] == "completed" and value_of(r) == "(7, False)",
      "the session works after the cancel and keeps its variables", r)
ok("cancel_job: stopped in %.1f s, session intact" % took)

# A job cancelled while it waits its turn never runs.
h9, _ = start(a, "import time\ntime.sleep(1.5)\nfate = 'first ran'")
h10, _ = start(a, "fate = 'queued ran'")
r = tool(a, "py_cancel_job", {"job_id": h10["job_id"]})
check(sc(r).get("status") == "cancelled", "cancel_job of a queued job: cancelled", r)
r = wait_done(a, h10["job_id"], 10)
check(sc(r)["status"] == "cancelled", "the queued job stays cancelled", r)
check(sc(wait_done(a, h9["job_id"]))["status"] == "completed", "the running one completes")
h11, _ = start(a, "fate")
r = wait_done(a, h11["job_id"])
check(value_of(r) == "'first ran'", "the cancelled queued job never ran", r)
r = tool(a, "py_cancel_job", {"job_id": h11["job_id"]})
check(sc(r).get("status") == "completed" and r.get("isError") is not True,
      "cancel_job of a finished job changes nothing", r)
ok("a queued job cancelled before its turn never runs")

# Finished jobs are dropped after job_retention_s (3).
r = check_job(a, h11["job_id"])
check(sc(r)["status"] == "completed", "a just-finished job is kept", r)
gone = wait_for(lambda: sc(check_job(a, h11["job_id"])).get("status") == "not_found", 10, 0.5)
check(gone, "a finished job is dropped after job_retention_s", sc(check_job(a, h11["job_id"])))
ok("finished jobs dropped after job_retention_s")
EOF2

stop_daemon TERM
[ "$DAEMON_RC" = 0 ] || fail "async_only daemon: exit status $DAEMON_RC"

# --- adaptive -----------------------------------------------------------------
PORT=$(free_port)
CFG_EXTRA='execution_mode: adaptive
promotion_threshold_s: 1'
write_config
start_daemon
wait_ready

run_py "$URL" <<'EOF2'
import sys, time
from mcp import Client, check, ok, text_of, value_of
from calls import tool, sc, wait_for

a = Client(sys.argv[1])
a.initialize()
t0 = time.time()
r = tool(a, "execute_py_code", {"code": "y = 6 * 7\ny"})
took = time.time() - t0
s = sc(r)
check("job_id" not in s and s.get("success") is True and value_of(r) == "42",
      "adaptive: a quick call answers in place", r)
check(took < 1.5, "the quick call did not wait for the threshold (%.2f s)" % took)
ok("adaptive: quick call answered directly in %.2f s" % took)

t0 = time.time()
r = tool(a, "execute_py_code", {"code": "import time\nfor i in range(10):\n"
                                        "    print('step', i, flush=True)\n    time.sleep(0.4)\ny + 1"})
took = time.time() - t0
s = sc(r)
check(s.get("promoted") is True and isinstance(s.get("job_id"), str),
      "adaptive: a slow call is promoted to a job", r)
check(s.get("poll_tool") == "py_check_job" and s.get("session_id"), "promoted: poll_tool, session_id", r)
check(0.9 <= took < 3, "promoted after the 1 s threshold (%.2f s)" % took)
jid = s["job_id"]
r = tool(a, "py_check_job", {"job_id": jid})
s = sc(r)
check(s.get("status") == "running" and "step 0" in s.get("stdout", "")
      and "step 9" not in s.get("stdout", ""),
      "check_job after promotion: running, with the output so far", r)
ok("promoted after %.2f s; partial output %r" % (took, s["stdout"]))
r = wait_for(lambda: (lambda r: r if sc(r).get("status") != "running" else None)(
    tool(a, "py_check_job", {"job_id": jid})), 20, 0.2)
check(r is not None and sc(r)["status"] == "completed", "the promoted job completes", r)
check(value_of(r) == "43" and "step 9" in sc(r)["stdout"], "with its whole result", r)
ok("adaptive round trip through check_job")

b = Client(sys.argv[1])
b.initialize()
r = tool(b, "py_check_job", {"job_id": jid})
check(r.get("isError") is True and sc(r).get("status") == "not_found",
      "adaptive: another session's job is not found", r)
ok("adaptive: foreign job id not found")
EOF2
