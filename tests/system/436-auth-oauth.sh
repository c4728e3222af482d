#!/bin/sh
# 436-auth-oauth: auth.mode oauth against a loopback issuer. The
# test makes a CA, the issuer's certificate and its signing keys (openssl
# genpkey: RSA 2048 and EC P-256) and serves the OpenID configuration and
# the JWKS over https (authlib.py); the daemon trusts the CA through
# auth.ca_file and discovers the JWKS address from the issuer. Over real
# HTTP, each case of the attack matrix gets its exact status: valid RS256
# and ES256 tokens 200; expired, nbf in the future, wrong iss, another
# resource's aud, a bad signature, alg none, HS256 signed with the RSA
# public key, an unknown kid, extra segments, bad base64url 401
# invalid_token; a missing scope 403 insufficient_scope; a 1 MB token 400
# (civetweb's request size); a token in the query string 400; another
# identity's token on a session 404. Key rotation: a minute after the last fetch, a token of a new key
# makes the daemon fetch the JWKS once and is accepted; a key since removed,
# or unknown, is refused without a second fetch. The official TypeScript
# SDK client runs code with a bearer token and, without one, follows the
# 401's metadata address to the issuer. Last, no token and no key material
# appears in the daemon's log.
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
PYTHONPATH=$sysdir "$PY" "$sysdir/authlib.py" serve "$ISSUER_DIR" "$IPORT" \
	>"$TMPD/issuer.log" 2>&1 &
ISSUER_PID=$!
stop_issuer() {
	if [ -n "$ISSUER_PID" ]; then
		kill "$ISSUER_PID" 2>/dev/null
		wait "$ISSUER_PID" 2>/dev/null || true
	fi
	ISSUER_PID=
}
wait_for 20 "the test issuer on $ISS" \
	curl -sf --cacert "$ISSUER_DIR/ca.pem" -o /dev/null "$ISS/jwks.json"
# Only what the daemon reads is open to its user: the CA certificate.
chmod 755 "$ISSUER_DIR"
chmod 644 "$ISSUER_DIR/ca.pem"
: >"$ISSUER_DIR/requests.log"

CFG_EXTRA="auth:
  mode: oauth
  issuer: $ISS
  required_scopes: [mcp.run]
  ca_file: $ISSUER_DIR/ca.pem"
write_config
start_daemon
wait_ready
grep -q "auth: JWKS of $ISS read: 2 keys, 0 skipped" "$TMPD/daemon.log" ||
	fail "the daemon did not read the issuer's two keys at start-up"
ok "the JWKS was discovered through $ISS/.well-known/openid-configuration and read"

PYTHONPATH=$sysdir "$PY" - "$URL" "$ISS" "$ISSUER_DIR" "$PORT" "$TMPD/tokens-used" <<'EOF2' ||
import http.client, json, sys, time
from mcp import Client, check, ok, value_of
import authlib

url, iss, d, port, used = sys.argv[1:6]
aud = url
t_start = time.time()
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "t", "version": "0"}}})
tokens = []
fetched = authlib.fetches(d)  # the daemon's own, at start-up

def post(auth=None, path="/mcp", extra=None):
    """POST initialize; (status, WWW-Authenticate, body)."""
    c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=30)
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if auth is not None:
        h["Authorization"] = auth
    h.update(extra or {})
    try:
        c.request("POST", path, INIT, h)
        r = c.getresponse()
        return r.status, r.getheader("WWW-Authenticate") or "", r.read().decode()
    finally:
        c.close()

def tok(**kw):
    t = authlib.token(d, iss, aud, **kw)
    tokens.append(t)
    return t

meta = "http://127.0.0.1:%s/.well-known/oauth-protected-resource/mcp" % port
good = tok()
st, www, _ = post("Bearer " + good)
check(st == 200, "a valid RS256 token: 200 (got %d %s)" % (st, www))
st, _, _ = post("Bearer " + tok(alg="ES256", kid="ec1", key="ec1"))
check(st == 200, "a valid ES256 token: 200")
ok("valid RS256 and ES256 tokens: 200")

