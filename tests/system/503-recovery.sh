#!/bin/sh
# 503-recovery: recovery after faults.
# 1. SIGKILL of the supervisor and its workers leaves session directories,
#    kernels' runtime directories, kernels' control groups (every kernel
#    has one where the host offers them) and running kernels. The next start removes all of it, kills
#    what ran in those groups, and logs what it removed.
# 2. runtime_dir removed under a running daemon: made again with its control
#    socket and pid file; new sessions work at once, though the workers
#    that started in between failed.
# 3. runtime_dir replaced by a file: /health says "degraded" (503) with the
#    reason until the file goes, then "ok" again with the socket back.
# /health answers within a second throughout 2 and 3.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
CTL=$top_builddir/ctl/codeexecctl
[ -x "$CTL" ] || fail "$CTL not built"
setup_tmp
PORT=$(free_port)
CFG_WARM=2
CGROUPS=
if [ "$(id -u)" = 0 ] && "$WORKER" -p >"$TMPD/layout.json" 2>/dev/null; then
	CGROUPS=1
else
	echo "# no usable control groups here: the control-group part is not checked"
fi
# As root, kernels get identities of their own and the daemon keeps the
# privilege to make runtime_dir again in a parent only root may write (a
# daemon that dropped to `user` stays degraded there, saying why).
if [ "$(id -u)" = 0 ]; then
	CFG_EXTRA='kernel_uid_range: "63500-63519"'
	worker_for_other_uids
	chmod 711 "$TMPD" # kernels under other uids reach their session directories
fi
write_config
start_daemon
wait_ready

