#!/bin/sh
# 502-shutdown-stopped: SIGTERM while a session's worker is stopped (issue
# 10 item 5). pool_stop() once read a freed worker when it had to kill one
# (exit 139, a stale pid file and socket, a kernel left behind). Now the
# daemon kills the stopped worker and its kernel and exits 0, leaving no pid
# file, no control socket and no process. Run in the sanitizer build, this
# covers the force-kill path.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_WARM=2
write_config
start_daemon
wait_ready
[ -f "$TMPD/run/codeexecd.pid" ] || fail "no pid file while running"

run_py "$URL" "$TMPD/run" >"$TMPD/pids" <<'EOF2'
import sys
from mcp import Client, check, value_of
from calls import control
url, rundir = sys.argv[1:3]
a = Client(url)
a.initialize()
kpid = int(value_of(a.execute("import os; os.getpid()")))
w = [w for w in control(rundir)["workers"] if w.get("session") == a.session_id[:8]]
check(len(w) == 1 and w[0]["kernel_pid"] == kpid, "a's worker and kernel in the status",
      control(rundir))
print(w[0]["pid"], kpid)
EOF2
read -r WPID KPID <"$TMPD/pids" || fail "no worker and kernel pids"
kill -STOP "$WPID"
ok "stopped worker $WPID (kernel $KPID)"

stop_daemon TERM
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC after SIGTERM with a stopped worker (want 0)"
ok "daemon exited 0"
[ ! -e "$TMPD/run/codeexecd.pid" ] || fail "stale pid file left"
# A daemon that dropped root cannot unlink its socket from root's control
# directory (codeexecd(8)); what is left must answer nobody.
sock=$TMPD/run/control/codeexecd.sock
if [ -S "$sock" ] && "$PY" -c 'import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' \
	"$sock" 2>/dev/null; then
	fail "the control socket still answers after the daemon exited"
fi
ok "no pid file; no control socket that answers"
gone() { [ "$(proc_state "$WPID")" = gone ] && ! { st=$(proc_state "$KPID"); [ "$st" != gone ] && [ "$st" != Z ]; }; }
wait_for 10 "the stopped worker and its kernel end" gone
# A kernel is not the daemon's child: once killed, its reaper is init.
reaped() { [ "$(proc_state "$KPID")" = gone ]; }
poll_until 10 reaped || fail "kernel $KPID is a zombie nobody reaps (state $(proc_state "$KPID"))"
ok "worker $WPID and kernel $KPID are gone"
grep -q "did not stop; killing it" "$TMPD/daemon.log" || fail "the log does not say the worker was killed"
ok "the log says the stopped worker was killed"
