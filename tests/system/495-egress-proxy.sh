#!/bin/sh
# 495-egress-proxy: codeexecd --egress-proxy (issue 36) as the parent will
# run it (the daemon's user, one Unix socket per session opened on its
# stdin), against loopback upstreams named in egress.hosts_file: plain HTTP
# and HTTPS (CONNECT, a test CA) to an allowed name work with curl, urllib
# and requests; a denied name, a name with no rule, an IP literal, a name
# that resolves to 127.0.0.1 (DNS rebinding) and the metadata address get
# 403 naming the rule; the upstream sees the URI's host, not the client's
# Host header; connection and byte limits hold per session; a malformed
# head gets 400 or 431; every connection is in the audit log.
#
# The kernels' side (a forwarder in an isolated kernel's namespace) is not
# part of it: egress_upstream.py's bridge stands in for it here.
. "$(dirname "$0")/lib.sh"

require_binaries
require_cmd openssl
require_cmd curl
[ "$(id -u)" = 0 ] || skip "needs root to run the proxy as the daemon's user"
id codeexecd >/dev/null 2>&1 || skip "needs the system user codeexecd"
setup_tmp
chmod 711 "$TMPD"
UP=$sysdir/egress_upstream.py
EG=$TMPD/egress
mkdir "$EG" && chown codeexecd "$EG" && chmod 700 "$EG"

# The upstreams listen on 127.0.0.2, which only an allow CIDR opens.
HTTP_PORT=$(free_port)
TLS_PORT=$(free_port)
cat >"$TMPD/hosts" <<HOSTS
# test names of 495
127.0.0.2   web.test  WWW.web.test
127.0.0.1   rebind.test
169.254.169.254 meta.test
HOSTS
chmod 644 "$TMPD/hosts"

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=495-test-ca \
	-keyout "$TMPD/ca.key" -out "$TMPD/ca.pem" >/dev/null 2>&1 || fail "openssl: test CA"
openssl req -newkey rsa:2048 -nodes -subj /CN=web.test -keyout "$TMPD/web.key" \
	-out "$TMPD/web.csr" >/dev/null 2>&1 || fail "openssl: csr"
printf 'subjectAltName=DNS:web.test\n' >"$TMPD/san"
openssl x509 -req -in "$TMPD/web.csr" -CA "$TMPD/ca.pem" -CAkey "$TMPD/ca.key" \
	-CAcreateserial -days 2 -extfile "$TMPD/san" -out "$TMPD/web.pem" >/dev/null 2>&1 ||
	fail "openssl: sign"

"$PY" "$UP" serve 127.0.0.2 "$HTTP_PORT" &
UP1=$!
"$PY" "$UP" serve 127.0.0.2 "$TLS_PORT" "$TMPD/web.pem" "$TMPD/web.key" &
UP2=$!
mkfifo "$TMPD/ctl"
setpriv --reuid codeexecd --regid nogroup --clear-groups --inh-caps=-all \
	"$CODEEXECD" --egress-proxy "$EG" 600 1 200000 2 "$TMPD/hosts" \
	+web.test +'*.web.test' +rebind.test +meta.test +127.0.0.2/32 -deny.web.test \
	<"$TMPD/ctl" >"$TMPD/daemon.log" 2>&1 &
PROXY=$!
exec 3>"$TMPD/ctl"
B1=$(free_port)
B2=$(free_port)
cleanup_extra() {
	exec 3>&- 2>/dev/null
	kill $UP1 $UP2 $BR1 $BR2 2>/dev/null
	wait $PROXY 2>/dev/null
}
BR1=
BR2=
echo "open s1 agent-a" >&3
echo "open s2 agent-b" >&3
echo "open ../x agent-c" >&3
echo "nonsense" >&3
wait_for 10 "the sessions' sockets" test -S "$EG/s2.sock"
[ "$(stat -c '%U %a' "$EG/s1.sock")" = "codeexecd 600" ] ||
	fail "s1.sock: $(stat -c '%U %a' "$EG/s1.sock"), not codeexecd 600"
[ ! -e "$TMPD/x.sock" ] || fail "a session id with .. made a socket outside the directory"
ok "one socket per session, the daemon's user's, mode 0600; a bad id makes none"
st=/proc/$PROXY/status
grep -q '^Seccomp:[[:space:]]*2' $st || fail "the proxy runs without its seccomp filter"
grep -q '^NoNewPrivs:[[:space:]]*1' $st || fail "the proxy runs without no_new_privs"
grep -q '^CapEff:[[:space:]]*0000000000000000' $st || fail "the proxy has capabilities"
[ "$(stat -c %U /proc/$PROXY)" = codeexecd ] || fail "the proxy is not the daemon's user's"
ok "the proxy: the daemon's user, no capability, no_new_privs, its seccomp filter"

"$PY" "$UP" bridge "$B1" "$EG/s1.sock" 3>&- &
BR1=$!
"$PY" "$UP" bridge "$B2" "$EG/s2.sock" 3>&- &
BR2=$!
wait_for 10 "the bridges" sh -c "curl -s -o /dev/null http://127.0.0.1:$B1/ && \
	curl -s -o /dev/null http://127.0.0.1:$B2/"
