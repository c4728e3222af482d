#!/bin/sh
# 499-egress-kernel: isolated kernels reach the egress proxy (issue 36
# stage 4). Each kernel's network namespace has a forwarder on
# 127.0.0.1:3128 (outside the kernel's pid and mount namespaces, no
# capability, no_new_privs) relaying to its worker's proxy socket, which
# the parent makes as the kernel's uid, mode 0600; HTTP_PROXY, HTTPS_PROXY
# and PIP_PROXY name it. From the kernels, against loopback upstreams named
# in egress.hosts_file: plain HTTP with urllib and requests, HTTPS tunnelled
# (CONNECT) to a host with a test CA, pip and py_install_packages from an
# allowed index serving a wheel built here; refused with 403 naming the rule:
# an IP literal, the metadata address, a name resolving to loopback, a
# denied name, an index not allowed. Around the proxy: a direct connection
# to the upstream, DNS, a raw socket and the proxy sockets' directory all
# fail; a kernel sees neither its forwarder nor another's socket. The audit
# log names each connection with its MCP session and identity, and /metrics
# counts them by rule and outcome.
. "$(dirname "$0")/lib.sh"

require_binaries
require_cmd openssl
require_cmd curl
require_py ipykernel pip setuptools wheel requests
[ "$(id -u)" = 0 ] || skip "needs root: isolated kernels under kernel_uid_range"
setup_tmp
chmod 711 "$TMPD"
UP=$sysdir/egress_upstream.py
PORT=$(free_port)
HTTP_PORT=$(free_port)
TLS_PORT=$(free_port)
IDX_PORT=$(free_port)

cat >"$TMPD/hosts" <<HOSTS
# test names of 499
127.0.0.2   web.test secure.test pypi.test other.test bad.web.test
127.0.0.1   rebind.test
HOSTS
chmod 644 "$TMPD/hosts"

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=499-test-ca \
	-keyout "$TMPD/ca.key" -out "$TMPD/ca.pem" >/dev/null 2>&1 || fail "openssl: test CA"
openssl req -newkey rsa:2048 -nodes -subj /CN=secure.test -keyout "$TMPD/tls.key" \
	-out "$TMPD/tls.csr" >/dev/null 2>&1 || fail "openssl: csr"
printf 'subjectAltName=DNS:secure.test\n' >"$TMPD/san"
openssl x509 -req -in "$TMPD/tls.csr" -CA "$TMPD/ca.pem" -CAkey "$TMPD/ca.key" \
	-CAcreateserial -days 2 -extfile "$TMPD/san" -out "$TMPD/tls.pem" >/dev/null 2>&1 ||
	fail "openssl: sign"

# The index: PEP 503's simple layout over a wheel built here.
mkdir -p "$TMPD/src/tinyegress" "$TMPD/index/simple/tinyegress" "$TMPD/index/files"
printf 'VALUE = "through the proxy"\n' >"$TMPD/src/tinyegress/tinyegress.py"
printf 'from setuptools import setup\nsetup(name="tinyegress", version="1.0", py_modules=["tinyegress"])\n' \
	>"$TMPD/src/tinyegress/setup.py"
(cd "$TMPD/src/tinyegress" && "$PY" -m pip wheel --no-deps --no-build-isolation --no-index \
	-w "$TMPD/index/files" . >"$TMPD/wheel.log" 2>&1) ||
	fail "pip wheel: $(tail -n 5 "$TMPD/wheel.log")"
whl=$(cd "$TMPD/index/files" && ls tinyegress-1.0-*.whl)
printf '<html><body><a href="../../files/%s">%s</a></body></html>\n' "$whl" "$whl" \
	>"$TMPD/index/simple/tinyegress/index.html"

"$PY" "$UP" serve 127.0.0.2 "$HTTP_PORT" &
UP1=$!
"$PY" "$UP" serve 127.0.0.2 "$TLS_PORT" "$TMPD/tls.pem" "$TMPD/tls.key" &
UP2=$!
"$PY" -m http.server --bind 127.0.0.2 --directory "$TMPD/index" "$IDX_PORT" \
	>"$TMPD/index.log" 2>&1 &
UP3=$!
cleanup_extra() {
	kill $UP1 $UP2 $UP3 2>/dev/null
}

