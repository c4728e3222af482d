#!/bin/sh
# 494-egress-kernel-inject: egress.inject and the per-session limits, end to
# end from isolated kernels through their forwarders (issue 36). An HTTPS
# upstream with a test CA (egress.upstream_ca_file) is an injected host:
# requests and urllib in the kernel, trusting only what SSL_CERT_FILE and
# REQUESTS_CA_BUNDLE name, reach it, and the upstream receives the secret
# file's header (it answers only the header's SHA-256, so the kernel never
# sees the value), replacing one the kernel sent; a host without inject is
# tunnelled and gets no header. The secret is then in no byte the kernel can
# reach: its environment, /proc, the files of the runtime and state
# directories it may read, its output, and (searched by root from outside)
# no readable mapping of any kernel process. Limits, per session:
# egress.max_connections (a third connection while two are held is refused
# with 403 naming the key, another session is unaffected) and
# egress.max_bytes (a session past its bytes is refused with 403 naming the
# key, another session is unaffected).
. "$(dirname "$0")/lib.sh"

require_binaries
require_cmd openssl
require_py ipykernel requests
[ "$(id -u)" = 0 ] || skip "needs root: isolated kernels under kernel_uid_range"
setup_tmp
chmod 711 "$TMPD"
UP=$sysdir/egress_upstream.py
PORT=$(free_port)
API_PORT=$(free_port)
WEB_PORT=$(free_port)
SECRET="s3cr3t-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"

cat >"$TMPD/hosts" <<HOSTS
127.0.0.2   api.test web.test
HOSTS
chmod 644 "$TMPD/hosts"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj /CN=494-test-ca -keyout "$TMPD/ca.key" -out "$TMPD/ca.pem" >/dev/null 2>&1 ||
	fail "openssl: test CA"
for h in api.test web.test; do
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$h" \
		-keyout "$TMPD/$h.key" -out "$TMPD/$h.csr" >/dev/null 2>&1 || fail "openssl: csr $h"
	printf 'subjectAltName=DNS:%s\n' "$h" >"$TMPD/$h.san"
	openssl x509 -req -in "$TMPD/$h.csr" -CA "$TMPD/ca.pem" -CAkey "$TMPD/ca.key" \
		-CAcreateserial -days 2 -extfile "$TMPD/$h.san" -out "$TMPD/$h.pem" \
		>/dev/null 2>&1 || fail "openssl: sign $h"
