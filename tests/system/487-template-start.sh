#!/bin/sh
# 487-template-start: pool.start (issue 33). What this build has: the key,
# exec its default, template accepted but not built, so the daemon says so
# and starts kernels by exec. Checked against a real daemon and kernels:
# a value other than exec or template is refused by -n with its line; with
# template the log says kernels start by exec and a kernel's results,
# /proc/self/status (CapEff, CapBnd, NoNewPrivs, Seccomp) and descriptors
# (/proc/self/fd) are those of a kernel under pool.start: exec.
# When the template is built, the same comparison is the one its kernels
# must pass.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries

# -n: a bad value names the key's line and the choices.
setup_tmp
PORT=$(free_port)
write_config
config_set pool.start zygote
"$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/out" 2>"$TMPD/err" && rc=0 || rc=$?
[ "$rc" = 1 ] || fail "codeexecd -n accepted pool.start: zygote (exit $rc)"
grep -q "start: expected one of exec, template" "$TMPD/err" || {
	cat "$TMPD/err" >&2
	fail "no message naming pool.start's choices"
}
ok "pool.start: zygote refused: $(head -1 "$TMPD/err")"
rm -rf "$TMPD"
TMPD=

# probe MODE: start a daemon with pool.start MODE and write what a kernel
# sees of itself to $TMPD/../probe.MODE.
probe() {
	setup_tmp
	PORT=$(free_port)
	write_config
	config_set pool.start "$1"
	start_daemon
	wait_ready
	run_py "$URL" "$OUT/probe.$1" <<'EOF' || fail "pool.start $1: calls failed"
import sys
from mcp import Client, check, ok, text_of

url, out = sys.argv[1], sys.argv[2]
a = Client(url)
a.initialize()
r = a.execute("print(sum(range(10)))")
check(r.get("isError") is not True and "45" in text_of(r), "a call's result", r)
code = r'''
import os
want = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp")
for line in open("/proc/self/status"):
    k = line.split(":")[0]
    if k in want:
        print(line.strip())
# Names of this kernel's own objects differ between daemons, and the order
# in which its threads open them from run to run: 0-2 exactly, then how
# many of each kind.
kinds = {}
for fd in sorted(int(n) for n in os.listdir("/proc/self/fd")):
    try:
        t = os.readlink("/proc/self/fd/%d" % fd)
    except OSError:
        continue
    kind = t.split(":")[0] if ":" in t else ("file" if t.startswith("/") else t)
    if fd <= 2:
        print("fd", fd, kind)
    else:
        kinds[kind] = kinds.get(kind, 0) + 1
for k in sorted(kinds):
    print("fds", k, kinds[k])
'''
r = a.execute(code)
check(r.get("isError") is not True, "the probe runs", r)
open(out, "w").write(r["structuredContent"]["stdout"])
ok("probed a kernel")
EOF
	cp "$TMPD/daemon.log" "$OUT/log.$1"
	stop_daemon
	[ "$DAEMON_RC" = 0 ] || fail "pool.start $1: the daemon exited $DAEMON_RC"
	left=$(leftovers)
	[ -z "$left" ] || fail "pool.start $1: processes left: $left"
	# The last one is cleanup's (EXIT) to remove.
	[ "$1" = template ] || rm -rf "$TMPD"
}

OUT=$(mktemp -d)
cleanup_extra() {
	rm -rf "$OUT"
}
probe exec
probe template

if grep -q "pool.start: template is not built" "$OUT/log.exec"; then
	fail "pool.start: exec logs the template's note"
fi
grep -q "pool.start: template is not built in this version: kernels start by exec" \
	"$OUT/log.template" || fail "pool.start: template: the log does not say kernels start by exec"
ok "pool.start: template: the log says kernels start by exec"

grep -q "^Seccomp:" "$OUT/probe.exec" || fail "the exec kernel's probe is empty"
if ! cmp -s "$OUT/probe.exec" "$OUT/probe.template"; then
	diff "$OUT/probe.exec" "$OUT/probe.template" >&2
	fail "a kernel under pool.start: template differs from one under exec"
fi
ok "same status (capabilities, no_new_privs, seccomp) and descriptors: $(grep '^fds' "$OUT/probe.exec" | tr '\n' ' ')"
exit "$FAILED"
