#!/bin/sh
# 437-auth-front-filter: auth.mode oauth under the front's seccomp filter.
# The issuer is down when the daemon
# starts: its first fetch fails, every token is refused (401), and it keeps
# serving. The front (codeexecd-front) runs under its filter from the
# start. Once the issuer is up and a minute has passed, a token makes the
# front discover the JWKS address and fetch the keys over verified https
# (libcurl, the threaded resolver, OpenSSL with auth.ca_file) under the
# filter, and it is accepted: the same front lives on, still Seccomp 2.
. "$(dirname "$0")/lib.sh"

require_cmd curl openssl
require_py ipykernel
require_binaries
slow_suite
setup_tmp
PORT=$(free_port)
IPORT=$(free_port)

ISSUER_DIR=$TMPD/issuer
ISS=$(PYTHONPATH=$sysdir "$PY" "$sysdir/authlib.py" setup "$ISSUER_DIR" "$IPORT") ||
	fail "cannot make the test issuer's CA and keys"
chmod 755 "$ISSUER_DIR"
chmod 644 "$ISSUER_DIR/ca.pem"
ISSUER_PID=
stop_issuer() {
	if [ -n "$ISSUER_PID" ]; then
		kill "$ISSUER_PID" 2>/dev/null
		wait "$ISSUER_PID" 2>/dev/null || true
	fi
	ISSUER_PID=
}

CFG_WARM=0
CFG_EXTRA="auth:
  mode: oauth
  issuer: $ISS
  ca_file: $ISSUER_DIR/ca.pem"
write_config
start_daemon
wait_ready
T0=$(date +%s) # the failed fetch came before /health said 200
FRONT=$(front_pid)
[ -n "$FRONT" ] || fail "no front"
grep -q '^Seccomp:[[:space:]]*2$' "/proc/$FRONT/status" || fail "the front is not Seccomp 2"
grep -q "auth: cannot fetch the keys of $ISS .*keeping none: every token is refused" "$LOG" ||
	fail "the failed first fetch is not logged"
ok "the issuer is down at start-up: the daemon says so and serves"

token() {
	PYTHONPATH=$sysdir "$PY" -c 'import sys, authlib
print(authlib.token(sys.argv[1], sys.argv[2], sys.argv[3], scope=""))' "$ISSUER_DIR" "$ISS" "$URL"
}
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}'
TOKEN=$(token)
st=$(mcp_post "$INIT" -H "Authorization: Bearer $TOKEN")
expect_status 401 "$st" "a valid token while the issuer was never reached"

PYTHONPATH=$sysdir "$PY" "$sysdir/authlib.py" serve "$ISSUER_DIR" "$IPORT" \
	>"$TMPD/issuer.log" 2>&1 &
ISSUER_PID=$!
wait_for 20 "the test issuer on $ISS" \
	curl -sf --cacert "$ISSUER_DIR/ca.pem" -o /dev/null "$ISS/jwks.json"
: >"$ISSUER_DIR/requests.log"
# The next attempt is due a minute after the failed one.
now=$(date +%s)
[ "$now" -ge $((T0 + 62)) ] || sleep $((T0 + 62 - now))
st=$(mcp_post "$INIT" -H "Authorization: Bearer $TOKEN")
stop_issuer
[ "$st" = 200 ] || fail "a valid token a minute later: HTTP $st, want 200"
grep -qx '/.well-known/openid-configuration' "$ISSUER_DIR/requests.log" &&
	grep -qx '/jwks.json' "$ISSUER_DIR/requests.log" ||
	fail "the daemon did not discover and fetch the JWKS: $(cat "$ISSUER_DIR/requests.log")"
[ "$(front_pid)" = "$FRONT" ] || fail "the front died fetching the keys under the filter"
grep -q '^Seccomp:[[:space:]]*2$' "/proc/$FRONT/status" || fail "no longer Seccomp 2"
grep -q "auth: JWKS of $ISS read: 2 keys, 0 skipped" "$LOG" || fail "no JWKS read in the log"
ok "a minute later the JWKS is discovered and fetched over https under the filter: 200"
