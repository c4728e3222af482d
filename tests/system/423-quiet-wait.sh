#!/bin/sh
# 423-quiet-wait: an HTTP thread that waits for a silent call sleeps until
# something happens. Over a 6-s `time.sleep` the front's threads wake about
# as often as over 6 idle seconds (its main loop's second, civetweb's own
# timers), not 24 times more, as a thread that woke every 0.25 s to look at
# its client did; with a progress token, they wake for the heartbeat. And a
# client that hangs up meanwhile is still noticed at once: the main loop
# watches its socket (the call is cancelled, well before the sleep ends).
. "$(dirname "$0")/lib.sh"

require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_EXTRA='progress_interval_s: 1'
write_config
start_daemon
wait_ready
FRONT=$(front_pid)
[ -n "$FRONT" ] || fail "no front process under $DAEMON_PID"

run_py "$URL" "$FRONT" <<'EOF2'
import os, sys, threading, time
from mcp import Client, check, ok
from calls import Stream, call_msg, hang_up_after, session_state, wait_for

front = int(sys.argv[2])
c = Client(sys.argv[1])
c.initialize()
c.execute("import time")


def wakes():
    n = 0
    for t in os.listdir("/proc/%d/task" % front):
        for line in open("/proc/%d/task/%s/status" % (front, t)):
            if line.startswith("voluntary_ctxt_switches:"):
                n += int(line.split()[1])
    return n


def during(fn):
    before = wakes()
    t0 = time.time()
    fn()
    took = time.time() - t0
    return wakes() - before, took


idle, _ = during(lambda: time.sleep(6))
call, took = during(lambda: c.execute("time.sleep(6)"))
check(took >= 6, "the call took its 6 s (%.1f s)" % took)
check(call <= idle + 10, "a waiting thread sleeps: the front woke %d times over the call, "
      "%d over 6 idle seconds" % (call, idle))
ok("a silent 6-s call: the front woke %d times (idle 6 s: %d)" % (call, idle))

st = Stream(c, call_msg(c, "execute_py_code", {"code": "time.sleep(4)"}, 9, token="q")).run()
check(st.error is None and len(st.progress()) >= 2,
      "with a progress token the heartbeat still comes every second", st.evidence())
ok("with a progress token: %d heartbeats over 4 s" % len(st.progress()))

# A client that goes while its call sleeps: the call is cancelled at once.
t0 = time.time()
hang_up_after(c, call_msg(c, "execute_py_code", {"code": "time.sleep(30)"}, 10), 1)
idle_again = wait_for(lambda: session_state(c) == "idle", 20, 0.05)
check(idle_again and time.time() - t0 < 10,
      "the session of a client that hung up is idle again after %.1f s" % (time.time() - t0))
ok("a client that hung up is noticed: its session is idle again after %.1f s"
   % (time.time() - t0))
EOF2
