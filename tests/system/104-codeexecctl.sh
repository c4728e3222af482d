#!/bin/sh
# 104-codeexecctl.sh - codeexecctl against the real daemon: status,
# sessions and close over the control socket, exec through MCP, and the
# exit statuses codeexecctl(8) documents.

. "$(dirname "$0")/lib.sh"

CTL=$top_builddir/ctl/codeexecctl

require_py ipykernel
require_binaries
[ -x "$CTL" ] || fail "$CTL not built"
start_ready_daemon
conf=$TMPD/codeexecd.yaml

# expect STATUS PATTERN ARGS...: run codeexecctl, check its exit status and
# that its stdout and stderr together match the grep pattern.
expect() {
	want=$1
	pattern=$2
	shift 2
	out=$("$CTL" "$@" 2>&1) && rc=0 || rc=$?
	if [ "$rc" -ne "$want" ] || ! printf '%s\n' "$out" | grep -q -- "$pattern"; then
		check_failed "codeexecctl $* exited $rc (expected $want), output:"
		printf '%s\n' "$out"
		return 0
	fi
	ok "codeexecctl $*"
}

# Usage errors: exit 2.
expect 2 usage
expect 2 "unknown command" -f "$conf" frobnicate
expect 2 "close SESSION" -f "$conf" close
expect 2 "" -f "$TMPD/no-such.yaml" status
expect 2 "no-such.sock" -s "$TMPD/no-such.sock" status

# exec: output, errors, standard input, an explicit URL without the config.
expect 0 "^42$" -f "$conf" exec 'print(6 * 7)'
expect 0 "^7$" -f "$conf" exec '3 + 4'
expect 1 "ValueError: boom" -f "$conf" exec 'raise ValueError("boom")'
out=$(printf 'import sys\nprint("out")\nprint("err", file=sys.stderr)\n' |
	"$CTL" -f "$conf" exec - 2>/dev/null) || :
[ "$out" = out ] || check_failed "exec - printed '$out' on stdout"
expect 0 "^hello$" -f "$TMPD/no-such.yaml" -u "$BASE" exec 'print("hello")'
expect 0 '"success":true' -j -f "$conf" exec 'x = 1'
expect 2 "127.0.0.1" -u "http://127.0.0.1:$(free_port)/mcp" exec 'pass'

# The control socket: in a directory only its owner may enter, and only
# for root (kernels share the daemon's user here, so that user is refused).
sock=$TMPD/run/control/codeexecd.sock
mode=$(stat -c %a "$(dirname "$sock")" 2>/dev/null) || mode=
[ "$mode" = 700 ] || check_failed "$(dirname "$sock") has mode '$mode', expected 700"
if [ "$(id -u)" != 0 ]; then
	expect 1 "not allowed" -f "$conf" status
	ok "the rest needs root (the daemon's own user is a kernel's here)"
	exit "$FAILED"
fi

expect 0 "codeexecd .*(py), pid $DAEMON_PID" -f "$conf" status
expect 0 '"status"' -j -f "$conf" status
expect 0 "no sessions" -f "$conf" sessions

# A session an agent holds open: initialize without ending it.
SESSION=
mcp_post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"104","version":"1"}}}' >/dev/null
sid=$(header Mcp-Session-Id)
[ -n "$sid" ] || fail "could not open a session"
expect 0 "^$sid  " -s "$sock" sessions
expect 0 "\"id\": *\"$sid\"" -j -s "$sock" sessions
expect 0 "session $sid closed" -s "$sock" close "$sid"
expect 0 "no sessions" -s "$sock" sessions
expect 1 "session not found" -s "$sock" close "$sid"
expect 1 '"error"' -j -s "$sock" close "$sid"
exit "$FAILED"
