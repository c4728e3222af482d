#!/bin/sh
# 521-start-failure: a kernel that cannot start says why, at once.
# kernel_network_mode seccomp refuses to start a kernel over an
# environment its identity could change; making the environment's directory
# (its bin) world-writable provokes that. A call must then fail within a few seconds
# (not after the 60 s wait for a kernel) with NoKernel naming the reason,
# /health must show the reason, and once the directory is restored the next
# call works and /health no longer shows it. Needs root (kernel_uid_range).
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: seccomp kernels run under uids from kernel_uid_range"
setup_tmp
worker_for_other_uids
chmod 711 "$TMPD" # kernels under other uids reach their session directories
PORT=$(free_port)
CFG_WARM=0
CFG_EXTRA='kernel_network_mode: seccomp
kernel_uid_range: "62500-62599"'
write_config
start_daemon
wait_ready

envdir=$TMPD/env/bin
mode=$(stat -c %a "$envdir")
chmod o+w "$envdir"

run_py "$URL" "$BASE" "$envdir" "$mode" <<'EOF2'
import json, os, sys, time, urllib.request
from mcp import Client, check, ok, text_of
from calls import sc

url, base, envdir, mode = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]


def health():
    with urllib.request.urlopen(base + "/health", timeout=5) as r:
        return json.loads(r.read())


a = Client(url)
a.initialize()
t0 = time.time()
r = a.execute("1 + 1", http_timeout=90)
took = time.time() - t0
err = sc(r).get("error") or {}
check(err.get("type") == "NoKernel", "a call without a startable kernel fails with NoKernel", r)
check("no kernel could be started" in err.get("message", "") and envdir in err["message"],
      "the error names the start failure and the directory it is about", r)
check(took < 10, "the failure arrives at once, not after the 60 s wait (%.1f s)" % took, r)
ok("NoKernel in %.1f s: %s" % (took, err["message"][:200]))

h = health()
check(envdir in h.get("kernel_start_failure", ""), "/health shows the reason", h)
ok("/health: %s" % h["kernel_start_failure"][:200])

os.chmod(envdir, int(mode, 8))
deadline = time.time() + 120
while True:
    r = a.execute("6 * 7", http_timeout=150)
    if sc(r).get("success"):
        break
    check(time.time() < deadline, "a call works again once the directory is restored", r)
    time.sleep(1)  # refills back off after repeated failures
check("kernel_start_failure" not in health(), "/health no longer shows a failure", health())
ok("restored: the next call works and /health is clear")
EOF2