sig_flipped = good[:-4] + ("AAAA" if not good.endswith("AAAA") else "BBBB")
h, p, s = good.split(".")
cases = [
    ("no token", None, 401, None),
    ("expired", "Bearer " + tok(exp_in=-300, nbf_in=-900), 401, "invalid_token"),
    ("nbf in the future", "Bearer " + tok(nbf_in=600), 401, "invalid_token"),
    ("wrong iss", "Bearer " + authlib.token(d, iss + "/", aud), 401, "invalid_token"),
    ("aud of another resource", "Bearer " + authlib.token(d, iss, "http://127.0.0.1:1/mcp"),
     401, "invalid_token"),
    ("missing scope", "Bearer " + tok(scope="mcp.read"), 403, "insufficient_scope"),
    ("bad signature", "Bearer " + sig_flipped, 401, "invalid_token"),
    ("alg none", "Bearer " + tok(alg="none"), 401, "invalid_token"),
    ("HS256 signed with the RSA public key", "Bearer " + tok(alg="HS256"), 401,
     "invalid_token"),
    ("a kid not in the JWKS", "Bearer " + tok(kid="rsa9", key="rsa2"), 401, "invalid_token"),
    ("extra segments", "Bearer %s.%s" % (good, s), 401, "invalid_token"),
    ("a JWE-like five segments", "Bearer %s.%s.%s" % (good, s, s), 401, "invalid_token"),
    ("padding in a part", "Bearer %s==.%s.%s" % (h, p, s), 401, "invalid_token"),
    ("base64, not base64url", "Bearer %s.%s.%s" % (h, p, s.replace("-", "+").replace("_", "/") + "+/"),
     401, "invalid_token"),
    ("not JSON", "Bearer bm90IGpzb24.%s.%s" % (p, s), 401, "invalid_token"),
    ("Basic credentials", "Basic YWxpY2U6c2VjcmV0", 401, None),
]
for what, auth, want, err in cases:
    st, www, body = post(auth)
    check(st == want, "%s: HTTP %d, want %d (%s)" % (what, st, want, body[:200]))
    check(www.startswith('Bearer resource_metadata="%s"' % meta),
          "%s: WWW-Authenticate names the metadata (%s)" % (what, www))
    if err:
        check('error="%s"' % err in www, "%s: error=\"%s\" (%s)" % (what, err, www))
    else:
        check("error=" not in www, "%s: no error code (%s)" % (what, www))
    # Every 401 and 403 names the scope a token needs (MCP authorization).
    check('scope="mcp.run"' in www, "%s: the scope needed is named (%s)" % (what, www))
    ok("%s: %d %s" % (what, want, err or ""))

# 1 MB of token: civetweb refuses headers beyond its request size first.
# It may answer and close while the client still sends: then the client
# sees a broken pipe or a reset, and the 400 may be lost with the
# connection. Either way the token must not be taken: read what came.
def post_huge(auth):
    import socket
    k = socket.create_connection(("127.0.0.1", int(port)), timeout=30)
    req = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nAuthorization: %s\r\n"
           "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
           % (port, auth, len(INIT), INIT)).encode()
    try:
        k.sendall(req)
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        return k.recv(4096).decode(errors="replace")
    except ConnectionResetError:
        return ""
    finally:
        k.close()

answer = post_huge("Bearer " + "A" * (1 << 20))
check(answer == "" or answer.split(" ")[1:2] == ["400"],
      "a 1 MB token: refused with 400 or a closed connection, got %r" % answer[:100])
st, _, _ = post("Bearer " + good)
check(st == 200, "the daemon serves after the 1 MB token")
ok("a 1 MB token: %s" % (answer.split("\r\n")[0] or "connection closed before the answer"))
# In the query string: refused, and no session is made.
st, www, _ = post(None, "/mcp?access_token=" + good)
check(st == 400 and 'error="invalid_request"' in www, "a token in the query string: 400")
ok("a token in the query string: 400 invalid_request")
# Odd spacing and case of the scheme.
st, _, _ = post("bEaReR   " + good)
check(st == 200, "'bEaReR' and three spaces: 200")
ok("the scheme in mixed case with three spaces: 200")

# Identities: bob's token on alice's session finds nothing.
alice = Client(url, token=good)
alice.initialize()
check(value_of(alice.execute("import os\nos.environ['USER_IDENTITY']")) == "'alice'",
      "alice's kernel has USER_IDENTITY alice")
