#!/bin/sh
# 498-egress-inject: egress.inject (issue 36 part 3). The proxy, run as the
# parent runs it (the daemon's user, ca=DIR, the headers told on its stdin
# before "ready"), intercepts a CONNECT to an injected host: it verifies
# the real upstream (a loopback HTTPS server with a test CA, trusted through
# upstream_ca=), shows the client a leaf of its own CA, and adds the
# configured headers, replacing the client's of the same name; a host
# without inject is tunnelled untouched (the client sees the upstream's own
# certificate); an upstream whose certificate does not verify gets 502
# naming why; curl and http.client work through it trusting the CA bundle.
# Then the daemon: with egress.inject it starts the proxy intercepting, the
# CA key is the proxy's user's only, and the secret is in no file of the
# runtime directory a kernel's user may read, nor in a worker's environment,
# nor in the log.
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
mkdir "$EG" && chown codeexecd "$EG" && chmod 711 "$EG"
EGRESS_BUNDLE=egress/ca/bundle.pem
SECRET="s3cr3t-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
TOKEN="tok-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"

cat >"$TMPD/hosts" <<HOSTS
127.0.0.2   api.test plain.test bad.test
HOSTS
chmod 644 "$TMPD/hosts"

# leaf NAME CA: a certificate for NAME signed by CA ($TMPD/CA.pem, .key).
leaf() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
		-keyout "$TMPD/$1.key" -out "$TMPD/$1.csr" >/dev/null 2>&1 || fail "openssl: csr $1"
	printf 'subjectAltName=DNS:%s\n' "$1" >"$TMPD/$1.san"
	openssl x509 -req -in "$TMPD/$1.csr" -CA "$TMPD/$2.pem" -CAkey "$TMPD/$2.key" \
		-CAcreateserial -days 2 -extfile "$TMPD/$1.san" -out "$TMPD/$1.pem" \
		>/dev/null 2>&1 || fail "openssl: sign $1"
}
for ca in testca rogueca; do
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj "/CN=498-$ca" -keyout "$TMPD/$ca.key" -out "$TMPD/$ca.pem" >/dev/null 2>&1 ||
		fail "openssl: $ca"
