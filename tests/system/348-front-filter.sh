#!/bin/sh
# 348-front-filter: the front process's seccomp filter (issue 19 item 1),
# on the real daemon. Until the front is a process of its own, the test hook
# CODEEXECD_TEST_FRONT_FILTER makes the whole daemon install the filter at
# its first HTTP request; with pool.warm 0 it then starts no worker, so the
# front's own work must pass: /health, MCP initialize and tools/list,
# refused and malformed requests, the connection census, the control
# socket, SIGHUP reload, SIGUSR1 status. /proc shows Seccomp 2 and
# NoNewPrivs 1. Then a session's first call makes it fork a worker: a call
# off the list, which must kill it with SIGSYS.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
CTL=$top_builddir/ctl/codeexecctl
[ -x "$CTL" ] || fail "$CTL not built"
setup_tmp
PORT=$(free_port)
CFG_WARM=0
write_config
CODEEXECD_TEST_FRONT_FILTER=1
export CODEEXECD_TEST_FRONT_FILTER
start_daemon
unset CODEEXECD_TEST_FRONT_FILTER
wait_ready
conf=$TMPD/codeexecd.yaml

grep -q "front filter installed on the whole daemon" "$LOG" ||
	fail "the test hook did not install the filter"
status=/proc/$DAEMON_PID/status
grep -q '^Seccomp:[[:space:]]*2$' "$status" ||
	fail "daemon not in seccomp filter mode: $(grep Seccomp "$status")"
grep -q '^NoNewPrivs:[[:space:]]*1$' "$status" || fail "no_new_privs not set"
ok "the filter is installed: Seccomp 2, NoNewPrivs 1"

# The front's work over HTTP, with the census counting connections.
run_py "$URL" <<'PY' || fail "MCP requests under the filter"
import sys
from mcp import Client, check, ok
url = sys.argv[1]
c = Client(url)
c.initialize()
tools = [t["name"] for t in c.result("tools/list")["tools"]]
check("execute_py_code" in tools, "tools/list lists the tool", tools)
clients = [Client(url) for _ in range(4)]
for k in clients:
    k.initialize()
ok("initialize and tools/list on five sessions")
r = c.http("POST", "{\"jsonrpc\": \"2.0\", \"id\": [", )
check(r.status == 400, "malformed JSON gets 400", r.status)
r = c.http("POST", "{}", headers={"Host": "evil.example"})
check(r.status in (403, 421), "a foreign Host is refused", r.status)
ok("malformed JSON and a foreign Host are refused")
PY
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X TRACE "$BASE/mcp")
case $code in 4*) ok "TRACE refused ($code)" ;; *) fail "TRACE got $code" ;; esac

# The control socket's protocol.
out=$("$CTL" -s "$TMPD/run/control/codeexecd.sock" status 2>&1) || fail "codeexecctl status: $out"
ok "codeexecctl status over the control socket"

# SIGHUP reload and SIGUSR1 status.
sed -i 's/^description: .*/description: "Reloaded under the filter."/' "$conf"
kill -HUP "$DAEMON_PID"
wait_for 10 "reload after SIGHUP" grep -q "reloaded" "$LOG"
kill -USR1 "$DAEMON_PID"
wait_for 10 "status after SIGUSR1" grep -q "status: .* sessions" "$LOG"
ok "SIGHUP reload and SIGUSR1 status"
[ "$(proc_state "$DAEMON_PID")" != gone ] && [ "$(proc_state "$DAEMON_PID")" != Z ] ||
	fail "the daemon died under the filter"
ok "the daemon is alive after the front's work"

# A worker start forks: off the list, so the filter kills the daemon.
run_py "$URL" <<'PY' >/dev/null 2>&1 &
import sys
from mcp import Client
c = Client(sys.argv[1])
c.initialize()
c.execute("print(1)")
PY
client=$!
dead() { st=$(proc_state "$DAEMON_PID"); [ "$st" = Z ] || [ "$st" = gone ]; }
wait_for 60 "the daemon to die of its fork" dead
wait "$DAEMON_PID" && rc=0 || rc=$?
DAEMON_PID=
wait $client 2>/dev/null || true
[ "$rc" = $((128 + 31)) ] || fail "daemon ended with status $rc, want 159 (SIGSYS)"
ok "a fork under the filter kills the daemon with SIGSYS"
