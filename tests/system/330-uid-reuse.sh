#!/bin/sh
# 330-uid-reuse: a kernel_uid_range uid is handed out again only clean.
# In every mode (inherit, isolated, seccomp) a session
# writes /tmp, /var/tmp and /dev/shm files (0600), a tree it made
# unreadable and a System V shared memory segment, and ends; uids rotate through the range (the next two
# sessions get the other two uids, not the lowest free one); the session
# that gets the first uid again finds none of those files. With isolated
# the files never reach the host (private tmpfs, IPC namespace); with
# inherit and seccomp the sweep removes them from the host once the
# session ends.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: kernels run under uids from kernel_uid_range"
setup_tmp
worker_for_other_uids
chmod 711 "$TMPD" # kernels under other uids reach their session directories
PORT=$(free_port)

for mode in inherit isolated seccomp; do
	if [ $mode = isolated ] && ! unshare -U -n -m true 2>/dev/null; then
		echo "# isolated: this host refuses user namespaces; not run"
		continue
	fi
	CFG_WARM=1
	# Landlock off: this tree's /tmp holds the daemon's directories, so
	# Landlock would leave the kernel no file directly in /tmp to sweep.
	CFG_EXTRA="kernel_network_mode: $mode
kernel_uid_range: \"63330-63332\"
kernel_landlock: off"
	write_config
	start_daemon
	wait_ready
	run_py "$URL" "$BASE" "$mode" <<'EOF2'
import os, sys, time
from mcp import check, ok
from probes_tenant import (SHARED_DIRS, session, run, probe, wait_idle, leave_files_code,
                           read_files_code, outcomes, compare)

url, base, mode = sys.argv[1:4]
token = "cxd330-%d-%s" % (os.getpid(), mode)
wait_idle(base)
a = session(url)
ua = int(run(a, leave_files_code(token))["stdout"].split()[-1])
on_host = [d for d in SHARED_DIRS if os.path.exists(os.path.join(d, token))]
if mode == "isolated":
    check(on_host == [], "%s: the files stay in the kernel's private tmpfs" % mode, on_host)
else:
    check(len(on_host) == len(SHARED_DIRS), "%s: the files are on the host" % mode, on_host)
a.delete()
# The sweep runs once the worker is gone: the host loses the files soon.
end = time.time() + 30
while any(os.path.lexists(os.path.join(d, n)) for d in SHARED_DIRS for n in (token, token + ".d")):
    check(time.time() < end, "%s: the sweep removes uid %d's files from the host" % (mode, ua),
          [os.path.join(d, token) for d in SHARED_DIRS])
    time.sleep(0.1)
ok("%s: uid %d's files are gone from the host" % (mode, ua))

uids = [ua]
want = {"read_tmp": "ENOENT", "read_var_tmp": "ENOENT", "read_dev_shm": "ENOENT",
        "read_tmp_tree": "ENOENT", "sysv_shm": "ENOENT"}
for i in range(3):
    wait_idle(base)
    c = session(url)
    u = int(run(c, "import os; print(os.getuid())")["stdout"])
    uids.append(u)
    if u == ua:
        run(c, __import__("probes_tenant").TENANT_PRELUDE)
        got = outcomes(run(c, read_files_code(token))["stdout"])
        for n, g in sorted(got.items()):
            print("# %-8s %-16s %s" % (mode, n, g))
        problems = compare(got, want)
        check(not problems, "%s: the next tenant of uid %d reads nothing of the last" % (mode, u),
              problems)
        ok("%s: uid %d handed out again clean" % (mode, u))
    c.delete()
print("# %s: uids in order %s" % (mode, uids))
check(uids[1] != ua and uids[2] not in (ua, uids[1]) and uids[3] == ua,
      "%s: uids rotate through the range (a released uid is not the next one out)" % mode, uids)
ok("%s: uids rotate: %s" % (mode, uids))
EOF2
	stop_daemon
	grep -q "sweep failed\|sweep:" "$TMPD/daemon.log" && fail "$mode: a sweep failed: $(grep sweep "$TMPD/daemon.log")"
	ok "$mode: no sweep failed"
done
