#!/bin/sh
# 102-sysv-init.sh - contrib's LSB init script starts, reports, reloads and
# stops the real daemon of this build tree.
#
# The script reads its paths from a defaults file named by
# CODEEXECD_DEFAULTS, so the test points it at a temporary config, pid
# file and the built worker. Runs as root only: that is how init scripts run.
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
daemon=$top_builddir/supervisor/codeexecd
worker=$top_builddir/worker/codeexec-worker
script=$top_builddir/contrib/codeexecd.init
python=/usr/bin/python3

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: init scripts run as root; this test too"
	exit 77
fi
if ! command -v start-stop-daemon >/dev/null 2>&1; then
	echo "SKIP: start-stop-daemon not found (Debian's dpkg provides it)"
	exit 77
fi
if ! "$python" -c 'import ipykernel' 2>/dev/null; then
	echo "SKIP: $python cannot import ipykernel (apt-get install python3-ipykernel)"
	exit 77
fi
for f in "$daemon" "$worker" "$script"; do
	[ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }
done

tmp=$(mktemp -d) || exit 1
cleanup()
{
	if [ -r "$tmp/run/codeexecd.pid" ]; then
		kill "$(cat "$tmp/run/codeexecd.pid")" 2>/dev/null
		sleep 1
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# As root, kernels may not run as root: the daemon drops to codeexecd.
. "$(dirname "$0")/kernel_user.sh"
kernel_user_setup "$tmp" || { echo "FAIL: cannot create the account $KERNEL_USER"; exit 1; }
port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$tmp/codeexecd.yaml" <<EOF
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
cat >"$tmp/defaults" <<EOF
DAEMON=$daemon
CONFIG=$tmp/codeexecd.yaml
PIDFILE=$tmp/run/codeexecd.pid
WORKER=$worker
STOP_TIMEOUT=30
START_WAIT=120
EOF
CODEEXECD_DEFAULTS=$tmp/defaults
# Never hand the commands to systemctl, even on a systemd host.
SYSTEMCTL_SKIP_REDIRECT=1
export CODEEXECD_DEFAULTS SYSTEMCTL_SKIP_REDIRECT

fail=0
# Whether process $1 runs: a zombie that init has not reaped yet does not.
alive()
{
	[ -r "/proc/$1/stat" ] || return 1
	state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
	[ -n "$state" ] && [ "$state" != Z ]
}

# expect STATUS what command...: run the init script, compare its exit status.
expect()
{
	want=$1
	shift
	out=$("$script" "$@" 2>&1)
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL: $* exited $rc, expected $want:"
		echo "$out"
		fail=1
		return 1
	fi
	echo "ok: $* -> $rc"
}

# /health answers 200 within `1` seconds.
healthy()
{
	"$python" - "$port" "$1" <<'EOF'
import json, sys, time, urllib.request
port, wait = sys.argv[1], float(sys.argv[2])
end = time.time() + wait
while True:
    try:
        with urllib.request.urlopen("http://127.0.0.1:%s/health" % port, timeout=5) as r:
            if json.load(r)["name"] == "py":
                sys.exit(0)
    except Exception as e:
        why = e
    if time.time() > end:
        print("health: %s" % why)
        sys.exit(1)
    time.sleep(0.2)
EOF
}

expect 3 status
expect 0 stop
expect 0 start || { echo "giving up: the daemon did not start"; exit 1; }
pid=$(cat "$tmp/run/codeexecd.pid")
expect 0 status
healthy 60 || { echo "FAIL: no healthy daemon after start"; fail=1; }
expect 0 start
[ "$(cat "$tmp/run/codeexecd.pid")" = "$pid" ] || { echo "FAIL: second start replaced $pid"; fail=1; }

expect 0 reload
sleep 1
alive "$pid" || { echo "FAIL: daemon $pid gone after reload"; fail=1; }

# A config the daemon would reject is refused before any signal is sent.
cp "$tmp/codeexecd.yaml" "$tmp/good.yaml"
echo "no_such_key: 1" >>"$tmp/codeexecd.yaml"
expect 1 reload
cp "$tmp/good.yaml" "$tmp/codeexecd.yaml"
alive "$pid" || { echo "FAIL: daemon $pid gone after a bad reload"; fail=1; }
healthy 10 || { echo "FAIL: daemon unhealthy after a bad reload"; fail=1; }

expect 0 restart
newpid=$(cat "$tmp/run/codeexecd.pid" 2>/dev/null)
if [ -z "$newpid" ] || [ "$newpid" = "$pid" ]; then
	echo "FAIL: restart left no new daemon (pid file: '$newpid')"
	fail=1
fi
alive "$pid" && { echo "FAIL: old daemon $pid still runs after restart"; fail=1; }
healthy 60 || { echo "FAIL: no healthy daemon after restart"; fail=1; }

expect 0 stop
[ -e "$tmp/run/codeexecd.pid" ] && { echo "FAIL: pid file left after stop"; fail=1; }
alive "$newpid" && { echo "FAIL: daemon $newpid still runs after stop"; fail=1; }
expect 3 status

# A pid file whose process is gone: LSB status 1.
echo 999999 >"$tmp/run/codeexecd.pid"
expect 1 status
rm -f "$tmp/run/codeexecd.pid"
exit "$fail"
