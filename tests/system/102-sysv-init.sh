#!/bin/sh
# 102-sysv-init.sh - contrib's LSB init script starts, reports, reloads and
# stops the real daemon of this build tree.
#
# The script reads its paths from a defaults file named by
# CODEEXECD_DEFAULTS, so the test points it at a temporary config, pid
# file and the built worker. Runs as root only: that is how init scripts run.

. "$(dirname "$0")/lib.sh"

SCRIPT=$top_builddir/contrib/codeexecd.init

[ "$(id -u)" -eq 0 ] || skip "init scripts run as root; this test too"
command -v start-stop-daemon >/dev/null 2>&1 ||
	skip "start-stop-daemon not found (Debian's dpkg provides it)"
require_py ipykernel
require_binaries
[ -x "$SCRIPT" ] || fail "$SCRIPT not built"

setup_tmp
PORT=$(free_port)
BASE=http://127.0.0.1:$PORT
write_config
pidfile=$TMPD/run/codeexecd.pid
cat >"$TMPD/defaults" <<EOF2
DAEMON=$CODEEXECD
CONFIG=$TMPD/codeexecd.yaml
PIDFILE=$pidfile
WORKER=$WORKER
STOP_TIMEOUT=30
START_WAIT=120
EOF2
CODEEXECD_DEFAULTS=$TMPD/defaults
# Never hand the commands to systemctl, even on a systemd host.
SYSTEMCTL_SKIP_REDIRECT=1
export CODEEXECD_DEFAULTS SYSTEMCTL_SKIP_REDIRECT

# The daemon is the init script's, not a child of ours: end it if a
# failed check left it running.
cleanup_extra() {
	[ -r "$pidfile" ] || return 0
	kill "$(cat "$pidfile")" 2>/dev/null
	sleep 1
}

# Whether process $1 runs: a zombie that init has not reaped yet does not.
alive() {
	case $(proc_state "$1") in Z | gone) return 1 ;; esac
}

# expect STATUS ARGS...: run the init script, compare its exit status
# (left in last_rc).
expect() {
	want=$1
	shift
	out=$("$SCRIPT" "$@" 2>&1) && last_rc=0 || last_rc=$?
	if [ "$last_rc" -ne "$want" ]; then
		check_failed "$* exited $last_rc, expected $want:"
		echo "$out"
		return 0
	fi
	ok "$* -> $last_rc"
}

# /health answers 200 for the daemon named py.
healthy_py() {
	[ "$(health_status)" = 200 ] &&
		"$PY" -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["name"] != "py")' \
			"$TMPD/health.body"
}

expect 3 status
expect 0 stop
expect 0 start
[ "$last_rc" = 0 ] || fail "giving up: the daemon did not start"
pid=$(cat "$pidfile")
expect 0 status
poll_until 60 healthy_py || check_failed "no healthy daemon after start"
expect 0 start
[ "$(cat "$pidfile")" = "$pid" ] || check_failed "second start replaced $pid"

expect 0 reload
sleep 1
alive "$pid" || check_failed "daemon $pid gone after reload"

# A config the daemon would reject is refused before any signal is sent.
cp "$TMPD/codeexecd.yaml" "$TMPD/good.yaml"
echo "no_such_key: 1" >>"$TMPD/codeexecd.yaml"
expect 1 reload
cp "$TMPD/good.yaml" "$TMPD/codeexecd.yaml"
alive "$pid" || check_failed "daemon $pid gone after a bad reload"
poll_until 10 healthy_py || check_failed "daemon unhealthy after a bad reload"

expect 0 restart
newpid=$(cat "$pidfile" 2>/dev/null) || newpid=
if [ -z "$newpid" ] || [ "$newpid" = "$pid" ]; then
	check_failed "restart left no new daemon (pid file: '$newpid')"
fi
! alive "$pid" || check_failed "old daemon $pid still runs after restart"
poll_until 60 healthy_py || check_failed "no healthy daemon after restart"

expect 0 stop
[ ! -e "$pidfile" ] || check_failed "pid file left after stop"
! alive "$newpid" || check_failed "daemon $newpid still runs after stop"
expect 3 status

# A pid file whose process is gone: LSB status 1.
echo 999999 >"$pidfile"
expect 1 status
rm -f "$pidfile"
exit "$FAILED"
