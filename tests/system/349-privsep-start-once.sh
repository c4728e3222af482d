#!/bin/sh
# 349-privsep-start-once: a worker takes its START once, from whoever wrote
# first on its socket, and refuses every later one. The privilege-separated
# design (doc/README.privsep) rests on this: the privileged parent writes
# START (uid, directories, cgroup, limits, network mode) before it hands
# the socket to the unprivileged front, so a compromised front that sends
# its own START (another command, another directory) must be refused,
# whether the first kernel is still starting or ready. Straight against
# codeexec-worker, no daemon, no root.
. "$(dirname "$0")/lib.sh"

require_py ipykernel
[ -x "$WORKER" ] || fail "$WORKER not built"
setup_tmp

run_py "$WORKER" "$TMPD" <<'PYEOF'
import os, sys, time
from probes import Worker, START
from mcp import check, ok

exe, tmp = sys.argv[1], sys.argv[2]
marker = os.path.join(tmp, "front-start-ran")
evil = {"argv": ["/bin/sh", "-c", "touch " + marker], "env": {"PATH": "/usr/bin:/bin"},
        "cwd": tmp, "runtime_dir": os.path.join(tmp, "evil-rt")}


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def refused(w, when):
    w.send(START, 0, evil)
    end = time.time() + 60
    while w.recv(max(0.1, end - time.time()))[0] is not None:
        pass            # READY of the first kernel, maybe: read on until EOF
    rc = w.p.wait(30)
    check(rc != 0, "%s: the worker accepted a second START (exit %s)" % (when, rc))
    check(any("second START" in (m or "") for m in w.logs),
          "%s: no protocol error logged: %s" % (when, w.logs))
    check(not os.path.exists(marker), "%s: the second START's command ran" % when)
    check(not os.path.exists(evil["runtime_dir"]),
          "%s: the second START's runtime_dir was made" % when)
    if w.kpid:
        end = time.time() + 20
        while alive(w.kpid) and time.time() < end:
            time.sleep(0.1)
        check(not alive(w.kpid), "%s: the first kernel outlived its worker" % when)
    ok("%s: second START refused (exit %d), nothing of it ran" % (when, rc))


w = Worker(exe, {})
w.ready()
refused(w, "kernel ready")
w = Worker(exe, {})       # the second START follows the first at once
refused(w, "kernel starting")
PYEOF
