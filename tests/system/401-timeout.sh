#!/bin/sh
# 401-timeout: per-call timeouts interrupt the kernel.
# time.sleep(30) with timeout 1 answers TimeoutError in about a second with
# the output printed so far, and the next call still sees the variables
# defined before; default_timeout applies without a timeout and a larger
# timeout is clamped to max_timeout; calls of one session take turns, and
# one whose timeout passes while it waits fails clearly; a loop that ignores
# SIGINT is killed after the grace period, the answer says so, and the
# session works again afterwards.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
write_config
# default_timeout 3 and max_timeout 4 (lib.sh writes 30 and 120).
config_set default_timeout 3
config_set max_timeout 4
start_daemon
wait_ready

run_py "$URL" <<'EOF2'
import sys, time
from mcp import Client, check, ok, text_of, value_of

a = Client(sys.argv[1])
a.initialize()
r = a.execute("kept = 41")
check(r["structuredContent"]["success"] is True, "kept = 41 runs", r)

t0 = time.time()
r = a.execute("print('before the sleep', flush=True)\nimport time\ntime.sleep(30)\nprint('after')",
              timeout=1)
took = time.time() - t0
s = r["structuredContent"]
check(s["success"] is False, "sleep(30) with timeout 1: success false", r)
check((s.get("error") or {}).get("type") == "TimeoutError", "error.type is TimeoutError", r)
check(r.get("isError") is True, "a timed-out call is a tool error (isError)", r)
check(took < 4, "TimeoutError in about a second (took %.2f s)" % took, r)
check(took >= 0.9, "the call ran for its timeout, not less (took %.2f s)" % took)
check("before the sleep" in s["stdout"] and "after" not in s["stdout"],
      "the answer holds the output produced before the timeout", s["stdout"])
ok("sleep(30), timeout 1: TimeoutError after %.2f s, partial output kept" % took)

r = a.execute("kept + 1")
check(r["structuredContent"]["success"] is True and value_of(r) == "42",
      "the next call sees the variable defined before the timeout", r)
check(not r["structuredContent"].get("kernel_restarted"), "no restart after an interrupt", r)
ok("variables survive the interrupt")

# One execution at a time: a second call waits its turn, and one whose own
# timeout passes while it waits fails clearly without running.
import threading
from calls import Stream, call_msg, wait_busy
first = Stream(a, call_msg(a, "execute_py_code",
                           {"code": "import time\ntime.sleep(2.5)\norder = ['first']", "timeout": 4}, 501)).start()
wait_busy(a)
t0 = time.time()
r = a.execute("order.append('impatient')", timeout=1)
took = time.time() - t0
s = r["structuredContent"]
check(s["success"] is False and (s.get("error") or {}).get("type") == "TimeoutError" and
      "earlier execution" in s["error"].get("message", ""),
      "a call whose timeout passes while an earlier one runs: TimeoutError saying why", r)
check(took < 2, "it failed at its own timeout (%.2f s)" % took)
patient = Stream(a, call_msg(a, "execute_py_code",
                             {"code": "order.append('patient'); order", "timeout": 4}, 502)).start()
check(first.wait(10) and patient.wait(10), "both calls answered", [first.evidence(), patient.evidence()])
check(first.json["result"]["structuredContent"]["success"] is True, "the first call ran", first.evidence())
check(value_of(patient.json["result"]) == "['first', 'patient']",
      "the patient call ran after the first; the impatient one never ran", patient.evidence())
ok("calls of one session take turns; an impatient one times out waiting (%.2f s)" % took)

# Without a timeout, default_timeout (3) applies; a timeout above
# max_timeout (4) is clamped to it, not refused.
for args, want in (({}, 3), ({"timeout": 100000}, 4)):
    t0 = time.time()
    r = a.execute("import time\ntime.sleep(30)", **args)
    took = time.time() - t0
    check((r["structuredContent"].get("error") or {}).get("type") == "TimeoutError" and
          want - 0.2 <= took < want + 2,
          "timeout %s: TimeoutError after about %d s (took %.2f s)"
          % (args.get("timeout", "unset"), want, took), r)
ok("no timeout: default_timeout applies; timeout 100000: clamped to max_timeout")

r = a.execute("import os; pid0 = os.getpid(); open('survives.txt', 'w').write('yes'); pid0")
pid0 = int(value_of(r))
t0 = time.time()
r = a.execute("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
              "print('ignoring SIGINT', flush=True)\nwhile True:\n    pass", timeout=1,
              http_timeout=60)
took = time.time() - t0
s = r["structuredContent"]
err = s.get("error") or {}
check(s["success"] is False and r.get("isError") is True, "the SIGINT-ignoring loop fails", r)
check(err.get("type") == "TimeoutError", "error.type is TimeoutError", r)
msg = err.get("message", "") + text_of(r)
check("killed" in msg and ("lost" in msg or "restart" in msg),
      "the answer says the kernel was killed and its state lost", r)
check(took < 15, "killed within the grace period (took %.1f s, timeout 1 + grace 5)" % took)
check(took >= 5, "the kernel had its grace period before the kill (took %.1f s)" % took)
check("ignoring SIGINT" in s["stdout"], "output before the kill is kept", s)
ok("SIGINT ignored: killed after %.1f s, message %r" % (took, err.get("message", "")[:120]))

r = a.execute("import os\n(os.getpid(), open('survives.txt').read())", timeout=4,
              http_timeout=60)
s = r["structuredContent"]
check(s["success"] is True, "the next call works on a new kernel", r)
v = value_of(r) or ""
check("'yes'" in v, "the working directory and its files remain", r)
check(str(pid0) not in v.split(",")[0], "it is a new kernel process", r)
r = a.execute("kept", timeout=4, http_timeout=60)
check(r["structuredContent"]["error"] is not None and
      r["structuredContent"]["error"]["type"] == "NameError",
      "variables are gone after the kill (as the answer said)", r)
ok("after the kill: new kernel, same directory, state lost")
EOF2
