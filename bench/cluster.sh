#!/bin/sh
# cluster.sh - what HAProxy costs in front of codeexecd nodes, in one run:
# the latency of a warm call through contrib/haproxy/cluster.cfg against
# the same call made directly (a ratio), and the throughput of SESSIONS
# concurrent sessions against three nodes behind HAProxy against one node
# (a ratio). On a machine of few cores the three nodes share its CPUs:
# the ratio then says what routing costs, not what more machines give.
#
# usage: bench/cluster.sh [CODEEXECD CODEEXEC_WORKER] [-- cluster.py options]
#   e.g. bench/cluster.sh supervisor/codeexecd worker/codeexec-worker -- --sessions 64
# Needs haproxy (Debian's 2.6) and Debian's /usr/bin/python3 with
# python3-ipykernel. Prints the results; bench/README.md records them.

set -eu

here=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
daemon=${CODEEXECD:-$here/../build/supervisor/codeexecd}
worker=${CODEEXEC_WORKER:-$here/../build/worker/codeexec-worker}
if [ $# -gt 0 ] && [ "$1" != -- ]; then
	daemon=$1
	worker=$2
	shift 2
fi
[ "${1:-}" = -- ] && shift
die() {
	echo "bench: $*" >&2
	exit 1
}
[ -x "$daemon" ] || die "no codeexecd at $daemon"
[ -x "$worker" ] || die "no codeexec-worker at $worker"
command -v haproxy >/dev/null || die "no haproxy (apt-get install haproxy)"
daemon=$(cd "$(dirname "$daemon")" && pwd)/$(basename "$daemon")
worker=$(cd "$(dirname "$worker")" && pwd)/$(basename "$worker")

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/cxc.XXXXXX")
pids=
cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	set +e
	for p in $pids; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $pids; do
		wait "$p" 2>/dev/null
	done
	[ $rc -ne 0 ] && tail -n 40 "$TMPD"/*.log >&2
	rm -rf "$TMPD"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

. "$here/../tests/system/kernel_user.sh"
kernel_user_setup "$TMPD" || die "no account $KERNEL_USER, and useradd cannot make it"
free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port_h=$(free_port)
for n in a b c; do
	p=$(free_port)
	eval "port_$n=$p"
	mkdir -p "$TMPD/$n/state" "$TMPD/$n/run"
	cat >"$TMPD/$n.yaml" <<CFG
$KERNEL_USER_LINE
name: py
type: pip
dependency_file: ""
auto_build: true
build_dir: $TMPD/env
python: /usr/bin/python3
system_site_packages: true
listen: "127.0.0.1:$p"
state_dir: $TMPD/$n/state
runtime_dir: $TMPD/$n/run
node_name: $n
pool:
  warm: 4
  max_sessions: 80
  max_sessions_per_identity: 80
CFG
done
"$daemon" --warm -f "$TMPD/a.yaml" >"$TMPD/warm.log" 2>&1 || die "codeexecd --warm"
for n in a b c; do
	"$daemon" -d -f "$TMPD/$n.yaml" -W "$worker" >"$TMPD/$n.log" 2>&1 &
	pids="$pids $!"
done
sed -e "s|bind 127.0.0.1:8000|bind 127.0.0.1:$port_h|" \
    -e "s|127.0.0.1:8001|127.0.0.1:$port_a|" -e "s|127.0.0.1:8002|127.0.0.1:$port_b|" \
    -e "s|127.0.0.1:8003|127.0.0.1:$port_c|" \
    -e "s|/etc/haproxy/codeexecd-nodes.map|$here/../contrib/haproxy/nodes.map|" \
    -e "s|log stdout format raw local0||" -e "s|option httplog||" \
    "$here/../contrib/haproxy/cluster.cfg" >"$TMPD/haproxy.cfg"
haproxy -db -f "$TMPD/haproxy.cfg" >"$TMPD/haproxy.log" 2>&1 &
pids="$pids $!"
PYTHONPATH=$here "$PY" "$here/cluster.py" --haproxy "$port_h" --nodes "$port_a,$port_b,$port_c" "$@"
