#!/bin/sh
# 510-worker-kernel-pid: the supervisor signals only a kernel it can prove
# is its worker's. A fake worker (fake-worker.c) names an unrelated process
# (a `sleep` leading its own process group, as a kernel does) in READY:
# the worker is killed with one log line, and the sleep survives it, the
# refills that follow and the daemon's shutdown. A fake worker with a real
# child of its own as kernel is accepted, and when that worker is killed
# the supervisor kills the child's process group (the safety net stays).
. "$(dirname "$0")/lib.sh"

require_cmd curl setsid
require_binaries
FAKE=$top_builddir/tests/system/fake-worker
[ -x "$FAKE" ] || fail "$FAKE not built (make check builds it)"
setup_tmp
# Workers may run under a uid the build tree is closed to: use a copy.
cp "$FAKE" "$TMPD/fake-worker" && FAKE=$TMPD/fake-worker
PORT=$(free_port)
SLEEP=
# set +e: under set -e the trap would stop at its first failing command.
trap 'rc=$?; set +e; [ -n "$SLEEP" ] && kill -KILL "$SLEEP" 2>/dev/null; (exit $rc); cleanup' EXIT

# The bystander: not the daemon's, in a process group of its own.
setsid sh -c "echo \$\$ >'$TMPD/sleep.pid'; exec sleep 600" </dev/null >/dev/null 2>&1 &
wait_for 10 "the bystander sleep to start" test -s "$TMPD/sleep.pid"
SLEEP=$(cat "$TMPD/sleep.pid")
alive() { case $(proc_state "$1") in Z | gone) return 1 ;; esac; }
dead() { ! alive "$1"; }
alive "$SLEEP" || fail "the bystander sleep $SLEEP is not running"

# --- A worker that lies ---------------------------------------------------
# $TMPD on the command line: what the test leaves behind is found and failed.
printf '#!/bin/sh\nexec "%s" lie %s "%s"\n' "$FAKE" "$SLEEP" "$TMPD" >"$TMPD/liar"
chmod 755 "$TMPD/liar"
WORKER=$TMPD/liar
write_config
start_daemon
wait_for 60 "a lying worker killed" \
	grep -q "kernel_pid $SLEEP is not a child of the worker" "$LOG"
ok "READY naming an unrelated process is a protocol violation"

# Let a refill or two come and go (each one lies again), then stop.
violations() { [ "$(grep -c "kernel_pid $SLEEP is not a child of the worker" "$LOG")" -ge "$1" ]; }
wait_for 60 "a second lying worker killed" violations 2
st=$(health_status)
[ "$st" = 200 ] || [ "$st" = 503 ] || fail "/health did not answer while workers lie (got $st)"
stop_daemon TERM
alive "$SLEEP" || fail "the bystander sleep $SLEEP was killed"
ok "the unrelated process survives the liars and the shutdown"

# Each liar is logged once, by pid, and is gone.
pids=$(sed -n "s/.*worker \([0-9]*\): kernel_pid $SLEEP is not a child of the worker.*/\1/p" "$LOG")
[ -n "$pids" ] || fail "no worker pid in the violation lines"
for p in $pids; do
	n=$(grep -c "worker $p: .*killing it" "$LOG" || true)
	[ "$n" -eq 1 ] || fail "worker $p: killed and logged $n times, want exactly once"
	alive "$p" && fail "lying worker $p is still running"
done
grep "worker [0-9]*: kernel_pid $SLEEP is not a child" "$LOG" | head -n 1 |
	grep -q "(its parent is [0-9]*); killing it" || fail "the log line does not say why"
ok "each lying worker is killed and logged once ($(echo $pids | wc -w) of them)"

# --- A worker with a real kernel of its own -------------------------------
printf '#!/bin/sh\nexec "%s" child "%s"\n' "$FAKE" "$TMPD" >"$TMPD/honest"
chmod 755 "$TMPD/honest"
WORKER=$TMPD/honest
: >"$LOG"
start_daemon
wait_ready
kpid=$(sed -n 's/.*worker \([0-9]*\): fake kernel \([0-9]*\).*/\2/p' "$LOG" | head -n 1)
wpid=$(sed -n 's/.*worker \([0-9]*\): fake kernel \([0-9]*\).*/\1/p' "$LOG" | head -n 1)
[ -n "$kpid" ] && [ -n "$wpid" ] || fail "the honest worker named no kernel"
grep -q "worker $wpid: .*killing it" "$LOG" && fail "an honest worker was killed"
alive "$kpid" || fail "the honest worker's kernel $kpid is not running"
ok "READY naming the worker's own child (a session leader) is accepted"
kill -KILL "$wpid"
wait_for 20 "the dead worker's kernel $kpid killed by the supervisor" dead "$kpid"
alive "$SLEEP" || fail "the bystander sleep $SLEEP was killed"
ok "a killed worker's proven kernel is killed; the bystander still lives"
