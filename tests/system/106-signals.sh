#!/bin/sh
# 106-signals: SIGHUP applies a good configuration's live settings and
# rejects a bad one, keeping the running one; SIGUSR1 logs a status
# summary; SIGTERM lets a running execution finish within shutdown_grace_s,
# refuses new requests meanwhile, and exits 0.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
start_ready_daemon
conf=$TMPD/codeexecd.yaml

description() {
	run_py "$URL" <<'PY'
import sys
from mcp import Client
c = Client(sys.argv[1])
c.initialize()
print(next(t for t in c.result("tools/list")["tools"] if t["name"] == "execute_py_code")["description"])
PY
}

# A good file: the description changes live, listen is reported.
config_set description '"Reloaded description."' "$conf"
config_set listen "\"127.0.0.1:$(free_port)\"" "$conf"
kill -HUP "$DAEMON_PID"
wait_for 10 "a reload logged after SIGHUP" grep -q "reloaded" "$LOG"
[ "$(description)" = "Reloaded description." ] || fail "SIGHUP did not apply the new description"
ok "SIGHUP applies a live setting (description)"
grep -q "reload: listen changed; it takes effect only after a restart" "$LOG" ||
	fail "SIGHUP did not report listen as needing a restart"
ok "SIGHUP reports listen as needing a restart, and keeps serving on the old port"

# A bad file: rejected, the running configuration stays.
echo "no_such_key: 1" >>"$conf"
kill -HUP "$DAEMON_PID"
wait_for 10 "a rejection logged for a bad file" grep -q "reload rejected" "$LOG"
grep "reload rejected" "$LOG" | grep -q "no_such_key" || fail "the rejection does not name the bad key"
[ "$(description)" = "Reloaded description." ] || fail "a rejected reload changed the configuration"
ok "SIGHUP with a bad file: rejected with file:line:col, running configuration kept"

kill -USR1 "$DAEMON_PID"
wait_for 10 "a status logged after SIGUSR1" grep -q "status: .* sessions, .* idle kernels" "$LOG"
grep -q "status: worker {" "$LOG" || fail "SIGUSR1 status lists no worker"
ok "SIGUSR1 logs a status summary with one line per worker"

# SIGTERM during an execution: it finishes, new requests get 503, exit 0.
run_py "$URL" "$DAEMON_PID" <<'PY' &
import json, os, signal, sys, threading, time
from mcp import Client, check, ok
from calls import wait_busy, wait_for
url, pid = sys.argv[1], int(sys.argv[2])
c = Client(url)
c.initialize()
seen = {}
def stop():
    wait_busy(c)
    os.kill(pid, signal.SIGTERM)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "clientInfo": {"name": "t", "version": "1"}}})
    # Until the signal is handled a new session may still start; then 503.
    seen["status"] = wait_for(lambda: Client(url).http("POST", body).status == 503 and 503,
                              10) or "no 503 within 10 s"
t = threading.Thread(target=stop)
t.start()
r = c.execute("import time; time.sleep(3); print('finished')")
t.join()
check(r["structuredContent"]["stdout"] == "finished\n", "the running execution finished", r)
ok("an execution running at SIGTERM finishes")
check(seen.get("status") == 503, "a new request while stopping gets 503", seen)
ok("a new request while stopping gets HTTP 503")
PY
client=$!
wait $client || fail "the execution running at SIGTERM did not finish"
stop_daemon TERM
[ "$DAEMON_RC" = 0 ] || fail "daemon exited $DAEMON_RC after SIGTERM"
grep -q "shutting down: refusing new requests" "$LOG" || fail "no graceful shutdown logged"
ok "SIGTERM: graceful stop, exit 0"