CFG_EXTRA="kernel_network_mode: isolated
kernel_uid_range: \"63760-63779\"
kernel_environment:
  PIP_INDEX_URL: http://pypi.test:$IDX_PORT/simple
  PIP_TRUSTED_HOST: pypi.test other.test
egress:
  allow: [web.test, secure.test, pypi.test, rebind.test, bad.web.test, 127.0.0.2/32]
  deny: [bad.web.test]
  hosts_file: $TMPD/hosts"
write_config
start_daemon
wait_ready

run_py "$URL" "$HTTP_PORT" "$TLS_PORT" "$IDX_PORT" "$TMPD/ca.pem" "$TMPD/run" "$TMPD/sid" <<'PYEOF' || fail "from the kernels"
import json, sys
from mcp import Client, check, ok, value_of
from calls import tool, sc

url, hp, tp, ip, ca_file, rundir, sid_file = sys.argv[1:8]
ca = open(ca_file).read()
a, b = Client(url), Client(url)
a.initialize()
b.initialize()
open(sid_file, "w").write(a.session_id)


def run(c, code):
    r = c.execute(code)
    check(sc(r).get("success") is True, "ran: %s" % code.splitlines()[-1], r)
    return json.loads(eval(value_of(r)))


env = run(a, "import os, json\njson.dumps({k: os.environ.get(k) for k in "
             "('HTTP_PROXY', 'HTTPS_PROXY', 'PIP_PROXY', 'NO_PROXY')})")
check(env["HTTP_PROXY"] == env["HTTPS_PROXY"] == env["PIP_PROXY"] == "http://127.0.0.1:3128",
      "the proxy variables name the forwarder", env)
ok("the kernel's environment names http://127.0.0.1:3128")

got = run(a, """import json, ssl, urllib.request, requests
ctx = ssl.create_default_context(cadata=%r)
u = urllib.request.urlopen("http://web.test:%s/", timeout=20).read().decode()
t = urllib.request.urlopen("https://secure.test:%s/", context=ctx, timeout=20).read().decode()
r = requests.get("http://web.test:%s/echo", timeout=20).text
json.dumps([u, t, r])""" % (ca, hp, tp, hp))
check(got[0] == "upstream ok\n", "urllib, plain HTTP through the proxy", got)
check(got[1] == "upstream ok\n", "urllib, HTTPS tunnelled to a host of the test CA", got)
check(got[2].startswith("GET /echo HTTP/1.1") and ("Host: web.test:%s" % hp) in got[2],
      "requests reaches the upstream with the URI's host", got)
ok("urllib (HTTP and a CONNECT tunnel) and requests reach the allowed hosts")

refused = run(a, """import json, urllib.request, urllib.error
out = {}
for name, u in [("literal", "http://127.0.0.3:%s/"), ("metadata", "http://169.254.169.254/latest/"),
                ("rebind", "http://rebind.test:%s/"), ("denied", "http://bad.web.test:%s/"),
                ("no rule", "http://other.test:%s/")]:
    try:
        urllib.request.urlopen(u, timeout=20)
        out[name] = "reached"
    except urllib.error.HTTPError as e:
        out[name] = "%%d %%s" %% (e.code, e.read().decode(errors="replace").strip())
json.dumps(out)""" % (hp, hp, hp, hp))
for name, v in refused.items():
    check(v.startswith("403 "), "%s: refused with 403" % name, refused)
check("deny bad.web.test" in refused["denied"], "the denied name's refusal names the rule", refused)
ok("refused with 403 naming why: %s" % "; ".join("%s: %s" % kv for kv in refused.items()))

around = run(a, """import json, os, socket
out = {}
def attempt(name, f):
    try:
        f()
        out[name] = "worked"
    except OSError as e:
        out[name] = type(e).__name__ + ": " + str(e)
attempt("direct", lambda: socket.create_connection(("127.0.0.2", %s), timeout=3))
attempt("dns", lambda: socket.getaddrinfo("web.test", 80))
attempt("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP))
attempt("sockets", lambda: os.listdir(%r))
out["procs"] = sorted(open("/proc/%%s/comm" %% p).read().strip() for p in os.listdir("/proc") if p.isdigit())
json.dumps(out)""" % (hp, rundir + "/egress"))
for name in ("direct", "dns", "raw", "sockets"):
    check(around[name] != "worked", "%s: fails around the proxy" % name, around)
