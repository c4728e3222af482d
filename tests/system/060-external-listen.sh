#!/bin/sh
# 060-external-listen: safe by default. Without authentication a
# non-loopback `listen` is refused at start-up, unless
# allow_external_network_boundary is true, and then a warning is logged.
# Also: `listen` port 0 picks a free port and the log says which.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)

# --- 0.0.0.0 without the flag: refused -----------------------------------------
CFG_LISTEN=0.0.0.0:$PORT
write_config
start_daemon
i=0
while [ "$(proc_state "$DAEMON_PID")" != Z ] && [ "$(proc_state "$DAEMON_PID")" != gone ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "daemon still running 30 s after start with listen 0.0.0.0 and no auth"
	sleep 0.1
done
wait "$DAEMON_PID" && rc=0 || rc=$?
DAEMON_PID=
cat "$LOG"
[ $rc -ne 0 ] || fail "listen 0.0.0.0 without auth: exit status 0, want non-zero"
grep -q allow_external_network_boundary "$LOG" ||
	fail "listen 0.0.0.0 without auth: the message does not name allow_external_network_boundary"
ok "listen 0.0.0.0 without auth refused (exit $rc): $(grep allow_external_network_boundary "$LOG" | head -n 1)"
[ -z "$(leftovers)" ] || fail "a refused start left processes behind"

# --- the same with allow_external_network_boundary: true ------------------------
: >"$LOG"
CFG_EXTRA='allow_external_network_boundary: true'
write_config
start_daemon
wait_ready
grep -iE 'warn' "$LOG" | grep -qiE 'external|boundary|0\.0\.0\.0|auth' ||
	fail "allow_external_network_boundary: no warning in the log"
ok "listen 0.0.0.0 with allow_external_network_boundary: up, warned: $(grep -iE 'warn' "$LOG" | grep -iE 'external|boundary|0\.0\.0\.0|auth' | head -n 1)"
grep -q "listening on 0.0.0.0:$PORT" "$LOG" || fail "no 'listening on 0.0.0.0:$PORT' in the log"
stop_daemon TERM
[ "$DAEMON_RC" = 0 ] || fail "SIGTERM: exit status $DAEMON_RC"

# --- port 0: the log says which port ---------------------------------------------
: >"$LOG"
CFG_LISTEN=127.0.0.1:0
CFG_EXTRA=
write_config
start_daemon
i=0
PORT=
while [ -z "$PORT" ]; do
	PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$LOG" | head -n 1)
	i=$((i + 1))
	[ $i -lt 600 ] || fail "no 'listening on 127.0.0.1:PORT' in the log after 60 s"
	kill -0 "$DAEMON_PID" 2>/dev/null || fail "daemon died with listen port 0"
	[ -n "$PORT" ] || sleep 0.1
done
[ "$PORT" -gt 0 ] || fail "listening on port $PORT"
BASE=http://127.0.0.1:$PORT
wait_ready
ok "listen 127.0.0.1:0: the log says port $PORT, and /health answers there"
