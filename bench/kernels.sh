#!/bin/sh
# kernels.sh - each Jupyter kernel codeexecd can serve (issue 32), in one
# run: ipykernel (the environment's), IRkernel (ir), xeus-python (xpython)
# and octave_kernel (octave), whichever are installed. For each: a new
# session's first `1+1` with pool.warm 0 (the kernel's cold start to ready,
# plus one call), and with pool.warm 1 once the pool is ready (a pooled
# kernel's first call), the median of warm `1+1` calls through the daemon, and
# the kernel's PSS at idle (its process and descendants: octave_kernel's
# octave-cli, R's helpers), and, against the same kernelspec started by
# jupyter_client in the same run (tcp, no sandbox; its warm `1+1` calls
# interleaved with the daemon's), the direct client's median and the
# daemon's ratio to it. Prints a table; README untouched.
#
# usage: bench/kernels.sh [CODEEXECD [CODEEXEC_WORKER]] (default: the
# build in this source tree), as bench/run.sh; CALLS (default 50) warm
# calls per kernel.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
daemon=${1:-$here/../supervisor/codeexecd}
worker=${2:-$here/../worker/codeexec-worker}
calls=${CALLS:-50}
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/cxd-kbench.XXXXXX")
DAEMON_PID=
cleanup() {
	[ -z "$DAEMON_PID" ] || { kill "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null || true; }
	[ -n "${CODEEXECD_BENCH_KEEP:-}" ] || rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
. "$here/../tests/system/kernel_user.sh"
kernel_user_setup "$TMPD" || { echo "no account $KERNEL_USER" >&2; exit 1; }

printf '%-10s %-24s %12s %12s %12s %10s %10s %8s\n' kernel language "cold+1 ms" "pooled 1st" \
	"warm ms" "PSS MB" "direct ms" "ratio"
for round in ${ROUNDS:-ipykernel:0 ipykernel:1 ir:0 ir:1 xpython:0 xpython:1 octave:0 octave:1}; do
	kernel=${round%:*}
	warm=${round#*:}
	[ $kernel = ipykernel ] || [ -r /usr/share/jupyter/kernels/$kernel/kernel.json ] || continue
	rm -rf "$TMPD/state" "$TMPD/run"
	mkdir -p "$TMPD/state" "$TMPD/run"
	extra="kernel: $kernel"
	[ $kernel = ipykernel ] && extra=
	cat >"$TMPD/codeexecd.yaml" <<EOF
$KERNEL_USER_LINE
name: k
type: pip
build_dir: $TMPD/env
python: /usr/bin/python3
system_site_packages: true
listen: "127.0.0.1:0"
state_dir: $TMPD/state
runtime_dir: $TMPD/run
session_hibernate_after: 0
checkpoint:
  interval_s: 0
pool:
  warm: $warm
$extra
EOF
	: >"$TMPD/daemon.log"
	"$daemon" -d -f "$TMPD/codeexecd.yaml" -W "$worker" >"$TMPD/daemon.log" 2>&1 &
	DAEMON_PID=$!
	port=
	while [ -z "$port" ]; do
		kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$TMPD/daemon.log" >&2; exit 1; }
		port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$TMPD/daemon.log" | head -n 1)
		[ -n "$port" ] || sleep 0.1
	done
	/usr/bin/python3 - "$port" "$kernel" "$calls" "$TMPD/daemon.log" "$here/../tests/system" "$warm" \
		"$TMPD/cold" <<'EOF'
import os, re, statistics, sys, time
port, kernel, calls, log, sysdir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
warm_pool, cold_file = sys.argv[6] == "1", sys.argv[7]
sys.path.insert(0, sysdir)
from mcp import Client
deadline = time.time() + 120
while warm_pool and "ready (" not in open(log).read():
    assert time.time() < deadline, "no kernel ready"
    time.sleep(0.05)
a = Client("http://127.0.0.1:%s/mcp" % port)
a.initialize()
t0 = time.monotonic()
r = a.execute("1+1", tool="execute_k_code")
cold = (time.monotonic() - t0) * 1000
assert r["structuredContent"]["success"], r
# The baseline, in the pooled round: the same kernelspec started by
# jupyter_client (tcp, no sandbox), its warm 1+1 interleaved with the daemon's.
direct = None
if warm_pool:
    sys.path.insert(0, os.path.dirname(sysdir.rstrip("/")) + "/../bench")
    from bench import DirectKernel
    os.chdir(os.path.dirname(log))  # octave_kernel leaves octave-workspace in its cwd
    direct = DirectKernel(os.path.dirname(log), kernel, "tcp",
                          "python3" if kernel == "ipykernel" else kernel)
    direct.start()
    direct.execute("1+1")
warm, jc = [], []
for _ in range(calls):
    t0 = time.monotonic()
    a.execute("1+1", tool="execute_k_code")
    warm.append((time.monotonic() - t0) * 1000)
    if direct:
        t0 = time.monotonic()
        direct.execute("1+1")
        jc.append((time.monotonic() - t0) * 1000)
if direct:
    direct.km.shutdown_kernel(now=True)
desc = [t for t in a.result("tools/list")["tools"] if t["name"] == "execute_k_code"][0]["description"]
lang = re.search(r"Language: (.*) \(Jupyter", desc)
pid = int(re.findall(r"kernel (\d+) ready", open(log).read())[-1])

def tree(p):
    out = [p]
    for t in os.listdir("/proc/%d/task" % p):
        try:
            out += [c for k in open("/proc/%d/task/%s/children" % (p, t)).read().split() for c in tree(int(k))]
        except OSError:
            pass
    return out

time.sleep(1)
pss = 0
for p in tree(pid):
    for line in open("/proc/%d/smaps_rollup" % p):
        if line.startswith("Pss:"):
            pss += int(line.split()[1])
if not warm_pool:
    open(cold_file, "w").write("%.1f" % cold)
    sys.exit(0)
print("%-10s %-24s %12s %12.1f %12.1f %10.1f %10.1f %8.2f" % (
      kernel, lang.group(1) if lang else "python (ipykernel)", open(cold_file).read(), cold,
      statistics.median(warm), pss / 1024, statistics.median(jc),
      statistics.median(warm) / statistics.median(jc)))
EOF
	kill "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null || true
	DAEMON_PID=
done
