#!/bin/sh
# 473-kernel-r-escape: the escape probes of probes.py (as 311 runs them
# for ipykernel) from an R kernel: each probe runs in a python3 that R
# starts with system2(), a child of the R kernel in its sandbox (same uid,
# namespaces and cgroup), with kernel_network_mode
# inherit (the baseline, one shared uid) and isolated with kernel_uid_range
# (476 probes Landlock with R kernels).
# Every probe must give the outcome probes.EXPECT gives for ipykernel.
# Skips when not root or without user and network namespaces.
. "$(dirname "$0")/lib.sh"
# Long (several daemons, or every mode): CI's first stage only.
slow_suite

require_cmd curl
require_binaries
require_irkernel
[ "$(id -u)" = 0 ] || skip "needs root: kernels run under uids from kernel_uid_range"
unshare -U -n true 2>/dev/null || skip "this host refuses user and network namespaces"
setup_tmp
worker_for_other_uids
chmod 711 "$TMPD"
PORT=$(free_port)
results=$TMPD/results.json
echo '{}' >"$results"
for mode in inherit isolated; do
	range='kernel_uid_range: "62600-62699"'
	[ $mode = inherit ] && range=
	CFG_WARM=2
	CFG_EXTRA="kernel: ir
kernel_network_mode: $mode
$range"
	write_config
	sed -i 's/^name: py$/name: r/' "$TMPD/codeexecd.yaml"
	start_daemon
	wait_ready
	run_py "$URL" "$mode" "$results" "$TMPD/run/control/codeexecd.sock" <<'EOF2'
import base64, json, sys
from mcp import Client, check, ok
from probes import Targets, run_probes
from probes_tenant import host_pid_of_cwd

url, mode, path, control = sys.argv[1:5]
a, b = Client(url), Client(url)
a.initialize()
b.initialize()
r = b.execute("cat(getwd(), '\\n')", tool="execute_r_code")["structuredContent"]
sib = host_pid_of_cwd(r["stdout"].strip())
prelude = []


def execute(code):
    # The prelude once, then each probe with it in a fresh python3 under R.
    if not prelude:
        prelude.append(code)
        return "", None
    src = base64.b64encode((prelude[0] + "\n" + code).encode()).decode()
    rcode = ("out <- system2('/usr/bin/python3', c('-c', shQuote(\"import base64; "
             "exec(base64.b64decode('%s').decode())\")), stdout = TRUE, stderr = TRUE)\n"
             "cat(out, sep = '\\n')" % src)
    s = a.execute(rcode, timeout=20, tool="execute_r_code")["structuredContent"]
    return s.get("stdout"), s.get("error")


res = run_probes(execute, Targets(), sib, control=control)
for name, got in sorted(res.items()):
    print("# %-8s %-26s %s" % (mode, name, got))
allres = json.load(open(path))
allres[mode] = res
json.dump(allres, open(path, "w"))
ok("%s: probes ran from R" % mode)
EOF2
	stop_daemon
done

run_py "$results" <<'EOF2'
import json, sys
from mcp import check, ok
from probes import compare, EXPECT

res = json.load(open(sys.argv[1]))
problems, notes = compare(res["isolated"], "isolated", res["inherit"])
for n in notes:
    print("# " + n)
check(not problems, "isolated R: every probe gives ipykernel's expected outcome", problems)
ok("isolated R: %d probes as expected (%d not counted)" % (len(EXPECT["isolated"]) - len(notes), len(notes)))
EOF2
