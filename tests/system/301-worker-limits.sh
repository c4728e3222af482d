#!/bin/sh
# 301-worker-limits: per-kernel cgroup and rlimit limits, straight against
# codeex-worker (no daemon), with the layout `codeexec-worker -p` finds:
# a memory hog gives MemoryLimitExceeded while another kernel answers 1+1
# within a second, the next call gets a fresh kernel, a fork bomb stops at
# the pids limit with EAGAIN, cpu 0.5 holds a busy loop near half a core,
# nofile and fsize_mb are hard rlimits, and the worker stays outside the
# kernel's cgroup. Needs root and the memory, pids and cpu controllers.
. "$(dirname "$0")/lib.sh"

require_py ipykernel
[ -x "$WORKER" ] || fail "$WORKER not built"
[ "$(id -u)" = 0 ] || skip "needs root to create cgroups"
setup_tmp
"$WORKER" -p >"$TMPD/layout.json" ||
	skip "not every cgroup controller is usable here: $(cat "$TMPD/layout.json")"

run_py "$WORKER" "$TMPD" <<'PYEOF'
import json, os, sys, tempfile, threading, time
from probes import FORK_BOMB, Worker, fork_bomb_result
from mcp import check, ok

exe, tmp = sys.argv[1], sys.argv[2]
layout = json.load(open(os.path.join(tmp, "layout.json")))
layout.pop("unusable")
tag = "t301-%d" % os.getpid()


def kernel(name, limits):
    w = Worker(exe, {"limits": limits, "cgroup": dict(layout, name=name)},
               cwd=tempfile.mkdtemp(dir=tmp))
    w.ready()
    return w


other = kernel(tag + "-other", {})
w = kernel(tag, {"memory_mb": 256, "pids": 64, "cpu": 0.5, "nofile": 200, "fsize_mb": 5})
procs = set()
for c in ("memory", "pids", "cpu"):
    procs |= set(open(os.path.join(layout[c]["parent"], tag, "cgroup.procs")).read().split())
check(str(w.kpid) in procs and str(w.p.pid) not in procs,
      "the kernel is in its cgroup, the worker is not", sorted(procs))
ok("kernel in its cgroup, worker outside")

lat = []
def ping():
    time.sleep(0.5)
    for i in range(5):
        t0 = time.time()
        r = other.execute(100 + i, "1+1")
        lat.append(time.time() - t0)
        check(r.get("success"), "the other kernel answers", r)
        time.sleep(0.3)
th = threading.Thread(target=ping)
th.start()
r = w.execute(1, "x = []\nwhile True:\n    x.append(bytearray(16 << 20))", timeout=60)
th.join()
check((r.get("error") or {}).get("type") == "MemoryLimitExceeded",
      "a memory hog gives MemoryLimitExceeded", r)
check(lat and max(lat) < 1.0, "another kernel's 1+1 answers within a second meanwhile", lat)
ok("memory hog: MemoryLimitExceeded (%s); 1+1 elsewhere took at most %.3f s"
   % (r["error"]["message"], max(lat)))
r = w.execute(2, "1+1")
check(r.get("success") and r.get("kernel_restarted"), "the next call runs in a fresh kernel", r)
ok("the next call runs in a fresh kernel")

r = w.execute(3, FORK_BOMB)
n, err = fork_bomb_result(r.get("stdout"))
check(n < 64 and err == "EAGAIN", "a fork bomb stops below pids 64 with EAGAIN", r)
ok("fork bomb stopped after %s children with %s" % (n, err))

r = w.execute(4, "import time\nt0 = time.time(); c0 = time.process_time()\n"
                 "while time.time() - t0 < 3: pass\n"
                 "print(round((time.process_time() - c0) / (time.time() - t0), 2))")
share = float(r.get("stdout", "9"))
check(share < 0.65, "cpu 0.5 holds a busy loop near half a core", r)
ok("busy loop got %.2f of a core under cpu 0.5" % share)

r = w.execute(5, "import resource\nprint(resource.getrlimit(resource.RLIMIT_NOFILE),"
                 " resource.getrlimit(resource.RLIMIT_FSIZE))\n"
                 "open('big', 'wb').write(b'x' * (6 << 20))")
check(r.get("stdout", "").strip() == "(200, 200) (5242880, 5242880)" and
      (r.get("error") or {}).get("type") == "OSError" and "File too large" in r["error"]["message"],
      "nofile 200 and fsize_mb 5 are hard limits", r)
ok("RLIMIT_NOFILE 200 and RLIMIT_FSIZE 5 MiB, a 6 MiB write fails with EFBIG")
w.close()
other.close()
check(not os.path.exists(os.path.join(layout["pids"]["parent"], tag)),
      "the worker removes the kernel's cgroup when it exits")
ok("cgroup removed at exit")
PYEOF