P1=http://127.0.0.1:$B1

# --- allowed -------------------------------------------------------------
out=$(curl -sS -x "$P1" "http://web.test:$HTTP_PORT/") || fail "curl http: $out"
[ "$out" = "upstream ok" ] || fail "curl http: $out"
out=$(curl -sS -x "$P1" --cacert "$TMPD/ca.pem" "https://web.test:$TLS_PORT/") ||
	fail "curl https through CONNECT: $out"
[ "$out" = "upstream ok" ] || fail "curl https: $out"
ok "curl: http and https (CONNECT) to an allowed name resolved from hosts_file"

"$PY" - "$P1" "$HTTP_PORT" "$TLS_PORT" "$TMPD/ca.pem" <<'PYEOF' || fail "urllib / requests"
import ssl, sys, urllib.request
proxy, hp, tp, ca = sys.argv[1:]
op = urllib.request.build_opener(
    urllib.request.ProxyHandler({"http": proxy, "https": proxy}),
    urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=ca)))
assert op.open(f"http://www.web.test:{hp}/").read() == b"upstream ok\n"
assert op.open(f"https://web.test:{tp}/").read() == b"upstream ok\n"
try:
    import requests
except ImportError:
    sys.exit(0)
px = {"http": proxy, "https": proxy}
assert requests.get(f"http://web.test:{hp}/", proxies=px).text == "upstream ok\n"
assert requests.get(f"https://web.test:{tp}/", proxies=px, verify=ca).text == "upstream ok\n"
PYEOF
ok "urllib and requests: http and https through the proxy"

# The upstream sees the URI's host: no other host of the same address.
out=$(curl -sS -x "$P1" -H 'Host: evil.example' -H 'Proxy-Authorization: Basic eA==' \
	"http://web.test:$HTTP_PORT/echo")
echo "$out" | grep -qx "Host: web.test:$HTTP_PORT" || fail "Host not rewritten: $out"
echo "$out" | grep -qi 'evil.example\|Proxy-Authorization' && fail "client headers passed: $out"
echo "$out" | grep -q '^GET /echo HTTP/1.1' || fail "request line not origin-form: $out"
ok "the upstream gets origin-form, the URI's Host, no Proxy-* header"

# --- refused ---------------------------------------------------------------
# refused URL RULE: 403 with the rule in the header and the body.
refused() {
	code=$(curl -s -o "$TMPD/body" -D "$TMPD/headers" -w '%{http_code}' -x "$P1" "$1")
	[ "$code" = 403 ] || fail "$1: HTTP $code, not 403"
	grep -qi "^X-Codeexecd-Egress-Rule: $2" "$TMPD/headers" ||
		fail "$1: rule header $(grep -i egress-rule "$TMPD/headers"), not $2"
	grep -qF "$2" "$TMPD/body" || fail "$1: body $(cat "$TMPD/body") names no rule"
}
refused "http://deny.web.test:$HTTP_PORT/" "deny deny.web.test"
refused "http://other.test/" "default deny (no allow rule names the host)"
refused "http://127.0.0.3:$HTTP_PORT/" "default deny (an IP literal needs an allow CIDR)"
refused "http://rebind.test:$HTTP_PORT/" "built-in deny 127.0.0.0/8"
refused "http://meta.test/latest/meta-data/" "built-in deny 169.254.0.0/16"
refused "http://169.254.169.254/latest/meta-data/" \
	"default deny (an IP literal needs an allow CIDR)"
refused "http://[::ffff:169.254.169.254]/" "default deny (an IP literal needs an allow CIDR)"
code=$(curl -s -o /dev/null -w '%{http_code}' -x "$P1" --cacert "$TMPD/ca.pem" \
	"https://rebind.test:$TLS_PORT/" || true)
[ "$code" = 403 ] || [ "$code" = 000 ] || fail "CONNECT rebind.test: $code"
grep -q 'host rebind.test port '"$TLS_PORT"' denied rule "built-in deny 127.0.0.0/8"' \
	"$TMPD/daemon.log" || fail "CONNECT to a rebinding name not refused"
ok "denied name, no rule, IP literal, rebinding to 127.0.0.1, metadata: 403 naming the rule"

# An allowed name the hosts file lacks goes to the resolver, under the filter.
code=$(curl -s -o "$TMPD/body" -w '%{http_code}' -x "$P1" "http://nx.web.test/" || true)
[ "$code" = 502 ] || fail "an unresolvable allowed name: HTTP $code, not 502"
kill -0 $PROXY 2>/dev/null || fail "the proxy died resolving a name (its filter?)"
ok "an allowed name DNS cannot resolve: 502, and the proxy lives"

# Malformed heads, straight on the session's socket.
"$PY" - "$EG/s1.sock" <<'PYEOF' || fail "malformed heads"
import socket, sys
def ask(raw):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall(raw)
    out = b""
    while True:
        d = s.recv(65536)
        if not d:
            return out.split(b"\r\n")[0]
        out += d
