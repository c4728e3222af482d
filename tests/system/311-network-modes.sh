#!/bin/sh
# 311-network-modes: the escape probes of probes.py through the real daemon
# over MCP, with kernel_network_mode inherit (baseline: every probe reaches
# its target, else it does not count; its kernels share the daemon's uid,
# so they reach even its control socket),
# isolated and seccomp, kernels under per-kernel uids from kernel_uid_range;
# isolated and seccomp once more with the daemon dropped to user nobody. The probed kernel and its sibling
# are two MCP sessions. Fails when codeexecd -n refuses these keys; skips
# when not root (per-kernel uids need it; seccomp needs an environment the
# kernel's uid cannot change, which the root-owned test build gives).
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: kernels run under uids from kernel_uid_range"
unshare -U -n true 2>/dev/null || skip "this host refuses user and network namespaces"
setup_tmp
worker_for_other_uids
chmod 711 "$TMPD" # kernels under other uids reach their session directories
PORT=$(free_port)
CFG_WARM=2
CFG_EXTRA='kernel_network_mode: isolated
kernel_uid_range: "62100-62199"'
write_config "$TMPD/check.yaml"
"$CODEEXECD" -n -f "$TMPD/check.yaml" >"$TMPD/check.out" 2>&1 ||
	fail "codeexecd -n refuses kernel_network_mode/kernel_uid_range: $(head -c 300 "$TMPD/check.out")"

results=$TMPD/results.json
echo '{}' >"$results"
# Then isolated and seccomp again with the daemon as nobody (user: nobody),
# its workers holding only the capabilities it keeps for kernel_uid_range.
for round in inherit isolated seccomp isolated:nobody seccomp:nobody; do
	mode=${round%:*}
	# The baseline shares one uid, so that every sibling probe can succeed.
	range='kernel_uid_range: "62100-62199"'
	[ $mode = inherit ] && range=
	user=
	[ "$round" != "$mode" ] && user="user: ${round#*:}"
	CFG_EXTRA="kernel_network_mode: $mode
$range
$user"
	write_config
	start_daemon
	wait_ready
	run_py "$URL" "$round" "$results" "$TMPD/run/control/codeexecd.sock" <<'EOF2'
import json, sys
from mcp import Client, check, ok
from probes import Targets, run_probes, outcome
from probes_tenant import host_pid_of_cwd

url, mode, path, control = sys.argv[1:5]
a, b = Client(url), Client(url)
a.initialize()
b.initialize()
# As the host sees it: an isolated kernel's own pid is its namespace's.
r = b.execute("import os; print(os.getcwd())")["structuredContent"]
sib = host_pid_of_cwd(r["stdout"].strip())


def execute(code):
    s = a.execute(code, timeout=20)["structuredContent"]
    return s.get("stdout"), s.get("error")


res = run_probes(execute, Targets(), sib, control=control)
for name, got in sorted(res.items()):
    print("# %-8s %-26s %s" % (mode, name, got))
allres = json.load(open(path))
allres[mode] = res
json.dump(allres, open(path, "w"))
ok("%s: probes ran" % mode)
EOF2
	stop_daemon
done

run_py "$results" <<'EOF2'
import json, sys
from mcp import check, ok
from probes import compare, EXPECT

res = json.load(open(sys.argv[1]))
base = res["inherit"]
for rnd in ("isolated", "seccomp", "isolated:nobody", "seccomp:nobody"):
    mode = rnd.split(":")[0]
    problems, notes = compare(res[rnd], mode, base)
    for n in notes:
        print("# " + n)
    check(not problems, "%s: every probe gives its expected outcome" % rnd, problems)
    ok("%s: %d probes as expected (%d not counted)" % (rnd, len(EXPECT[mode]) - len(notes), len(notes)))
EOF2
