#!/bin/sh
# 419-start-throttle: kernels start at most pool.max_starting at a time:
# a burst of sessions must not start every kernel at
# once. With max_starting 1 the daemon's log (-v) never shows a second
# worker spawned while another's kernel is still starting: neither while the
# warm pool fills, nor when three sessions, with no warm kernel, call at
# once, and all three calls are answered; the log says how many calls
# wait for a kernel, and each one's place in the queue.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_WARM=3
CFG_EXTRA=
write_config
config_set pool.max_starting 1
DAEMON_ARGS=-v
start_daemon
wait_ready
three_idle() { [ "$(health_status)" = 200 ] && grep -q '"idle_kernels":3' "$TMPD/health.body"; }
wait_for 60 "three warm kernels" three_idle

# Ask for kernels faster than they start: the warm pool is taken, then
# three sessions call at once with none left.
run_py "$URL" <<'EOF2'
import sys, threading
from mcp import Client, check, ok, value_of
clients = []
for i in range(3):
    c = Client(sys.argv[1])
    c.initialize()
    check(value_of(c.execute("1+1")) == "2", "warm session %d runs" % i)
    clients.append(c)
results = {}
def first_call(i):
    c = Client(sys.argv[1])
    c.initialize()
    results[i] = c.execute("6*7", http_timeout=120)
threads = [threading.Thread(target=first_call, args=(i,)) for i in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()
for i in range(3):
    check(value_of(results[i]) == "42", "burst session %d runs" % i, results[i])
ok("3 warm sessions, then 3 at once with no warm kernel: all answered")
EOF2

# Spawned ("worker N started for") and ready ("worker N: kernel K ready")
# in log order: never two starting at once.
"$PY" - "$TMPD/daemon.log" <<'EOF2' || fail "the log shows kernels starting together"
import re, sys
starting, most, spawned = set(), 0, 0
for line in open(sys.argv[1]):
    m = re.search(r"worker (\d+) started for ", line)
    if m:
        starting.add(m.group(1))
        spawned += 1
        most = max(most, len(starting))
        continue
    m = re.search(r"worker (\d+): kernel \d+ ready", line) or \
        re.search(r"worker (\d+) (exited|was killed|could not start)", line)
    if m:
        starting.discard(m.group(1))
if spawned < 6:
    sys.exit("FAIL: only %d workers spawned; the test expects at least 6" % spawned)
if most != 1:
    sys.exit("FAIL: %d kernels were starting at once (max_starting: 1)" % most)
print("ok - %d workers spawned, never more than one starting at a time" % spawned)
EOF2
grep -q "a call waits for a kernel: position [1-3] of [1-3], [01] kernels starting" "$TMPD/daemon.log" ||
	fail "the log does not say how many calls wait for a kernel"
ok "the log says how many calls wait: $(grep -m 1 "a call waits for a kernel" "$TMPD/daemon.log" | cut -d' ' -f4-)"
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
