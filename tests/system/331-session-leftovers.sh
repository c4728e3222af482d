#!/bin/sh
# 331-session-leftovers: nothing of a session outlives it.
# A kernel leaves a Popen(start_new_session=True) child and a double-forked,
# detached one. Both are gone once the session's DELETE returns (bounded
# wait), both of a second session are gone when the daemon has stopped, and
# those of a session whose worker was killed with SIGKILL are gone too, with
# the kernel's control group removed. (An isolated kernel is pid 1 of its own
# pid namespace: the test finds the processes by their command lines.) Rounds: inherit with kernels of the
# daemon's uid (the control group alone ends them), and inherit, isolated and
# seccomp with kernel_uid_range (the group, then the uid's sweep).
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: control groups and kernel_uid_range"
setup_tmp
worker_for_other_uids
chmod 711 "$TMPD" # kernels under other uids reach their session directories
"$WORKER" -p >"$TMPD/layout.json" || true
grep -q '"freezer"' "$TMPD/layout.json" ||
	skip "no cgroup v2 and no v1 freezer hierarchy usable here: $(cat "$TMPD/layout.json")"
PORT=$(free_port)

for round in inherit-shared inherit isolated seccomp; do
	mode=${round%-shared}
	if [ $mode = isolated ] && ! unshare -U -n -m true 2>/dev/null; then
		echo "# isolated: this host refuses user namespaces; not run"
		continue
	fi
	range='kernel_uid_range: "63340-63349"'
	[ $round = inherit-shared ] && range=
	CFG_WARM=1
	CFG_EXTRA="kernel_network_mode: $mode
$range"
	write_config
	start_daemon
	wait_ready
	run_py "$URL" "$BASE" "$round" "$TMPD/left.pids" <<'EOF2'
import os, signal, sys
from mcp import check, ok
from probes_tenant import (LEAVE_PROCS, session, run, wait_idle, wait_gone, host_pids,
                           worker_of)

url, base, rnd, pidfile = sys.argv[1:5]


def leave(c):
    out = run(c, LEAVE_PROCS)["stdout"].split()
    pids = host_pids(out[out.index("LEFT") + 1])
    check(len(pids) == 2, "%s: the two left processes run" % rnd, pids)
    return pids


# DELETE ends them.
wait_idle(base)
a = session(url)
pids = leave(a)
a.delete()
left = wait_gone(pids)
check(not left, "%s: the session's detached processes end with its DELETE" % rnd, left)
ok("%s: %s gone after DELETE" % (rnd, pids))

# A worker killed outright: its kernel's group is killed and removed.
wait_idle(base)
c = session(url)
pids = leave(c)
worker = worker_of(run(c, "import os; print(os.getcwd())")["stdout"].strip())
check(worker is not None, "%s: the session's worker is found" % rnd)
groups = []
for line in open("/proc/%d/cgroup" % pids[1]):
    _h, ctls, path = line.rstrip("\n").split(":", 2)
    if "freezer" in ctls.split(",") or (ctls == "" and path != "/"):
        root = "/sys/fs/cgroup/freezer" if ctls else "/sys/fs/cgroup"
        groups.append(root + path)
check(any(os.path.isdir(g) for g in groups), "%s: the kernel's group exists" % rnd, groups)
os.kill(worker, signal.SIGKILL)
left = wait_gone(pids)
check(not left, "%s: a SIGKILLed worker's detached processes end" % rnd, left)
import time
end = time.time() + 20
while any(os.path.isdir(g) for g in groups) and time.time() < end:
    time.sleep(0.1)
check(not any(os.path.isdir(g) for g in groups),
      "%s: a SIGKILLed worker's control group is removed" % rnd, groups)
ok("%s: worker killed: %s gone, group %s removed" % (rnd, pids, groups))

# The daemon's stop ends them (checked by the shell).
wait_idle(base)
b = session(url)
open(pidfile, "w").write(" ".join(str(p) for p in leave(b)))
EOF2
	stop_daemon
	run_py "$TMPD/left.pids" "$round" <<'EOF2'
import sys
from mcp import check, ok
from probes_tenant import wait_gone

pids = [int(p) for p in open(sys.argv[1]).read().split()]
left = wait_gone(pids, timeout=5)
check(not left, "%s: a session's detached processes end with the daemon" % sys.argv[2], left)
ok("%s: %s gone after the daemon stopped" % (sys.argv[2], pids))
EOF2
done