check("codeexec-egress" not in around["procs"], "the kernel does not see its forwarder", around)
ok("around the proxy: %s" % "; ".join("%s: %s" % (k, around[k]) for k in
                                      ("direct", "dns", "raw", "sockets")))

r = tool(a, "py_install_packages", {"packages": ["tinyegress"]})
check(sc(r).get("success") is True, "py_install_packages from the allowed index", r)
check(run(a, "import json, tinyegress\njson.dumps(tinyegress.VALUE)") == "through the proxy",
      "the package installed through the proxy imports", r)
r = b.execute("%%pip install --index-url http://other.test:%s/simple tinyegress" % ip)
out = (sc(r).get("stdout") or "") + (sc(r).get("stderr") or "")
check("Successfully installed" not in out and "No matching distribution" in out,
      "%pip from an index no rule allows finds nothing", out[-2000:])
ok("py_install_packages from pypi.test; %pip from other.test refused")
PYEOF

# The host's side: one socket per worker, its kernel's uid's, 0600; the
# forwarders hold no capability.
for s in "$TMPD"/run/egress/*.sock; do
	[ "$(stat -c %a "$s")" = 600 ] || fail "$s: mode $(stat -c %a "$s")"
	u=$(stat -c %u "$s")
	[ "$u" -ge 63760 ] && [ "$u" -le 63779 ] || fail "$s: owner $u, not a kernel uid"
done
n=0
# A forwarder may end between pgrep and the read (its kernel's did).
for p in $(pgrep -x codeexec-egress); do
	st=$(cat /proc/$p/status 2>/dev/null) || continue
	n=$((n + 1))
	echo "$st" | grep -q '^CapEff:[[:space:]]*0000000000000000' || fail "forwarder $p has capabilities"
	echo "$st" | grep -q '^CapBnd:[[:space:]]*0000000000000000' || fail "forwarder $p keeps a bounding set"
	echo "$st" | grep -q '^NoNewPrivs:[[:space:]]*1' || fail "forwarder $p: no no_new_privs"
done
[ "$n" -ge 2 ] || fail "$n forwarders, not one per kernel"
ok "each worker's socket is its kernel's uid's, mode 0600; $n forwarders, no capability"

SID=$(cat "$TMPD/sid")
grep -q "egress: session $SID identity anonymous host web.test port $HTTP_PORT allowed" "$TMPD/daemon.log" ||
	{ grep 'egress:' "$TMPD/daemon.log" | tail -n 20; fail "no audit line for web.test"; }
grep -q "egress: session .* host bad.web.test port [0-9]* denied rule \"deny bad.web.test\"" "$TMPD/daemon.log" ||
	{ grep 'egress:' "$TMPD/daemon.log" | tail -n 20; fail "no audit line for the denied name"; }
grep -q "egress: session .* host other.test port $IDX_PORT denied rule \"default deny" "$TMPD/daemon.log" ||
	{ grep 'egress:' "$TMPD/daemon.log" | tail -n 20; fail "pip's request to other.test not refused by the proxy"; }
ok "the audit log names the kernels' connections by MCP session and identity, pip's refused one to other.test too"
# /metrics: each connection counted under the rule that decided it.
counted() {
	curl -s "$BASE/metrics" >"$TMPD/metrics.txt" &&
		grep -q '^codeexecd_egress_connections_total{rule="deny bad.web.test",outcome="denied"} 1$' "$TMPD/metrics.txt" &&
		grep -q '^codeexecd_egress_connections_total{rule="allow web.test",outcome="allowed"} [1-9]' "$TMPD/metrics.txt" &&
		grep -q '^codeexecd_egress_connections_total{rule="default deny (no allow rule names the host)",outcome="denied"} [1-9]' "$TMPD/metrics.txt"
}
poll_until 10 counted ||
	{ grep egress "$TMPD/metrics.txt"; fail "egress counts on /metrics"; }
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$TMPD/metrics.txt" >"$TMPD/promtool.out" 2>&1 ||
		{ cat "$TMPD/promtool.out"; fail "promtool check metrics refuses the page"; }
fi
ok "/metrics counts the connections by rule and outcome: $(grep -c '^codeexecd_egress_connections_total' "$TMPD/metrics.txt") series"
stop_daemon TERM
