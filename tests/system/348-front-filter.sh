#!/bin/sh
# 348-front-filter: the front process. The daemon
# runs as a privileged parent and an unprivileged front, codeexecd-front:
# /proc shows the front as the daemon's user, with every capability set and
# the bounding set empty, NoNewPrivs 1 and Seccomp 2, while it serves MCP,
# runs code (its workers started by the parent), the control socket, SIGHUP
# and SIGUSR1 (sent to the parent, passed on). Then the test hook
# (CODEEXECD_TEST_FRONT_FILTER, front_testhook.h) makes the front fork, a
# call off its allow-list: SIGSYS kills it. With front_restart restart the
# parent ends the old front's kernels and starts a new front, which serves
# (the old session is gone); with front_restart exit the daemon exits 1 and
# leaves no process behind.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
CTL=$top_builddir/ctl/codeexecctl
[ -x "$CTL" ] || fail "$CTL not built"
setup_tmp
PORT=$(free_port)
# A daemon whose front obeys the test hook (front_testhook.h).
start_hooked_daemon() {
	write_config
	CODEEXECD_TEST_FRONT_FILTER=1
	export CODEEXECD_TEST_FRONT_FILTER
	start_daemon
	unset CODEEXECD_TEST_FRONT_FILTER
	wait_ready
}
start_hooked_daemon
conf=$TMPD/codeexecd.yaml

FRONT=$(front_pid)
[ -n "$FRONT" ] || fail "the daemon $DAEMON_PID has no child named codeexecd-front"
status=/proc/$FRONT/status
for set in CapInh CapPrm CapEff CapBnd CapAmb; do
	grep -q "^$set:[[:space:]]*0000000000000000$" "$status" ||
		fail "the front's $set is not empty: $(grep "^$set" "$status")"
done
grep -q '^NoNewPrivs:[[:space:]]*1$' "$status" || fail "the front has no no_new_privs"
grep -q '^Seccomp:[[:space:]]*2$' "$status" ||
	fail "the front is not in seccomp filter mode: $(grep Seccomp "$status")"
if [ "$(id -u)" = 0 ]; then
	uid=$(id -u "$TEST_USER")
	awk -v u="$uid" '/^Uid:/ { exit !($2 == u && $3 == u && $4 == u && $5 == u) }' "$status" ||
		fail "the front is not uid $uid ($TEST_USER): $(grep Uid "$status")"
fi
grep -q '^Seccomp:[[:space:]]*0$' "/proc/$DAEMON_PID/status" ||
	fail "the parent should run unfiltered (it forks workers)"
ok "front $FRONT: no capability in any set, NoNewPrivs 1, Seccomp 2, uid of $TEST_USER"

# The front's work: MCP, a session that runs code, refusals.
run_py "$URL" "$TMPD/kernel.pid" <<'PY' || fail "MCP requests through the front"
import sys
from mcp import Client, check, ok, value_of
url = sys.argv[1]
c = Client(url)
c.initialize()
tools = [t["name"] for t in c.result("tools/list")["tools"]]
check("execute_py_code" in tools, "tools/list lists the tool", tools)
r = c.execute("import os\nx = 41\nos.getpid()")
check(r.get("structuredContent", {}).get("success"), "a session runs code", r)
open(sys.argv[2], "w").write(value_of(r))
r = c.http("POST", "{\"jsonrpc\": \"2.0\", \"id\": [", )
check(r.status == 400, "malformed JSON gets 400", r.status)
open(sys.argv[2] + ".sid", "w").write(c.session_id)
ok("initialize, tools/list, code in a kernel, malformed JSON refused")
PY
KPID=$(cat "$TMPD/kernel.pid")
SID=$(cat "$TMPD/kernel.pid.sid")
out=$("$CTL" -s "$TMPD/run/control/codeexecd.sock" status 2>&1) || fail "codeexecctl status: $out"
echo "$out" | grep -q "pid $DAEMON_PID" || fail "codeexecctl status names no pid $DAEMON_PID: $out"
ok "codeexecctl status over the control socket, with the daemon's pid"
config_set description '"Reloaded through the parent."' "$conf"
kill -HUP "$DAEMON_PID"
wait_for 10 "reload after SIGHUP" grep -q "reloaded" "$LOG"
kill -USR1 "$DAEMON_PID"
wait_for 10 "status after SIGUSR1" grep -q "status: .* sessions" "$LOG"
ok "SIGHUP and SIGUSR1 to the parent reach the front"

# A call off the list: the front dies of SIGSYS, the parent restarts it.
curl -s -o /dev/null --max-time 5 -H 'X-Codeexecd-Test: fork' "$BASE/health" || true
wait_for 20 "the front to die of its fork" grep -q "front .*killed by signal 31 (SIGSYS)" "$LOG"
wait_for 20 "a new front" grep -q "starting a new front: every session of the old one is lost" "$LOG"
gone() { [ "$(proc_state "$KPID")" = gone ] || [ "$(proc_state "$KPID")" = Z ]; }
wait_for 20 "the old front's kernel $KPID to end" gone
wait_ready
NEW=$(front_pid)
[ -n "$NEW" ] && [ "$NEW" != "$FRONT" ] || fail "no new front (old $FRONT, now '$NEW')"
kill -0 "$DAEMON_PID" || fail "the parent died with its front"
run_py "$URL" "$SID" <<'PY' || fail "the new front"
import sys
from mcp import Client, check, ok, value_of
c = Client(sys.argv[1])
c.session_id = sys.argv[2]
r = c.http("POST", '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}')
check(r.status == 404, "the old front's session is unknown to the new one", r.status)
c = Client(sys.argv[1])
c.initialize()
check(value_of(c.execute("6 * 7")) == "42", "a new session runs code", Client.last)
ok("the new front serves; the old session is gone")
PY
ok "a fork kills the front with SIGSYS; the parent ends its kernels and restarts it"
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exited $DAEMON_RC after SIGTERM"

# front_restart exit: the daemon ends with its front, leaving nothing.
PORT=$(free_port)
CFG_EXTRA='front_restart: exit'
start_hooked_daemon
run_py "$URL" "$TMPD/kernel.pid" <<'PY' || fail "a session before the fork"
import sys
from mcp import Client, value_of
c = Client(sys.argv[1])
c.initialize()
open(sys.argv[2], "w").write(value_of(c.execute("import os; os.getpid()")))
PY
KPID=$(cat "$TMPD/kernel.pid")
WORKERS=$(worker_pids)
curl -s -o /dev/null --max-time 5 -H 'X-Codeexecd-Test: fork' "$BASE/health" || true
dead() { st=$(proc_state "$DAEMON_PID"); [ "$st" = Z ] || [ "$st" = gone ]; }
wait_for 30 "the daemon to exit with its front" dead
wait "$DAEMON_PID" && rc=0 || rc=$?
DAEMON_PID=
[ "$rc" = 1 ] || fail "the daemon exited $rc, want 1 (front_restart exit)"
grep -q "front_restart is exit: stopping" "$LOG" || fail "the log does not say why it stopped"
for p in $KPID $WORKERS; do
	st=$(proc_state "$p")
	[ "$st" = gone ] || [ "$st" = Z ] || fail "process $p (kernel or worker) outlived the daemon"
done
ok "front_restart exit: the daemon exits 1, its workers and kernel gone"