bob_tok = tok(sub="bob")
bob = Client(url, token=bob_tok)
bob.session_id = alice.session_id
r = bob.request("tools/list")
check(r.status == 404, "bob's token on alice's session: 404")
check(alice.result("tools/list") is not None, "alice's session still answers")
ok("another identity's token on a session: 404")

# --- key rotation ---------------------------------------------------------
# The issuer drops rsa1 and publishes rsa2. The JWKS was last fetched at
# start-up; an unknown kid refetches at most once a minute.
before = authlib.fetches(d)
check(fetched == 1 and before == 1,
      "one JWKS fetch at start-up, none for the unknown kid within the minute (%d)" % before)
authlib.write_jwks(d, [("rsa", "rsa2"), ("ec", "ec1")])
time.sleep(max(0, t_start + 62 - time.time()))
st, www, _ = post("Bearer " + tok(kid="rsa2", key="rsa2"))
check(st == 200, "a token of the new key rsa2: 200 (%s)" % www)
check(authlib.fetches(d) == before + 1, "one JWKS fetch for the new kid")
ok("key rotation: a token of the new key made one JWKS fetch and is accepted")
st, www, _ = post("Bearer " + tok())
check(st == 401 and 'error="invalid_token"' in www, "a token of the removed key rsa1: 401")
st, www, _ = post("Bearer " + tok(kid="rsa7", key="rsa2"))
check(st == 401, "an unknown kid after the refresh: 401")
check(authlib.fetches(d) == before + 1, "no second fetch within the minute")
ok("a removed key and an unknown kid: 401, with no second fetch within a minute")

with open(used, "w") as f:
    f.write("\n".join(tokens) + "\n")
EOF2
	{ stop_issuer; fail "the oauth checks failed"; }

# --- the official TypeScript SDK client ---------------------------------------
# Its script lives in this tree; node_modules may live elsewhere.
require_client
require_node 18
mkdir "$TMPD/client"
cp "$sysdir/../client/common.mjs" "$sysdir/../client/sdk-auth-client.mjs" "$TMPD/client/"
ln -s "$CLIENT_DIR/node_modules" "$TMPD/client/node_modules"
SDK_TOKEN=$(PYTHONPATH=$sysdir "$PY" -c 'import sys, authlib
print(authlib.token(sys.argv[1], sys.argv[2], sys.argv[3], kid="rsa2", key="rsa2"))' \
	"$ISSUER_DIR" "$ISS" "$URL")
echo "$SDK_TOKEN" >>"$TMPD/tokens-used"
NODE_EXTRA_CA_CERTS=$ISSUER_DIR/ca.pem "$NODE" "$TMPD/client/sdk-auth-client.mjs" \
	"$URL" "$SDK_TOKEN" "$ISS" py || { stop_issuer; fail "the SDK client failed"; }
ok "the official TypeScript SDK client: runs code with a bearer token, follows the 401 without"

# --- no token or key material in the log ----------------------------------------
stop_daemon
stop_issuer
n=0
while read -r t; do
	[ -n "$t" ] || continue
	n=$((n + 1))
	# The signature part alone, and the whole token.
	for s in "$t" "${t##*.}"; do
		[ -n "$s" ] || continue # alg none: no signature
		grep -qF -- "$s" "$TMPD/daemon.log" && fail "token $n (or its signature) is in the log"
	done
done <"$TMPD/tokens-used"
[ "$n" -gt 10 ] || fail "only $n tokens were checked"
PYTHONPATH=$sysdir "$PY" - "$ISSUER_DIR" >"$TMPD/key-material" <<'EOF3'
import sys, authlib
d = sys.argv[1]
for name in ("rsa1", "rsa2"):
    print(authlib.rsa_jwk(d + "/" + name + ".pem", name)["n"][:40])
k = authlib.ec_jwk(d + "/ec1.pem", "ec1")
print(k["x"][:40])
print(k["y"][:40])
EOF3
while read -r m; do
	grep -qF -- "$m" "$TMPD/daemon.log" && fail "key material ($m...) is in the log"
done <"$TMPD/key-material"
ok "no token and no key material in the daemon's log ($n tokens, 4 key values checked)"
