#!/bin/sh
# 104-codeexecctl.sh - codeexecctl against the real daemon: status,
# sessions and close over the control socket, exec through MCP, and the
# exit statuses codeexecctl(8) documents.
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
daemon=$top_builddir/supervisor/codeexecd
worker=$top_builddir/worker/codeexec-worker
ctl=$top_builddir/ctl/codeexecctl
python=/usr/bin/python3

if ! "$python" -c 'import ipykernel' 2>/dev/null; then
	echo "SKIP: $python cannot import ipykernel (apt-get install python3-ipykernel)"
	exit 77
fi
for f in "$daemon" "$worker" "$ctl"; do
	[ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }
done

tmp=$(mktemp -d) || exit 1
dpid=
cleanup()
{
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
conf=$tmp/codeexecd.yaml
# As root, kernels may not run as root: the daemon drops to codeexecd.
. "$(dirname "$0")/kernel_user.sh"
kernel_user_setup "$tmp" || { echo "FAIL: cannot create the account $KERNEL_USER"; exit 1; }
cat >"$conf" <<EOF
$KERNEL_USER_LINE
name: py
python: $python
system_site_packages: true
dependency_file: ""
build_dir: $tmp/env
state_dir: $tmp/state
runtime_dir: $tmp/run
listen: 127.0.0.1:$port
pool:
  warm: 1
EOF
"$daemon" -d -f "$conf" -W "$worker" >"$tmp/daemon.log" 2>&1 &
dpid=$!

fail=0
# expect STATUS PATTERN ARGS...: run codeexecctl, check its exit status and
# that its stdout and stderr together match the grep pattern.
expect()
{
	want=$1
	pattern=$2
	shift 2
	out=$("$ctl" "$@" 2>&1)
	rc=$?
	if [ "$rc" -ne "$want" ] || ! printf '%s\n' "$out" | grep -q -- "$pattern"; then
		echo "FAIL: codeexecctl $* exited $rc (expected $want), output:"
		printf '%s\n' "$out"
		fail=1
		return 1
	fi
	echo "ok: codeexecctl $*"
}

# Wait until the daemon serves (the environment is built on first start).
n=0
until "$ctl" -f "$conf" exec 'pass' >/dev/null 2>&1; do
	n=$((n + 1))
	if [ "$n" -gt 120 ] || ! kill -0 "$dpid" 2>/dev/null; then
		echo "FAIL: the daemon did not start:"
		cat "$tmp/daemon.log"
		exit 1
	fi
	sleep 0.5
done

# Usage errors: exit 2.
expect 2 usage
expect 2 "unknown command" -f "$conf" frobnicate
expect 2 "close SESSION" -f "$conf" close
expect 2 "" -f "$tmp/no-such.yaml" status
expect 2 "no-such.sock" -s "$tmp/no-such.sock" status

# exec: output, errors, standard input, an explicit URL without the config.
expect 0 "^42$" -f "$conf" exec 'print(6 * 7)'
expect 0 "^7$" -f "$conf" exec '3 + 4'
expect 1 "ValueError: boom" -f "$conf" exec 'raise ValueError("boom")'
out=$(printf 'import sys\nprint("out")\nprint("err", file=sys.stderr)\n' |
	"$ctl" -f "$conf" exec - 2>/dev/null)
[ "$out" = out ] || { echo "FAIL: exec - printed '$out' on stdout"; fail=1; }
expect 0 "^hello$" -f "$tmp/no-such.yaml" -u "http://127.0.0.1:$port" exec 'print("hello")'
expect 0 '"success":true' -j -f "$conf" exec 'x = 1'
closed=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
expect 2 "127.0.0.1" -u "http://127.0.0.1:$closed/mcp" exec 'pass'

# The control socket: in a directory only its owner may enter, and only
# for root (kernels share the daemon's user here, so that user is refused).
sock=$tmp/run/control/codeexecd.sock
mode=$(stat -c %a "$(dirname "$sock")" 2>/dev/null)
[ "$mode" = 700 ] || { echo "FAIL: $(dirname "$sock") has mode '$mode', expected 700"; fail=1; }
if [ "$(id -u)" != 0 ]; then
	expect 1 "not allowed" -f "$conf" status
	echo "ok: the rest needs root (the daemon's own user is a kernel's here)"
	exit "$fail"
fi

expect 0 "codeexecd .*(py), pid $dpid" -f "$conf" status
expect 0 '"status"' -j -f "$conf" status
expect 0 "no sessions" -f "$conf" sessions

# A session an agent holds open: initialize without ending it.
sid=$("$python" - "$port" <<'EOF'
import json, sys, urllib.request
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "104", "version": "1"}}}).encode()
req = urllib.request.Request("http://127.0.0.1:%s/mcp" % sys.argv[1], data=body,
                             headers={"Content-Type": "application/json",
                                      "Accept": "application/json, text/event-stream"})
with urllib.request.urlopen(req, timeout=30) as r:
    print(r.headers["Mcp-Session-Id"])
EOF
)
if [ -z "$sid" ]; then
	echo "FAIL: could not open a session"
	exit 1
fi
expect 0 "^$sid  " -s "$sock" sessions
expect 0 "\"id\": *\"$sid\"" -j -s "$sock" sessions
expect 0 "session $sid closed" -s "$sock" close "$sid"
expect 0 "no sessions" -s "$sock" sessions
expect 1 "session not found" -s "$sock" close "$sid"
expect 1 '"error"' -j -s "$sock" close "$sid"
exit "$fail"
