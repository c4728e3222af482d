#!/bin/sh
# 404-cancel: cancellation means stop. notifications/cancelled
# for a running tools/call (plain JSON and SSE) and a client that hangs up
# on its call (plain and SSE) interrupt the kernel: a file the code would
# write later never appears, nothing is answered for the cancelled request,
# the session's next call runs at once, and its variables survive. Another
# session cannot cancel a request by its id. A cancel sent before the kernel
# has begun the code still stops it.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
start_ready_daemon

run_py "$URL" <<'EOF2'
import sys, time
from mcp import Client, check, ok, text_of, value_of
from calls import Stream, call_msg, notify, hang_up_after, sc, wait_busy, wait_file

a = Client(sys.argv[1])
a.initialize()
r = a.execute("import os\nkeep = 5")
check(sc(r).get("success") is True, "setup runs", r)

SLEEP = 3
EXEC_GRACE = 5 # worker/execute.h: interrupt, then kill after this
def late_code(name):
    return ("import time\nopen(%r, 'w').close()\nprint('started', flush=True)\n"
            "time.sleep(%d)\nopen(%r, 'w').write('too late')\nprint('wrote it')"
            % ("started-" + name, SLEEP, name))

def after(name, started, how):
    # The kernel is free again at once: the next call does not wait out the sleep.
    t0 = time.time()
    r = a.execute("keep", http_timeout=30)
    took = time.time() - t0
    check(sc(r).get("success") is True and value_of(r) == "5",
          "%s: the next call works and sees earlier variables" % how, r)
    check(took < 2, "%s: the next call ran at once (%.2f s), the kernel was interrupted"
          % (how, took))
    # Whether the file appears is checked at the end, past the moment the
    # last cancelled code would have written it.
    pending.append((name, started, how))

pending = []

# 1. notifications/cancelled for a plain JSON call.
st = Stream(a, call_msg(a, "execute_py_code", {"code": late_code("late1.txt")}, 41))
st.start()
started = time.time()
wait_file(a, "started-late1.txt")
n = notify(a, "notifications/cancelled", {"requestId": 41, "reason": "test 404"})
check(n.status in (200, 202, 204), "notifications/cancelled accepted (HTTP %d)" % n.status)
check(st.wait(10), "the cancelled call's HTTP exchange ends", st.evidence())
check(st.error is None, "the cancelled call's HTTP exchange ends cleanly", st.evidence())
check(not (st.json and st.json.get("id") == 41) and '"result"' not in st.raw and st.responses() == [],
      "nothing is answered for the cancelled request", st.evidence())
check(time.time() - started < SLEEP, "the cancelled call ended before the code would have",
      st.evidence())
after("late1.txt", started, "cancelled (JSON)")
ok("notifications/cancelled on a JSON call: HTTP %s, no answer, kernel interrupted" % st.status)

# 2. notifications/cancelled for an SSE (progress token) call; a string request id.
st = Stream(a, call_msg(a, "execute_py_code", {"code": late_code("late2.txt")}, "req-42",
                        token="p42"))
st.start()
started = time.time()
wait_file(a, "started-late2.txt")
n = notify(a, "notifications/cancelled", {"requestId": "req-42"})
check(n.status in (200, 202, 204), "notifications/cancelled accepted (HTTP %d)" % n.status)
check(st.wait(10) and st.error is None, "the cancelled SSE call ends", st.evidence())
check(st.responses() == [] and '"result"' not in st.raw,
      "no response event for the cancelled SSE call", st.evidence())
after("late2.txt", started, "cancelled (SSE)")
ok("notifications/cancelled on an SSE call: %d progress events, no response, kernel interrupted"
   % len(st.progress()))

# Another session cannot cancel a's request by its id.
b = Client(sys.argv[1])
b.initialize()
st = Stream(a, call_msg(a, "execute_py_code", {"code": "time.sleep(1.5)\nprint('not cancelled')"}, 45))
st.start()
wait_busy(a)
n = notify(b, "notifications/cancelled", {"requestId": 45})
check(n.status in (200, 202, 204), "b's notifications/cancelled accepted quietly")
check(st.wait(10) and st.json and st.json.get("id") == 45 and
      st.json["result"]["structuredContent"]["stdout"] == "not cancelled\n",
      "a's call with the same id ran to the end", st.evidence())
ok("a notifications/cancelled from another session does not touch a's request")

