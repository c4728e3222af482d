#!/bin/sh
# 410-cancel-restart: cancellation means stop
# also for the call that follows a kernel crash, while the worker is
# still starting the fresh kernel. A notifications/cancelled, a client
# hang-up and py_close_session sent in that window must stop the code: a
# file it would write later never appears, and the cancelled exchange ends
# promptly. (worker/main.c on_interrupt drops an INTERRUPT that arrives
# before the kernel is ready and the code sent, so the code runs anyway.)
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
start_ready_daemon
mkdir "$TMPD/marks"

run_py "$URL" "$TMPD/marks" <<'EOF2'
import os, sys, time
from mcp import Client, check, ok, text_of, value_of
from calls import Stream, call_msg, notify, hang_up_after, tool, sc, wait_for, wait_busy

url, marks = sys.argv[1], sys.argv[2]
SLEEP = 3

def crashed_session():
    c = Client(url)
    c.initialize()
    r = c.execute("import os; os.kill(os.getpid(), 9)", http_timeout=60)
    check((sc(r).get("error") or {}).get("type") == "KernelDied", "setup: the kernel died", r)
    return c

def late_code(name):
    # Absolute path: the session's own directory may be gone by then.
    return ("import time\ntime.sleep(%d)\nopen(%r, 'w').write('too late')"
            % (SLEEP, os.path.join(marks, name)))

pending = []
def never_written(name, started, how):
    # Checked at the end, past the moment the code would have written it.
    pending.append((name, started, how))

failures = []
def case(how, fn):
    try:
        fn()
        ok("%s during the kernel restart: the exchange ended as it should" % how)
    except Exception as e:
        failures.append(how)
        print("not ok - %s: %s" % (how, e), file=sys.stderr)

def cancelled():
    c = crashed_session()
    st = Stream(c, call_msg(c, "execute_py_code", {"code": late_code("cancelled")}, 61)).start()
    never_written("cancelled", time.time(), "notifications/cancelled")
    wait_busy(c)
    n = notify(c, "notifications/cancelled", {"requestId": 61})
    check(n.status in (200, 202, 204), "notifications/cancelled accepted")
    check(st.wait(2.5) and st.error is None,
          "the cancelled exchange ends promptly (not after the code)", st.evidence())
    check(st.responses() == [] and not (st.json and "result" in st.json),
          "nothing answered for the cancelled request", st.evidence())

def hung_up():
    c = crashed_session()
    never_written("hung-up", time.time(), "client hang-up")
    hang_up_after(c, call_msg(c, "execute_py_code", {"code": late_code("hung-up")}, 62), 0.3)

def closed():
    c = crashed_session()
    st = Stream(c, call_msg(c, "execute_py_code", {"code": late_code("closed")}, 63)).start()
    never_written("closed", time.time(), "close_session")
    wait_busy(c)
    other = Client(url)
    other.initialize()
    r = tool(other, "py_close_session", {"session_id": c.session_id})
    check(sc(r).get("closed") is True, "close_session answers closed", r)
    check(st.wait(2.5), "the running call of the closed session ends promptly", st.evidence())
    check(not (st.json and st.json.get("result", {}).get("structuredContent", {}).get("success")),
          "the call of the closed session does not succeed", st.evidence())

case("notifications/cancelled", cancelled)
case("client hang-up", hung_up)
case("close_session", closed)
# A restart takes about a second or two; the code sleeps SLEEP after it.
if pending:
    time.sleep(max(0, max(st for _, st, _ in pending) + 2.5 + SLEEP + 1.5 - time.time()))
for name, _, how in pending:
    if os.path.exists(os.path.join(marks, name)):
        print("not ok - %s during the restart: the code ran on and wrote %s" % (how, name),
              file=sys.stderr)
        failures.append(how)
    else:
        ok("%s during the kernel restart: the code never wrote %s" % (how, name))
check(not failures, "cancellation during a kernel restart: %s did not stop the code"
      % ", ".join(sorted(set(failures))))
EOF2