done
chmod 644 "$TMPD"/*.pem "$TMPD"/*.key
printf '%s\n' "$SECRET" >"$TMPD/api.secret"
chmod 600 "$TMPD/api.secret"

"$PY" "$UP" serve 127.0.0.2 "$API_PORT" "$TMPD/api.test.pem" "$TMPD/api.test.key" &
UP1=$!
"$PY" "$UP" serve 127.0.0.2 "$WEB_PORT" "$TMPD/web.test.pem" "$TMPD/web.test.key" &
UP2=$!
cleanup_extra() {
	kill $UP1 $UP2 2>/dev/null
}

CFG_EXTRA="kernel_network_mode: isolated
kernel_uid_range: \"63780-63799\"
egress:
  allow: [api.test, web.test, 127.0.0.2/32]
  hosts_file: $TMPD/hosts
  upstream_ca_file: $TMPD/ca.pem
  max_connections: 2
  max_bytes: 400000
  inject:
    - host: api.test
      header: X-Api-Key
      secret_file: $TMPD/api.secret"
write_config
start_daemon
wait_ready

want=$(printf '%s' "$SECRET" | sha256sum | cut -d' ' -f1)
run_py "$URL" "$API_PORT" "$WEB_PORT" "$want" "$SECRET" "$TMPD/out" "$TMPD/ca.pem" <<'PYEOF' || fail "from the kernels"
import json, sys
from mcp import Client, check, ok, value_of
from calls import sc

url, ap, wp, want, secret, out_file, ca_file = sys.argv[1:8]
ca = open(ca_file).read()
a, b, c = Client(url), Client(url), Client(url)
for k in (a, b, c):
    k.initialize()
seen = []


def run(k, code, timeout=60):
    r = k.execute(code, timeout=timeout)
    seen.append(json.dumps(r))
    check(sc(r).get("success") is True, "ran: %s" % code.splitlines()[-1], r)
    return json.loads(eval(value_of(r)))


# web.test is tunnelled: its certificate is the test CA's, which the kernel
# is told of here; the injected host needs nothing but the kernel's bundle.
got = run(a, """import json, ssl, urllib.request, requests
r = requests.get("https://api.test:%s/auth", timeout=20).text
s = requests.get("https://api.test:%s/auth", headers={"X-Api-Key": "mine"}, timeout=20).text
u = urllib.request.urlopen("https://api.test:%s/auth", timeout=20).read().decode()
ctx = ssl.create_default_context(cadata=%r)
w = urllib.request.urlopen("https://web.test:%s/auth", context=ctx, timeout=20).read().decode()
json.dumps([r, s, u, w])""" % (ap, ap, ap, ca, wp))
check(got[0] == "auth %s\n" % want, "requests: the upstream got the secret file's header", got)
check(got[1] == "auth %s\n" % want, "the kernel's own X-Api-Key is replaced", got)
check(got[2] == "auth %s\n" % want, "urllib: the upstream got the header", got)
check(got[3] == "auth none\n", "a host without inject gets no header", got)
ok("requests and urllib reach the injected host with its header (the kernel's replaced); "
   "web.test gets none")

issuer = run(a, """import json, socket, ssl, os
ctx = ssl.create_default_context()
s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
s.sendall(b"CONNECT api.test:%s HTTP/1.1\\r\\nHost: api.test:%s\\r\\n\\r\\n")
head = b""
while b"\\r\\n\\r\\n" not in head:
    head += s.recv(1)
t = ctx.wrap_socket(s, server_hostname="api.test")
i = dict(x[0] for x in t.getpeercert()["issuer"])["commonName"]
t.close()
json.dumps([i, os.environ.get("SSL_CERT_FILE"), os.environ.get("REQUESTS_CA_BUNDLE")])""" % (ap, ap))
check(issuer[0] != "494-test-ca", "the kernel is shown the proxy's CA, not the upstream's", issuer)
check(issuer[1] and issuer[1] == issuer[2], "SSL_CERT_FILE and REQUESTS_CA_BUNDLE name the bundle",
      issuer)
ok("an intercepted connection shows the kernel a leaf of %s" % issuer[0])

# Where the kernel could look for the secret: everything it may read. The
# needle comes in two halves, never joined unless a file holds it, so that
# the search itself puts no copy of the secret in the kernel's memory.
h1, h2 = secret[:len(secret) // 2], secret[len(secret) // 2:]
look = run(a, """import json, os
h1, h2 = %r.encode(), %r.encode()
def holds(data):
    i = data.find(h1)
    while i != -1:
        if data[i + len(h1):i + len(h1) + len(h2)] == h2:
            return True
        i = data.find(h1, i + 1)
    return False
found = [k for k, v in os.environ.items() if holds(v.encode())]
for p in os.listdir("/proc"):
    for part in ("environ", "cmdline"):
        try:
            if holds(open("/proc/%%s/%%s" %% (p, part), "rb").read()):
                found.append("/proc/%%s/%%s" %% (p, part))
        except OSError:
            pass
skip = {"/proc", "/sys", "/dev", "/usr", "/lib", "/lib64", "/bin", "/sbin", "/boot"}
n = 0
for d, dirs, files in os.walk("/"):
    dirs[:] = [x for x in dirs if os.path.join(d, x) not in skip]
    for f in files:
        p = os.path.join(d, f)
        try:
            if os.path.isfile(p) and os.path.getsize(p) < (1 << 22):
                n += 1
                if holds(open(p, "rb").read()):
                    found.append(p)
        except OSError:
            pass
json.dumps([found, n])""" % (h1, h2), timeout=300)
check(look[0] == [], "the secret is in no environment, /proc entry or file the kernel reads", look)
check(look[1] > 100, "the kernel read files (%d)" % look[1], look)
ok("the secret is in none of %d files, no environment and no /proc entry the kernel reads" % look[1])

# The limits, from kernels: two tunnels held, a third refused; then bytes.
TUNNEL = r"""import socket
def tunnel(host, port):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
    s.sendall(b"CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n" % ((host.encode(), port.encode()) * 2))
    head = b""
    while b"\r\n\r\n" not in head:
        d = s.recv(1)
        if not d:
            break
        head += d
    return s, head.decode(errors="replace")
"""
conns = run(b, TUNNEL + """import json
held = [tunnel("web.test", %r) for _ in range(2)]
third = tunnel("web.test", %r)
held[0][0].close()
import time
time.sleep(1)
fourth = tunnel("web.test", %r)
for k in (held[1][0], third[0], fourth[0]):
    k.close()
json.dumps([h for _, h in held] + [third[1], fourth[1]])""" % (wp, wp, wp))
check(all(h.startswith("HTTP/1.1 200") for h in conns[:2]), "two tunnels are held", conns)
check(conns[2].startswith("HTTP/1.1 403") and "egress.max_connections" in conns[2],
      "a third at once is refused with 403 naming egress.max_connections", conns)
check(conns[3].startswith("HTTP/1.1 200"), "once one is closed, another connects", conns)
other = run(c, TUNNEL + """import json
held = [tunnel("web.test", %r) for _ in range(2)]
for k, _ in held:
    k.close()
json.dumps([h for _, h in held])""" % wp)
check(all(h.startswith("HTTP/1.1 200") for h in other), "another session holds its own two", other)
ok("egress.max_connections: a session's third tunnel at once refused; another session's two pass")

# requests does not check a body's length: a cut answer is a short 200.
spent = run(c, """import json, requests
open("ca.pem", "w").write(%r)
out = []
for i in range(2):
    r = requests.get("https://web.test:%s/big", verify="ca.pem", timeout=20)
    out.append("%%d %%d" %% (r.status_code, len(r.content)))
s, head = tunnel("web.test", %r)
s.close()
out.append(head)
json.dumps(out)""" % (ca, wp, wp), timeout=120)
check(spent[0] == "200 300000", "the first 300 kB pass", spent)
check(spent[1] != "200 300000", "the second is cut at egress.max_bytes", spent)
check(spent[2].startswith("HTTP/1.1 403") and "egress.max_bytes" in spent[2],
      "a session past its bytes is refused with 403 naming egress.max_bytes", spent)
fresh = run(b, """import json, requests
open("ca.pem", "w").write(%r)
json.dumps(requests.get("https://web.test:%s/big", verify="ca.pem", timeout=20).status_code)""" % (ca, wp))
check(fresh == 200, "another session still has its bytes", fresh)
ok("egress.max_bytes: %s; another session unaffected" % "; ".join(spent))
open(out_file, "w").write("\n".join(seen))
PYEOF

# Outside the kernels: the secret in no kernel's memory (root reads every
# readable mapping of every kernel process), in no answer, not in the log.
# The search's control: the digest the kernel was answered is found.
scanned=0 control=0
for pid in $(descendants "$DAEMON_PID"); do
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q ipykernel || continue
	"$PY" "$sysdir/memsearch.py" "$pid" "$SECRET" || fail "the secret is in kernel $pid's memory"
	"$PY" "$sysdir/memsearch.py" "$pid" "$want" >/dev/null || control=$((control + 1))
	scanned=$((scanned + 1))
done
[ "$scanned" -ge 3 ] || fail "$scanned kernel processes searched, not the three sessions'"
[ "$control" -ge 1 ] || fail "the search finds not even the digest a kernel holds"
! grep -qF "$SECRET" "$TMPD/out" || fail "the secret is in an answer to the kernel's calls"
! grep -qF "$SECRET" "$TMPD/daemon.log" || fail "the secret is in the log"
ok "the secret is in no readable mapping of $scanned kernel processes, no answer, not the log"
grep -q "egress: session .* host api.test port $API_PORT allowed" "$TMPD/daemon.log" ||
	{ grep 'egress:' "$TMPD/daemon.log" | tail -n 20; fail "no audit line for api.test"; }
ok "the audit log has the intercepted connections"
stop_daemon TERM