# A notifications/cancelled for an id that is not running changes nothing.
n = notify(a, "notifications/cancelled", {"requestId": 999})
check(n.status in (200, 202, 204), "cancelling an unknown request is accepted quietly")
r = a.execute("keep * 2")
check(value_of(r) == "10", "and the session is unaffected", r)

# 3. The client hangs up on a plain call.
started = time.time()
got = hang_up_after(a, call_msg(a, "execute_py_code", {"code": late_code("late3.txt")}, 43), 1.0)
check(b'"result"' not in got, "no answer before the hang-up", got.decode(errors="replace"))
after("late3.txt", started, "hung up (JSON)")
ok("client hung up on a JSON call: kernel interrupted")

# 4. The client hangs up on an SSE call.
started = time.time()
got = hang_up_after(a, call_msg(a, "execute_py_code", {"code": late_code("late4.txt")}, 44,
                                token="p44"), 1.5)
check(b"text/event-stream" in got and b"notifications/progress" in got,
      "the SSE stream had begun before the hang-up", got.decode(errors="replace"))
after("late4.txt", started, "hung up (SSE)")
ok("client hung up on an SSE call: kernel interrupted")

# 5. Cancelled the moment the session is busy: the execution was sent, but
# the kernel may not have begun it, and ipykernel ignores an interrupt
# until it has. The cancel still stops the code, without a restart.
st = Stream(a, call_msg(a, "execute_py_code", {"code": late_code("late5.txt")}, 45))
st.start()
started = time.time()
wait_busy(a)
n = notify(a, "notifications/cancelled", {"requestId": 45, "reason": "test 404, at once"})
check(n.status in (200, 202, 204), "notifications/cancelled accepted (HTTP %d)" % n.status)
check(st.wait(10) and st.responses() == [], "nothing is answered for the cancelled request",
      st.evidence())
after("late5.txt", started, "cancelled before it ran")
ok("notifications/cancelled at once: the code stopped, the kernel kept its variables")

# 6. The interrupt lands in ipykernel's own handler, after it began the
# request and before the code: ipykernel catches the KeyboardInterrupt and
# goes idle without a reply. A hook that slows that moment down makes it
# certain. The execution still ends at once, without a restart.
r = a.execute("k = get_ipython().kernel\n"
              "_orig_input = k._publish_execute_input\n"
              "def _slow_input(code, *rest):\n"
              "    if 'SLOW_' + 'INPUT' in code:\n"
              "        time.sleep(%d)\n"
              "    return _orig_input(code, *rest)\n"
              "import time\n"
              "k._publish_execute_input = _slow_input" % SLEEP)
check(sc(r).get("success") is True, "the slowing hook is set", r)
st = Stream(a, call_msg(a, "execute_py_code", {"code": "# SLOW_INPUT\n" + late_code("late6.txt")}, 46))
st.start()
started = time.time()
wait_busy(a)
n = notify(a, "notifications/cancelled", {"requestId": 46, "reason": "test 404, in the handler"})
check(n.status in (200, 202, 204), "notifications/cancelled accepted (HTTP %d)" % n.status)
check(st.wait(10) and st.responses() == [], "nothing is answered for the cancelled request",
      st.evidence())
after("late6.txt", started, "cancelled in ipykernel's handler")
r = a.execute("os.path.exists('started-late6.txt')")
check(value_of(r) == "False", "the code after the handler never began", r)
t0 = time.time()
r = a.execute("# SLOW_INPUT\n1", timeout=1)
check(sc(r).get("error", {}).get("type") == "TimeoutError",
      "a timeout that lands in the handler is a TimeoutError", r)
r = a.execute("keep", http_timeout=30)
check(value_of(r) == "5" and time.time() - t0 < EXEC_GRACE,
      "... and the kernel kept its variables, without waiting out the grace", r)
ok("an interrupt ipykernel caught in its own handler ends the execution, no restart")

# Past the moment the last cancelled code would have written its file:
# none of the files appeared.
time.sleep(max(0, max(st for _, st, _ in pending) + SLEEP + 1.0 - time.time()))
for name, _, how in pending:
    r = a.execute("os.path.exists(%r)" % name)
    check(value_of(r) == "False", "%s: the file the code would write later never appears" % how, r)
r = a.execute("sorted(f for f in os.listdir('.') if f.startswith('late'))")
check(value_of(r) == "[]", "no late*.txt in the working directory", r)
ok("no cancelled call wrote its file (%s)" % ", ".join(how for _, _, how in pending))
EOF2