# --- 1. SIGKILL, then a fresh start ------------------------------------------
run_py "$URL" >"$TMPD/kernel.pid" <<'EOF2'
import sys
from mcp import Client, check, value_of
a = Client(sys.argv[1])
a.initialize()
r = a.execute("import os\nopen('left.txt', 'w').write('x')\nos.getpid()")
check(value_of(r) is not None, "a runs", r)
print(value_of(r))
EOF2
KPID=$(cat "$TMPD/kernel.pid")
WORKERS=$(cat /proc/"$DAEMON_PID"/task/*/children) # the front too
OLD_SESSIONS=$(ls "$TMPD/state/sessions")
OLD_RUNDIRS=$(cd "$TMPD/run" && ls -d k-*)
[ -n "$OLD_SESSIONS" ] && [ -n "$OLD_RUNDIRS" ] || fail "no session or runtime directories to leave"
OLD_GROUPS=
if [ -n "$CGROUPS" ]; then
	# On cgroup v1 each daemon's groups lie in a parent of its own, codeexecd/<pid>.
	PARENTS=$("$PY" -c 'import json, os, sys
l = json.load(open(sys.argv[1]))
print("\n".join(sorted({os.path.dirname(l[c]["parent"]) + "/" + sys.argv[2]
                         if l[c]["version"] == 1 else l[c]["parent"]
                         for c in ("memory", "pids", "cpu", "freezer") if c in l})))' \
		"$TMPD/layout.json" "$DAEMON_PID")
	for k in $OLD_RUNDIRS; do
		for p in $PARENTS; do
			[ -d "$p/$k" ] && OLD_GROUPS="$OLD_GROUPS $p/$k"
		done
	done
	[ -n "$OLD_GROUPS" ] || fail "the kernels have no control groups under $PARENTS"
fi
kill -KILL "$DAEMON_PID" $WORKERS
wait "$DAEMON_PID" 2>/dev/null || true
DAEMON_PID=
ok "killed the daemon and its workers ($WORKERS) with SIGKILL"
[ "$(proc_state "$KPID")" != gone ] || fail "kernel $KPID died with them: nothing to recover"
if [ -z "$CGROUPS" ]; then
	# Without control groups nothing names the old kernels: end them here.
	for p in $(leftovers); do kill -KILL "$p" 2>/dev/null; done
fi

start_daemon
wait_ready
for d in $OLD_SESSIONS; do
	[ ! -e "$TMPD/state/sessions/$d" ] || fail "session directory $d is still there"
	grep -q "removed $TMPD/state/sessions/$d, left by a previous instance" "$TMPD/daemon.log" ||
		fail "the log does not say $d was removed"
done
for k in $OLD_RUNDIRS; do
	[ ! -e "$TMPD/run/$k" ] || fail "runtime directory $k is still there"
done
ok "session and runtime directories of the killed instance removed and logged"
if [ -n "$CGROUPS" ]; then
	for g in $OLD_GROUPS; do
		[ ! -d "$g" ] || fail "control group $g is still there"
	done
	grep -q "removed control group k-" "$TMPD/daemon.log" || fail "the log names no control group"
	dead() { st=$(proc_state "$KPID"); [ "$st" = gone ] || [ "$st" = Z ]; }
	wait_for 10 "the old kernel $KPID ends" dead
	ok "control groups removed and the kernel in them killed:$OLD_GROUPS"
fi

# --- 2. runtime_dir removed under the daemon ---------------------------------
# /health within a second, whatever state runtime_dir is in; sets qh to its status.
quick_health() {
	qh=$(curl -s -o "$TMPD/health.body" -w '%{http_code}' --max-time 1 "$BASE/health") || true
	[ "$qh" != 000 ] || fail "/health did not answer within a second"
}
rm -rf "$TMPD/run"
# Kill the warm workers: those that start before the daemon notices fail
# for want of runtime_dir, enough of them to back refills off. Those
# failures must not outlive runtime_dir's return (the sessions below run
# at once).
kill -KILL $(worker_pids) 2>/dev/null || true
back() { quick_health && [ -S "$TMPD/run/control/codeexecd.sock" ] && [ -f "$TMPD/run/codeexecd.pid" ]; }
wait_for 10 "runtime_dir, the control socket and the pid file made again" back
[ "$(cat "$TMPD/run/codeexecd.pid")" = "$DAEMON_PID" ] || fail "the new pid file is wrong"
"$CTL" -s "$TMPD/run/control/codeexecd.sock" status >"$TMPD/status.out" 2>&1 ||
	fail "codeexecctl status fails on the new socket: $(cat "$TMPD/status.out")"
ok "runtime_dir made again; codeexecctl status answers"
run_py "$URL" <<'EOF2'
import sys
from mcp import Client, check, ok, value_of
# More sessions than warm workers: at least one worker starts after the
# removal, in the new runtime_dir.
cs = []
for i in range(4):
    c = Client(sys.argv[1])
    c.initialize()
    check(value_of(c.execute("6 * 7", http_timeout=120)) == "42", "session %d runs" % i)
    cs.append(c)
ok("4 new sessions work after runtime_dir was made again")
EOF2
# A worker that starts in between may make runtime_dir itself; the socket
# is the daemon's alone to make again.
grep -q "control socket in $TMPD/run made again" "$TMPD/daemon.log" ||
	fail "the log does not say the control socket was made again"

# --- 3. runtime_dir cannot be made: degraded until it can --------------------
mv "$TMPD/run" "$TMPD/run.old"
: >"$TMPD/run.file"
# The daemon may make runtime_dir again (with its control/ inside) between
# the two moves: take that away too, for a bounded while.
file_in_place() { mv -T "$TMPD/run.file" "$TMPD/run" 2>/dev/null || { rm -rf "$TMPD/run"; false; }; }
wait_for 10 "a file where runtime_dir was" file_in_place
degraded() { quick_health && [ "$qh" = 503 ] && grep -q '"status":"degraded"' "$TMPD/health.body"; }
wait_for 10 "/health says degraded" degraded
grep -q "not a directory" "$TMPD/health.body" || fail "/health gives no reason: $(cat "$TMPD/health.body")"
ok "/health while runtime_dir is a file: $(cat "$TMPD/health.body")"
rm -f "$TMPD/run"
healthy() { quick_health && [ "$qh" = 200 ] && grep -q '"status":"ok"' "$TMPD/health.body"; }
wait_for 10 "/health says ok again" healthy
back || fail "the control socket is not back"
ok "runtime_dir made again: /health $(cat "$TMPD/health.body")"

stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
ok "daemon stopped cleanly"
