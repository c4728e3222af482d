#!/bin/sh
# 334-proc-hidepid: an isolated kernel sees no other kernel's process.
# Kernel A of one session looks for kernel B
# of another (its pid as the host sees it, found by B's working directory):
# with isolated, with and without kernel_uid_range, A is pid 1 of a pid
# namespace of its own with its own /proc, so B's /proc entry (cmdline
# included) is ENOENT and kill(B, 0) is ESRCH, and /proc lists only A's own
# processes. inherit and seccomp, which have no mount namespace, are the
# baseline: there B's cmdline is readable (the table in probes_tenant.py).
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: kernels run under uids from kernel_uid_range"
unshare -U -n -m -p -f true 2>/dev/null || skip "this host refuses user and pid namespaces"
setup_tmp
worker_for_other_uids
chmod 711 "$TMPD" # kernels under other uids reach their session directories
PORT=$(free_port)

for round in inherit isolated isolated-shared seccomp; do
	mode=${round%-shared}
	range='kernel_uid_range: "63380-63389"'
	[ $round = isolated-shared ] && range=
	CFG_WARM=2
	CFG_EXTRA="kernel_network_mode: $mode
$range"
	write_config
	start_daemon
	wait_ready
	run_py "$URL" "$round" <<'EOF2'
import os, sys
from mcp import check, ok
from probes_tenant import EXPECT, session, run, probe, compare, host_pid_of_cwd

url, rnd = sys.argv[1:3]
a, b = session(url), session(url)
bcwd = run(b, "import os; print(os.getcwd())")["stdout"].strip()
sib = host_pid_of_cwd(bcwd)
run(a, "SIB = %d" % sib)
got = probe(a, [
    ("sibling_cmdline", "lambda: open('/proc/%d/cmdline' % SIB, 'rb').read()"),
    ("sibling_kill", "lambda: os.kill(SIB, 0)"),
    ("own_pid", "lambda: 'one' if os.getpid() == 1 else 'host'"),
    ("proc_lists_only_own", "lambda: str(all(int(p) < 100 for p in os.listdir('/proc') "
     "if p.isdigit()))"),
])
for n, g in sorted(got.items()):
    print("# %-16s %-20s %s" % (rnd, n, g))
problems = compare(got, EXPECT["proc"][rnd])
check(not problems, "%s: /proc shows what the table says" % rnd, problems)
ok("%s: %d probes as expected (sibling %d)" % (rnd, len(got), sib))
EOF2
	stop_daemon
done