assert ask(b"GET http://web.test/ HTTP/1.1\nHost: x\r\n\r\n") == b"HTTP/1.1 400 Bad Request"
assert ask(b"GET /relative HTTP/1.1\r\n\r\n") == b"HTTP/1.1 400 Bad Request"
assert ask(b"GET https://web.test/ HTTP/1.1\r\n\r\n") == b"HTTP/1.1 400 Bad Request"
assert ask(b"CONNECT web.test HTTP/1.1\r\n\r\n") == b"HTTP/1.1 400 Bad Request"
assert ask(b"CONNECT user@web.test:80 HTTP/1.1\r\n\r\n") == b"HTTP/1.1 400 Bad Request"
assert ask(b"GET http://web.test/ HTTP/1.1\r\nX: " + b"a" * 9000 + b"\r\n\r\n") \
    == b"HTTP/1.1 431 Request Header Fields Too Large"
PYEOF
ok "bare LF, relative URI, https without CONNECT, no port, userinfo: 400; long head: 431"

# --- limits ----------------------------------------------------------------
# Two connections held open in session s2 (max_connections 2); a third is refused.
fds=$(ls /proc/$PROXY/fd | wc -l)
curl -s -o /dev/null -x "http://127.0.0.1:$B2" "http://web.test:$HTTP_PORT/hold" 3>&- &
H1=$!
curl -s -o /dev/null -x "http://127.0.0.1:$B2" "http://web.test:$HTTP_PORT/hold" 3>&- &
H2=$!
wait_for 10 "two held connections" sh -c "[ \$(ls /proc/$PROXY/fd | wc -l) -ge $((fds + 4)) ]"
code=$(curl -s -o "$TMPD/body" -D "$TMPD/headers" -w '%{http_code}' \
	-x "http://127.0.0.1:$B2" "http://web.test:$HTTP_PORT/")
[ "$code" = 403 ] && grep -qi '^X-Codeexecd-Egress-Rule: egress.max_connections' \
	"$TMPD/headers" || fail "a third connection of s2: $code $(cat "$TMPD/body")"
out=$(curl -sS -x "$P1" "http://web.test:$HTTP_PORT/") || fail "s1 while s2 is full"
[ "$out" = "upstream ok" ] || fail "s1 while s2 is full: $out"
kill $H1 $H2 2>/dev/null
wait $H1 $H2 2>/dev/null || true
ok "max_connections holds per session: s2's third refused, s1 unaffected"

# max_bytes 200000: a 300000-byte answer is cut, and the session then refused.
wait_for 40 "s2's held connections to close" sh -c \
	"curl -s -o /dev/null -w '%{http_code}' -x http://127.0.0.1:$B2 \
	http://web.test:$HTTP_PORT/ | grep -qx 200"
got=$( (curl -s -x "http://127.0.0.1:$B2" "http://web.test:$HTTP_PORT/big" || true) | wc -c)
[ "$got" -lt 300000 ] || fail "a 300000-byte answer passed a 200000-byte limit"
refused_b() {
	code=$(curl -s -o /dev/null -D "$TMPD/headers" -w '%{http_code}' \
		-x "http://127.0.0.1:$B2" "http://web.test:$HTTP_PORT/")
	[ "$code" = 403 ] && grep -qi '^X-Codeexecd-Egress-Rule: egress.max_bytes' "$TMPD/headers"
}
refused_b || fail "s2 over its bytes still served"
out=$(curl -sS -x "$P1" "http://web.test:$HTTP_PORT/") || fail "s1 after s2's bytes ran out"
ok "max_bytes holds per session: cut at the limit, then 403 egress.max_bytes; s1 unaffected"

# --- audit and sessions ------------------------------------------------------
grep -q "egress: session s1 identity agent-a host web.test port $HTTP_PORT allowed rule \"allow web.test\" bytes_out [1-9][0-9]* bytes_in [1-9][0-9]* duration_s " \
	"$TMPD/daemon.log" || fail "no audit line of an allowed connection"
grep -q 'egress: session s2 identity agent-b .* denied rule "egress.max_connections"' \
	"$TMPD/daemon.log" || fail "no audit line of the refused connection"
ok "the audit log names session, identity, host, port, rule, bytes and duration"

echo "close s1" >&3
wait_for 10 "s1's socket to go" sh -c "[ ! -e '$EG/s1.sock' ]"
[ -S "$EG/s2.sock" ] || fail "closing s1 removed s2"
ok "close removes that session's socket only"

# Another identity may not connect to a session's socket (mode 0600).
setpriv --reuid nobody --regid nogroup --clear-groups "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except PermissionError:
    sys.exit(0)
sys.exit("connected")' "$EG/s2.sock" || fail "another uid connected to s2's socket"
ok "another uid cannot connect to a session's socket"

# Its input closing ends the proxy.
exec 3>&-
wait_for 10 "the proxy to end when its input closes" sh -c \
	"[ ! -d /proc/$PROXY ] || grep -q '^State:.*Z' /proc/$PROXY/status"
ok "the proxy ends when the parent's end of its input closes"
