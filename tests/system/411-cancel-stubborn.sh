#!/bin/sh
# 411-cancel-stubborn: cancellation means stop also
# for code that ignores SIGINT. A timeout escalates to killing the kernel
# after a 5 s grace period (401); a notifications/cancelled must do the
# same instead of leaving the loop spinning until the call's own timeout.
# And since the cancelled request gets no answer, the session's next call
# must say the kernel was restarted (kernel_restarted, a note in stderr)
# when the kill lost its variables.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
start_ready_daemon

run_py "$URL" <<'EOF2'
import sys, time
from mcp import Client, check, ok, text_of, value_of
from calls import Stream, call_msg, notify, sc, proc_alive, wait_file

a = Client(sys.argv[1])
a.initialize()
kpid = int(value_of(a.execute("import os, signal\nv = 1\nos.getpid()")))
TIMEOUT, GRACE = 12, 5
code = ("signal.signal(signal.SIGINT, signal.SIG_IGN)\nopen('spinning', 'w').close()\n"
        "print('spinning', flush=True)\n"
        "while True:\n    pass")
st = Stream(a, call_msg(a, "execute_py_code", {"code": code, "timeout": TIMEOUT}, 90)).start()
wait_file(a, "spinning")
t0 = time.time()
n = notify(a, "notifications/cancelled", {"requestId": 90})
check(n.status in (200, 202, 204), "notifications/cancelled accepted")

problems = []
ended = st.wait(GRACE + 3)
if not ended:
    problems.append("the cancelled exchange was still open %d s after the cancel" % (GRACE + 3))
killed_at = None
while time.time() - t0 < TIMEOUT + GRACE + 5:
    if not proc_alive(kpid):
        killed_at = time.time() - t0
        break
    time.sleep(0.1)
check(killed_at is not None, "the SIGINT-ignoring kernel %d ends at all" % kpid)
if killed_at > GRACE + 3:
    problems.append("the kernel ignoring SIGINT was killed %.1f s after the cancel, not after "
                    "the %d s grace (the call's own timeout was %d s)" % (killed_at, GRACE, TIMEOUT))
st.wait(15)
check(st.responses() == [] and not (st.json and "result" in st.json),
      "nothing answered for the cancelled request", st.evidence())

r = a.execute("v", timeout=30, http_timeout=60)
s = sc(r)
check((s.get("error") or {}).get("type") == "NameError", "the kill lost the variables", r)
if s.get("kernel_restarted") is not True or "restarted" not in s.get("stderr", ""):
    problems.append("the next call does not say the kernel was restarted (kernel_restarted %r, "
                    "stderr %r) although its variables are gone"
                    % (s.get("kernel_restarted"), s.get("stderr")))
check(value_of(a.execute("6 * 7")) == "42", "the session works again")
check(not problems, "cancelling code that ignores SIGINT:\n  " + "\n  ".join(problems))
ok("cancel of a SIGINT-ignoring loop: killed %.1f s after the cancel; the next call says "
   "the kernel was restarted" % killed_at)
EOF2
