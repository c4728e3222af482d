#!/bin/sh
# 496-egress-daemon: with egress.allow set, the parent starts the egress
# proxy (issue 36) as the daemon's user, with no capability and its seccomp
# filter; each worker it starts gets its socket runtime_dir/egress/NAME.sock
# (served with the configured rules: an allowed name from egress.hosts_file
# answers, a denied one is refused naming the rule), removed when the worker
# is reaped; a killed proxy is started again with the open workers' sockets;
# the daemon's stop ends it. Without egress.allow there is no proxy, nor
# with it for inherit kernels, which do not use it (no socket either).
# The host talks to the sockets here; 499 reaches them from kernels.
. "$(dirname "$0")/lib.sh"

require_binaries
require_cmd curl
[ "$(id -u)" = 0 ] || skip "needs root: the daemon runs as its own user"
setup_tmp
PORT=$(free_port)
UPORT=$(free_port)
printf '127.0.0.2 web.test\n' >"$TMPD/hosts"
chmod 644 "$TMPD/hosts"
"$PY" "$sysdir/egress_upstream.py" serve 127.0.0.2 "$UPORT" &
UP=$!
cleanup_extra() {
	kill $UP 2>/dev/null
}

proxy_pid() {
	pgrep -f -- "^[^ ]*codeexecd --egress-proxy $TMPD/run/egress" | head -1
}

# No egress.allow: no proxy, no directory.
write_config
start_daemon
wait_ready
[ -z "$(proxy_pid)" ] || fail "a proxy runs without egress.allow"
[ ! -e "$TMPD/run/egress" ] || fail "runtime_dir/egress made without egress.allow"
stop_daemon TERM
ok "no egress.allow: no proxy"

# egress.allow with kernels that do not use the proxy (inherit): no proxy,
# and no worker gets a socket another mode's kernel could connect to.
CFG_EXTRA="egress:
  allow: [web.test, 127.0.0.2/32]
  hosts_file: $TMPD/hosts"
write_config
start_daemon
wait_ready
curl -s -X POST "$URL" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	-d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	>/dev/null
sleep 1
[ -z "$(proxy_pid)" ] || fail "a proxy runs for inherit kernels"
[ -z "$(ls "$TMPD"/run/egress/*.sock 2>/dev/null)" ] || fail "inherit workers got proxy sockets"
grep -q "egress: egress.allow applies to isolated kernels only; with kernel_network_mode inherit no proxy runs" \
	"$TMPD/daemon.log" || fail "no warning that egress.allow does not apply to inherit kernels"
stop_daemon TERM
ok "egress.allow with inherit kernels: no proxy, no socket, a warning"

CFG_EXTRA="kernel_network_mode: isolated
egress:
  allow: [web.test, 127.0.0.2/32]
  deny: [bad.web.test]
  hosts_file: $TMPD/hosts"
write_config
start_daemon
wait_ready
pid=$(proxy_pid)
[ -n "$pid" ] || fail "no egress proxy runs"
grep -q '^Seccomp:[[:space:]]*2' /proc/$pid/status || fail "the proxy has no seccomp filter"
grep -q '^CapEff:[[:space:]]*0000000000000000' /proc/$pid/status || fail "the proxy has capabilities"
[ "$(stat -c %u /proc/$pid)" != 0 ] || fail "the proxy runs as root"
ok "the parent starts the proxy: not root, no capability, its seccomp filter"

wait_for 20 "a warm worker's proxy socket" sh -c "ls $TMPD/run/egress/*.sock >/dev/null 2>&1"
SOCK=$(ls "$TMPD"/run/egress/*.sock | head -1)
"$PY" - "$SOCK" "$UPORT" <<'PYEOF' || fail "through the worker's socket"
import socket, sys
def ask(url):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall(f"GET {url} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    out = b""
    while (d := s.recv(65536)):
        out += d
    return out
port = sys.argv[2]
out = ask(f"http://web.test:{port}/")
assert out.startswith(b"HTTP/1.0 200") and out.endswith(b"upstream ok\n"), out
out = ask(f"http://bad.web.test:{port}/")
assert out.startswith(b"HTTP/1.1 403") and b"deny bad.web.test" in out, out
PYEOF
ok "a worker's socket serves the configured rules"

kill -KILL "$pid"
restarted() {
	p=$(proxy_pid)
	[ -n "$p" ] && [ "$p" != "$pid" ]
}
wait_for 20 "the proxy to be started again" restarted
wait_for 10 "the socket again" test -S "$SOCK"
grep -q "egress: the proxy .*starting it again" "$TMPD/daemon.log" || fail "no log of the restart"
ok "a killed proxy is started again with the open workers' sockets"

# A worker that dies is reaped, and its socket goes with it.
pid=$(proxy_pid)
for w in $(worker_pids); do
	[ "$w" = "$pid" ] || kill -KILL "$w"
done
wait_for 20 "the dead worker's socket to go" sh -c "[ ! -e '$SOCK' ]"
ok "a reaped worker's socket is removed"

pid=$(proxy_pid)
stop_daemon TERM
[ ! -d /proc/$pid ] || fail "the proxy outlived the daemon"
ok "the daemon's stop ends the proxy"