done
leaf api.test testca
leaf plain.test testca
leaf bad.test rogueca
chmod 644 "$TMPD"/*.pem "$TMPD"/*.key

A_PORT=$(free_port)
P_PORT=$(free_port)
B_PORT=$(free_port)
"$PY" "$UP" serve 127.0.0.2 "$A_PORT" "$TMPD/api.test.pem" "$TMPD/api.test.key" &
UP1=$!
"$PY" "$UP" serve 127.0.0.2 "$P_PORT" "$TMPD/plain.test.pem" "$TMPD/plain.test.key" &
UP2=$!
"$PY" "$UP" serve 127.0.0.2 "$B_PORT" "$TMPD/bad.test.pem" "$TMPD/bad.test.key" &
UP3=$!
PROXY=
BR1=
cleanup_extra() {
	exec 3>&- 2>/dev/null
	kill $UP1 $UP2 $UP3 $BR1 2>/dev/null
	[ -z "$PROXY" ] || wait $PROXY 2>/dev/null
}

mkfifo "$TMPD/ctl"
setpriv --reuid codeexecd --regid nogroup --clear-groups --inh-caps=-all \
	"$CODEEXECD" --egress-proxy "$EG" 600 1 0 8 "$TMPD/hosts" \
	+api.test +plain.test +bad.test +127.0.0.2/32 "ca=$EG/ca" "upstream_ca=$TMPD/testca.pem" \
	<"$TMPD/ctl" >"$TMPD/proxy.log" 2>&1 &
PROXY=$!
exec 3>"$TMPD/ctl"
echo "inject api.test X-Api-Key $SECRET" >&3
echo "inject api.test Authorization Bearer $TOKEN" >&3
echo "inject bad.test X-Api-Key $SECRET" >&3
echo "ready" >&3
echo "open s1 agent-a" >&3
wait_for 10 "the session's socket" test -S "$EG/s1.sock"
S=$EG/s1.sock
BUNDLE=$EG/ca/bundle.pem

[ "$(stat -c '%U %a' "$EG/ca/ca.key")" = "codeexecd 600" ] ||
	fail "ca.key: $(stat -c '%U %a' "$EG/ca/ca.key"), not codeexecd 600"
[ "$(stat -c '%a' "$EG/ca/ca.pem") $(stat -c '%a' "$BUNDLE")" = "644 644" ] ||
	fail "ca.pem and bundle.pem are not world-readable"
openssl x509 -in "$EG/ca/ca.pem" -noout -text | grep -q 'CA:TRUE' || fail "ca.pem is not a CA"
openssl x509 -in "$EG/ca/ca.pem" -noout -text | grep -q 'prime256v1' || fail "the CA is not P-256"
grep -qF "$(sed -n 2p "$EG/ca/ca.pem")" "$BUNDLE" || fail "the bundle lacks the CA"
[ "$(grep -c 'BEGIN CERTIFICATE' "$BUNDLE")" -gt 10 ] || fail "the bundle lacks the system's CAs"
grep -q '^Seccomp:[[:space:]]*2' /proc/$PROXY/status || fail "the proxy runs without its filter"
ok "the CA: key the proxy's user's (0600), certificate and bundle (system CAs + CA) 0644"

# --- an injected host ---------------------------------------------------
out=$("$PY" "$UP" get "$S" api.test "$A_PORT" "$BUNDLE" /echo "X-Api-Key: client-fake" \
	"x-api-key: client-fake2" "Host: evil.test" "X-Other: kept" 2>"$TMPD/issuer") ||
	fail "intercepted GET: $out"
echo "$out" | grep -q '^HTTP/1.0 200' || fail "intercepted GET: $out"
echo "$out" | grep -qx "X-Api-Key: $SECRET" || fail "the injected header did not arrive: $out"
echo "$out" | grep -qx "Authorization: Bearer $TOKEN" || fail "the second header did not arrive: $out"
echo "$out" | grep -qi 'client-fake' && fail "the client's header of the same name passed: $out"
echo "$out" | grep -qx "Host: api.test:$A_PORT" || fail "Host not the CONNECT's: $out"
echo "$out" | grep -qx "X-Other: kept" || fail "another header of the client was lost: $out"
grep -qx "issuer: codeexecd egress proxy CA" "$TMPD/issuer" ||
	fail "the client was not shown the proxy's leaf: $(cat "$TMPD/issuer")"
ok "an injected host: both headers reach the upstream, the client's same-named ones replaced"

# Ordinary clients, through a TCP bridge as a kernel's forwarder would be.
B1=$(free_port)
"$PY" "$UP" bridge "$B1" "$S" 3>&- &
BR1=$!
wait_for 10 "the bridge" sh -c "curl -s -o /dev/null http://127.0.0.1:$B1/"
out=$(curl -sS -x "http://127.0.0.1:$B1" --cacert "$BUNDLE" -H "X-Api-Key: curl-fake" \
	"https://api.test:$A_PORT/echo") || fail "curl through the interception: $out"
echo "$out" | grep -qx "X-Api-Key: $SECRET" || fail "curl: no injected header: $out"
"$PY" - "$B1" "$A_PORT" "$BUNDLE" "$SECRET" <<'PYEOF' || fail "http.client"
import http.client, ssl, sys
bport, port, bundle, secret = sys.argv[1:]
ctx = ssl.create_default_context(cafile=bundle)
c = http.client.HTTPSConnection("127.0.0.1", int(bport), context=ctx)
c.set_tunnel("api.test", int(port))
for i in range(3):  # one connection object: each request gets the header
    c.request("GET", "/echo", headers={"X-Api-Key": "client-fake"})
    r = c.getresponse()
    body = r.read().decode()
    assert r.status == 200 and f"X-Api-Key: {secret}" in body, body
    assert "client-fake" not in body, body
PYEOF
ok "curl and http.client (three requests of one connection object) through the interception"

# --- a host without inject: a plain tunnel ----------------------------------
out=$("$PY" "$UP" get "$S" plain.test "$P_PORT" "$TMPD/testca.pem" /echo \
	"X-Api-Key: client-own" 2>"$TMPD/issuer") || fail "tunnelled GET: $out"
echo "$out" | grep -qx "X-Api-Key: client-own" || fail "the tunnel changed the request: $out"
echo "$out" | grep -q "$SECRET" && fail "a secret went to a host without inject: $out"
grep -qx "issuer: 498-testca" "$TMPD/issuer" ||
	fail "a tunnelled host showed another certificate: $(cat "$TMPD/issuer")"
ok "a host without inject is tunnelled: its own certificate, the request untouched"

# --- an upstream that does not verify --------------------------------------
out=$("$PY" "$UP" get "$S" bad.test "$B_PORT" "$BUNDLE" /echo 2>&1)
echo "$out" | grep -q '^HTTP/1.1 502' || fail "an unverified upstream: $out"
echo "$out" | grep -q "bad.test:$B_PORT refused: .*certificate does not verify" ||
	fail "the 502 does not name the certificate: $out"
ok "an injected host whose certificate does not verify: 502 naming it"

kill -0 $PROXY || fail "the proxy died (its filter?)"
grep -q "egress: session s1 identity agent-a host api.test port $A_PORT allowed" \
	"$TMPD/proxy.log" || fail "no audit line of the intercepted connection"
grep -qF "$SECRET" "$TMPD/proxy.log" && fail "the secret is in the proxy's log"
grep -qF "$TOKEN" "$TMPD/proxy.log" && fail "the token is in the proxy's log"
grep -qF "$SECRET" /proc/$PROXY/cmdline && fail "the secret is in the proxy's argv"
ok "the proxy lives; audit lines; no secret in its log or argv"
exec 3>&-
wait $PROXY
PROXY=

# --- the daemon -------------------------------------------------------------
PORT=$(free_port)
printf '%s\n' "$SECRET" >"$TMPD/secret"
chmod 600 "$TMPD/secret"
CFG_EXTRA="kernel_network_mode: isolated
egress:
  allow: [api.test, plain.test, 127.0.0.2/32]
  hosts_file: $TMPD/hosts
  upstream_ca_file: $TMPD/testca.pem
  inject:
    - {host: api.test, header: X-Api-Key, secret_file: $TMPD/secret}"
write_config
start_daemon
wait_ready
pid=$(pgrep -f -- "^[^ ]*codeexecd --egress-proxy $TMPD/run/egress" | head -1)
[ -n "$pid" ] || fail "no egress proxy runs"
tr '\0' ' ' </proc/$pid/cmdline | grep -q "ca=$TMPD/run/egress/ca upstream_ca=$TMPD/testca.pem" ||
	fail "the proxy is not told to intercept: $(tr '\0' ' ' </proc/$pid/cmdline)"
wait_for 20 "a warm worker's proxy socket" sh -c "ls $TMPD/run/egress/*.sock >/dev/null 2>&1"
SOCK=$(ls "$TMPD"/run/egress/*.sock | head -1)
KEY=$TMPD/run/egress/ca/ca.key
[ "$(stat -c '%u %a' "$KEY")" = "$(stat -c %u /proc/$pid) 600" ] ||
	fail "ca.key: $(stat -c '%U %a' "$KEY"), not the proxy's user's 0600"
out=$("$PY" "$UP" get "$SOCK" api.test "$A_PORT" "$TMPD/run/$EGRESS_BUNDLE" /echo \
	"X-Api-Key: fake" 2>&1) || fail "through the daemon's proxy: $out"
echo "$out" | grep -qx "X-Api-Key: $SECRET" || fail "the daemon's proxy injected nothing: $out"
ok "the daemon: the proxy intercepts with the secret file's first line, the CA key its user's"

# The secret is the parent's and the proxy's: no front, worker, kernel or file has it.
front=$(front_pid)
[ -n "$front" ] || fail "no front"
ls -l /proc/$front/fd | grep -q codeexecd-secret && fail "the front holds a secret's copy"
for w in $(worker_pids); do
	for p in $w $(descendants $w); do
		grep -qaF "$SECRET" /proc/$p/environ 2>/dev/null &&
			fail "process $p ($(cat /proc/$p/comm)) has the secret in its environment"
	done
done
found=$(grep -rlaF "$SECRET" "$TMPD/run" "$TMPD/state" 2>/dev/null || true)
[ -z "$found" ] || fail "the secret is in $found"
grep -qF "$SECRET" "$TMPD/daemon.log" && fail "the secret is in the daemon's log"
ok "the secret: in no front descriptor, worker or kernel environment, runtime or state file, log"

# Kernels trust the bundle: SSL_CERT_FILE, REQUESTS_CA_BUNDLE, PIP_CERT.
kernel=
for w in $(worker_pids); do
	for p in $(descendants $w); do
		tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | grep -q ipykernel && kernel=$p
	done
done
[ -n "$kernel" ] || fail "no warm kernel to look at"
for v in SSL_CERT_FILE REQUESTS_CA_BUNDLE PIP_CERT; do
	tr '\0' '\n' </proc/$kernel/environ | grep -qx "$v=$TMPD/run/$EGRESS_BUNDLE" ||
		fail "the kernel's $v is not the bundle: $(tr '\0' '\n' </proc/$kernel/environ | grep "^$v=")"
done
ok "a kernel's SSL_CERT_FILE, REQUESTS_CA_BUNDLE and PIP_CERT name the CA bundle"

# An isolated kernel reads the bundle (its namespace binds back what its
# environment names), and nothing it can read holds the secret.
run_py "$URL" "$SECRET" "$(sed -n 2p "$TMPD/run/egress/ca/ca.pem")" <<'PYEOF' || fail "isolated kernel"
import sys
from mcp import Client
url, secret, ca_line = sys.argv[1:4]
c = Client(url)
c.initialize()
code = f"""
import os
b = open(os.environ["SSL_CERT_FILE"]).read()
print("has-ca" if {ca_line!r} in b else "no-ca")
print("leak" if {secret!r} in repr(dict(os.environ)) else "clean")
"""
r = c.execute(code, timeout=20)["structuredContent"]
out = r.get("stdout", "")
assert "has-ca" in out and "clean" in out, r
PYEOF
ok "an isolated kernel reads the CA bundle; its environment has no secret"
stop_daemon TERM
