#!/bin/sh
# 485-rescue-modes: the checkpoint before a kill in every network mode. A
# kernel that ignores SIGINT past its timeout is sent SIGUSR2 (in isolated
# mode through its waiter, pid 1's parent outside the namespace), saves its
# namespace and exits: the message says so and the next call restores what
# the code had done; one that also blocks SIGUSR2 is killed after
# checkpoint.max_seconds and 1 s, and the message says what is lost.
# (461 has the inherit-mode round and its details.)
. "$(dirname "$0")/lib.sh"

require_py ipykernel
require_py dill
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: isolated kernels run under kernel_uid_range"
unshare -U -n true 2>/dev/null || skip "this host refuses user and network namespaces"
setup_tmp
PORT=$(free_port)
CFG_CHECKPOINT_INTERVAL=3600
CFG_CHECKPOINT='  max_seconds: 5'
worker_for_other_uids
chmod 711 "$TMPD"
for mode in isolated seccomp; do
	CFG_EXTRA="kernel_network_mode: $mode
kernel_uid_range: \"63530-63533\""
	write_config
	start_daemon
	wait_ready
	run_py "$URL" "$mode" <<'EOF2'
import sys
from mcp import Client, check, ok, value_of
from calls import sc, tool

url, mode = sys.argv[1], sys.argv[2]
a = Client(url)
a.initialize()
a.execute("v = [1, 2, 3]")
cp = sc(tool(a, "py_checkpoint", {}))
check(cp.get("names") == ["v"], "a first checkpoint", cp)
def stubborn(extra):
    r = a.execute("import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n" + extra
                  + "time.sleep(120)", timeout=2, http_timeout=60)
    e = sc(r).get("error") or {}
    check(e.get("type") == "TimeoutError", "%s: the stubborn kernel times out" % mode, r)
    return e.get("message", "")
m = stubborn("v.append(4)\n")
check(m == "Execution exceeded 2 seconds and the kernel did not stop when interrupted, so it "
      "checkpointed its namespace and was restarted: the next call restores that checkpoint",
      "%s: it checkpointed before the kill" % mode, m)
r = a.execute("v")
check(value_of(r) == "[1, 2, 3, 4]" and (sc(r).get("restored") or {}).get("checkpoint") not in
      (None, cp["checkpoint"]), "%s: the next call has what the code did" % mode, r)
m = stubborn("signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})\nv.append(5)\n")
check(m.endswith("so it was killed and restarted without a new checkpoint: the next call "
                 "restores the latest one, and what changed after it is lost"),
      "%s: a kernel that cannot checkpoint is killed, and the message says so" % mode, m)
r = a.execute("v")
check(value_of(r) == "[1, 2, 3, 4]", "%s: only what came after the last checkpoint is lost"
      % mode, r)
ok("%s: the checkpoint before a kill" % mode)
EOF2
	[ $? -eq 0 ] || fail "the $mode round failed"
	stop_daemon
	rm -rf "$TMPD/state"
done
