#!/bin/sh
# 333-nested-ns: kernels make no namespaces of their own.
# From inside the kernel, each in a forked child: unshare of a user, network
# and mount namespace, clone3 with CLONE_NEWUSER, a user namespace then a
# tmpfs mount in it, and chroot. inherit (kernel_uid_range) is the baseline:
# an unprivileged uid may make a user namespace and mount there. isolated,
# with and without kernel_uid_range, caps user.max_user_namespaces in the
# kernel's outer namespace, so every one of them fails; seccomp's filter
# denies them. inherit with Landlock (kernel_landlock: auto; the other
# rounds run without it) may make the user namespace, but mount nothing in
# it. Outcomes per round in probes_tenant.EXPECT["nested"].
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: kernels run under uids from kernel_uid_range"
unshare -U -n -m true 2>/dev/null || skip "this host refuses user namespaces"
setup_tmp
worker_for_other_uids
chmod 711 "$TMPD" # kernels under other uids reach their session directories
PORT=$(free_port)

for round in inherit inherit-landlock isolated isolated-shared seccomp; do
	mode=${round%-*}
	range='kernel_uid_range: "63370-63379"'
	[ $round = isolated-shared ] && range=
	landlock=off
	[ $round = inherit-landlock ] && landlock=auto
	CFG_WARM=1
	CFG_EXTRA="kernel_network_mode: $mode
kernel_landlock: $landlock
$range"
	write_config
	start_daemon
	wait_ready
	run_py "$URL" "$round" <<'EOF2'
import sys
from mcp import check, ok
from probes_tenant import NESTED_PROBES, EXPECT, session, probe, compare

url, rnd = sys.argv[1:3]
got = probe(session(url), NESTED_PROBES, in_child=True)
for n, g in sorted(got.items()):
    print("# %-16s %-18s %s" % (rnd, n, g))
problems = compare(got, EXPECT["nested"][rnd])
check(not problems, "%s: every nested-namespace probe gives its expected outcome" % rnd,
      problems)
ok("%s: %d probes as expected" % (rnd, len(got)))
EOF2
	stop_daemon
done
