#!/bin/sh
# 421-kernel-queue: callers waiting for a kernel queue with a clear position.
# With pool.warm 0 and max_starting 1, six sessions call
# one after another, each with a progressToken, before their kernels have
# started: each is told "waiting for a kernel: position P of N" in
# notifications/progress while it waits, its position only ever going
# down, to 1; kernels go to the sessions in the order they arrived (the
# daemon's log); /metrics shows the queue's length; every call succeeds.
# A seventh call, sent fourth and cancelled as soon as it waits, leaves
# the queue: it is not answered and gets no kernel.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_WARM=0
# Each kernel takes a second longer to be ready (code_prefix runs in its
# warm-up): calls join faster than kernels come, whatever the machine.
CFG_EXTRA='progress_interval_s: 1
code_prefix: "import time; time.sleep(1)"'
write_config
config_set pool.max_starting 1
DAEMON_ARGS=-v
start_daemon
wait_ready

run_py "$URL" "$BASE" >"$TMPD/order" <<'EOF2'
import re, sys, time, urllib.request
from mcp import Client, check, ok, value_of
from calls import Stream, call_msg, notify

N = 6
PLACE = re.compile(r"^waiting for a kernel: position (\d+) of (\d+)$")

def queue_length():
    with urllib.request.urlopen(sys.argv[2] + "/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("codeexecd_pool_queue_length "):
                return int(float(line.split()[1]))
    return None

def places(st):
    """The (position, length) of each queue message, in the order sent."""
    out = []
    for _, e in st.progress():
        m = PLACE.match(e.get("params", {}).get("message", ""))
        if m:
            out.append((int(m.group(1)), int(m.group(2))))
    return out

def joined(st):
    """Wait until the call is in the queue (its first position message)."""
    end = time.time() + 30
    while not places(st) and not st.done.is_set() and time.time() < end:
        time.sleep(0.05)
    check(places(st) or st.done.is_set(), "no word within 30 s", st.evidence())

clients = []
for i in range(N + 1):
    c = Client(sys.argv[1])
    c.initialize()
    clients.append(c)
gone = clients.pop(3)
# Each call joins the queue (its first position message says so) before
# the next is sent: the order they arrived in is known.
streams, most, cancelled = [], 0, None
for i, c in enumerate(clients):
    if i == 3:
        cancelled = Stream(gone, call_msg(gone, "execute_py_code", {"code": "'never'"}, "gone",
                                          token="gone"), timeout=180).start()
        joined(cancelled)
        # At once: the three calls before it still hold the kernels' way.
        n = notify(gone, "notifications/cancelled", {"requestId": "gone", "reason": "421"})
        check(n.status in (200, 202, 204), "notifications/cancelled accepted (HTTP %d)"
              % n.status)
    st = Stream(c, call_msg(c, "execute_py_code", {"code": "%d * 7" % i}, 100 + i,
                            token="q%d" % i), timeout=180).start()
    joined(st)
    streams.append(st)
    most = max(most, queue_length() or 0)
check(cancelled.wait(20) and cancelled.error is None, "the cancelled call's exchange ends",
      cancelled.evidence())
check(cancelled.responses() == [], "nothing is answered for the cancelled call",
      cancelled.evidence())
ok("a call cancelled at position %d of the queue left it, unanswered"
   % places(cancelled)[0][0])
while not all(st.done.is_set() for st in streams):
    most = max(most, queue_length() or 0)
    time.sleep(0.2)
for i, st in enumerate(streams):
    resp = st.responses()
    check(st.error is None and st.status == 200 and len(resp) == 1,
          "call %d answered" % i, st.evidence())
    r = resp[0][1].get("result", {})
    check(value_of(r) == str(i * 7), "call %d ran its code" % i, r)
ok("%d calls with a kernel each, none warm: all answered" % N)

waited = 0
for i, st in enumerate(streams):
    p = places(st)
    if not p:
        continue  # a kernel was ready at once: it never waited
    waited += 1
    pos = [x[0] for x in p]
    check(all(a >= b for a, b in zip(pos, pos[1:])),
          "call %d: its position never goes up" % i, p)
    check(all(1 <= x <= n for x, n in p), "call %d: each position within the queue" % i, p)
    check(pos[-1] == 1, "call %d: told it was next before it got a kernel" % i, p)
    check(pos[0] <= i + 1, "call %d: nobody who came after it was ahead" % i, p)
check(waited >= N - 1, "at least %d calls waited for a kernel (%d did)" % (N - 1, waited))
last = places(streams[-1])
check(len(set(x[0] for x in last)) >= 3,
      "the last call saw its position go down at least twice", last)
ok("positions told in progress only went down, to 1; the last call's: %s"
   % " ".join(str(x[0]) for x in last))
check(most >= 2, "/metrics showed a queue of at least 2 (most seen: %d)" % most)
ok("/metrics codeexecd_pool_queue_length reached %d" % most)
for c in clients:
    print("session " + c.session_id[:8])
EOF2
grep '^ok - ' "$TMPD/order"

# Kernels were handed out in the order the calls arrived.
grep '^session ' "$TMPD/order" | cut -d' ' -f2 >"$TMPD/arrived"
sed -n 's/.*session \([0-9a-f]\{8\}\) of .* takes kernel pid.*/\1/p' "$LOG" >"$TMPD/served"
cmp -s "$TMPD/arrived" "$TMPD/served" || {
	echo "arrived:"; cat "$TMPD/arrived"; echo "served:"; cat "$TMPD/served"
	fail "kernels were not handed out in the order the calls arrived"
}
ok "kernels were handed out in the order the calls arrived"

grep -q "a call waits for a kernel: position [2-6] of [2-6], [01] kernels starting" "$LOG" ||
	fail "the log does not say a call's place in the queue when it joined"
grep -q "a call waiting [0-9.]* s for a kernel: position [1-5] of [1-6]" "$LOG" ||
	fail "the log does not say how a waiting call's place changed"
grep -q "a call waited [0-9.]* s for a kernel, from position [2-6]" "$LOG" ||
	fail "the log does not say how long a call waited"
ok "the log tells the queue: $(grep -m 1 "a call waited" "$LOG" | sed 's/.*\(a call waited\)/\1/')"
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
