#!/bin/sh
# 531-sidecar-socket: socket: true serves a sidecar on a Unix socket that
# kernels whose network cannot reach the host's loopback use.
# In kernel_network_mode isolated the TCP URL is refused (seed
# 000) and $MODEL_URL_SOCKET answers; in inherit both work; in seccomp,
# where connect() stays refused (the socket's path included), the kernel
# inherits a connection to the relay's broker, $MODEL_URL_SOCKET_FD, and
# receives a connection per request from it. Probes from the restricted
# kernels show that nothing else of the host became reachable: the
# relay reaches only its sidecar (an absolute URL for the daemon's own
# port still lands there), the daemon's port and a host listener stay
# refused, the control socket stays closed, and runtime_dir/sidecars holds
# the sidecar's socket and its broker alone.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: isolated kernels run as codeexecd"
unshare -U -n true 2>/dev/null || skip "this host refuses user and network namespaces"
setup_tmp
PORT=$(free_port)

cat >"$TMPD/echo_server.py" <<'EOF2'
"""A sidecar for the test: says who it is and what it was asked."""
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"sidecar": True, "path": self.path, "pid": os.getpid()}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        pass


ThreadingHTTPServer((os.environ["SIDECAR_HOST"], int(os.environ["SIDECAR_PORT"])),
                    Handler).serve_forever()
EOF2
chmod 644 "$TMPD/echo_server.py"

# A host service no kernel should reach: a TCP listener on loopback.
OTHER=$(free_port)
"$PY" -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8); time.sleep(600)' "$OTHER" &
OTHER_PID=$!
trap 'r=$?; set +e; kill $OTHER_PID 2>/dev/null; (exit $r); cleanup' EXIT

for mode in inherit isolated seccomp; do
	CFG_EXTRA="kernel_network_mode: $mode
sidecars:
  - name: model
    command: [$TMPD/echo_server.py]
    url_env_var: MODEL_URL
    socket: true"
	write_config
	start_daemon
	wait_ready
	SOCK=$TMPD/run/sidecars/model.sock
	[ -S "$SOCK" ] || fail "$mode: no socket at $SOCK"
	ok "$mode: relay socket $(stat -c '%A %U' "$SOCK") $SOCK"
	run_py "$URL" "$mode" "$PORT" "$OTHER" "$TMPD" <<'EOF2' || fail "$mode: the probes failed"
import json, sys
from mcp import Client, check, ok
from calls import sc
url, mode, port, other, tmpd = sys.argv[1:6]
c = Client(url)
c.initialize()
probe = r'''
import http.client, json, os, socket
out = {}
def connection():
    if "MODEL_URL_SOCKET" in os.environ:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(os.environ["MODEL_URL_SOCKET"])
        return s
    # seccomp: no connect() at all; the inherited broker hands out connections.
    b = socket.socket(fileno=os.dup(int(os.environ["MODEL_URL_SOCKET_FD"])))
    b.send(b"c")
    msg, fds, flags, addr = socket.recv_fds(b, 1, 1)
    b.close()
    return socket.socket(fileno=fds[0])
def unix_get(target):
    conn = http.client.HTTPConnection("sidecar")
    conn.sock = connection()
    conn.request("GET", target)
    return json.loads(conn.getresponse().read())
out["vars"] = sorted(k for k in os.environ if k.startswith("MODEL_URL"))
try:
    out["unix"] = unix_get("/predict")
except Exception as e:
    out["unix"] = "error: %r" % e
# An absolute URL for the daemon's own port: the relay goes to its sidecar only.
try:
    out["absolute"] = unix_get("http://127.0.0.1:PORT/health")
except Exception as e:
    out["absolute"] = "error: %r" % e
# The socket's path itself (seccomp: refused like every connect).
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(TMPD + "/run/sidecars/model.sock")
    out["path"] = "connected"
except Exception as e:
    out["path"] = "refused: " + type(e).__name__
def tcp(host, p):
    try:
        socket.create_connection((host, int(p)), timeout=3).close()
        return "connected"
    except Exception as e:
        return "refused: " + type(e).__name__
u = os.environ["MODEL_URL"].rsplit(":", 1)
out["tcp_sidecar"] = tcp(u[0][len("http://"):], u[1])
out["tcp_daemon"] = tcp("127.0.0.1", PORT)
out["tcp_other"] = tcp("127.0.0.1", OTHER)
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(TMPD + "/run/control/codeexecd.sock")
    out["control"] = "connected"
except Exception as e:
    out["control"] = "refused: " + type(e).__name__
try:
    out["listing"] = os.listdir(os.path.dirname(os.environ["MODEL_URL_SOCKET"]))
except Exception as e:
    out["listing"] = "refused: " + type(e).__name__
# The sidecar and its relay have the host's network: no kernel may write
# into them through /proc/PID/mem (same uid, but not the same group).
out["mem"] = {}
for d in filter(str.isdigit, os.listdir("/proc")):
    try:
        cmd = open("/proc/%s/cmdline" % d, "rb").read()
    except OSError:
        continue
    who = "sidecar" if b"echo_server.py" in cmd else "relay" if b"sidecar-relay" in cmd else None
    if who is None or os.getpid() == int(d):
        continue
    try:
        open("/proc/%s/mem" % d, "r+b").close()
        out["mem"][who] = "opened"
    except OSError as e:
        out["mem"][who] = "refused: " + type(e).__name__
print(json.dumps(out))
'''.replace("PORT", port).replace("OTHER", other).replace("TMPD", repr(tmpd))
r = c.execute(probe)
check(sc(r).get("success") is True, "%s: the probe ran" % mode, r)
out = json.loads(sc(r)["stdout"])
print("# %s: %s" % (mode, json.dumps(out)))
check(isinstance(out["unix"], dict) and out["unix"]["sidecar"] and out["unix"]["path"] == "/predict",
      "%s: the Unix socket reaches the sidecar" % mode, out)
check(isinstance(out["absolute"], dict) and out["absolute"]["sidecar"],
      "%s: an absolute URL through the relay still reaches only the sidecar" % mode, out)
if mode != "inherit":
    check(out["tcp_sidecar"].startswith("refused"), "%s: the TCP URL is refused" % mode, out)
    check(out["tcp_daemon"].startswith("refused"), "%s: the daemon's port is refused" % mode, out)
    check(out["tcp_other"].startswith("refused"), "%s: a host listener is refused" % mode, out)
if mode == "isolated":
    check(out["mem"] == {}, "isolated: the sidecar and relay are not even seen", out)
else:
    check(sorted(out["mem"]) == ["relay", "sidecar"] and
          all(v.startswith("refused") for v in out["mem"].values()),
          "%s: the sidecar's and relay's /proc/PID/mem stay closed" % mode, out)
if mode == "seccomp":
    check(out["vars"] == ["MODEL_URL", "MODEL_URL_SOCKET_FD"],
          "seccomp: the kernel gets the broker, not a path it cannot connect to", out)
    check(out["path"].startswith("refused"), "seccomp: connect() stays refused, "
          "the relay's own path included", out)
else:
    check(out["vars"] == ["MODEL_URL", "MODEL_URL_SOCKET"], "%s: the socket's path" % mode, out)
if mode == "inherit":
    check(out["tcp_sidecar"] == "connected", "inherit: the TCP URL works", out)
check(out["control"].startswith("refused"), "%s: the control socket stays closed" % mode, out)
# Kernels of the daemon's uid own runtime_dir/sidecars (as they could stop
# the sidecar itself): it must hold the sidecar's socket and nothing else.
check(sorted(out["listing"]) == ["model.sock", "model.sock.fds"] or
      out["listing"].startswith("refused"),
      "%s: runtime_dir/sidecars holds only the sidecar's socket" % mode, out)
ok("%s: Unix socket works; TCP %s; nothing else reached" % (mode, out["tcp_sidecar"]))
EOF2
	stop_daemon TERM
	[ ! -e "$SOCK" ] && [ ! -e "$SOCK.fds" ] || fail "$mode: the socket outlived the daemon"
	# Only this daemon's relay: other tests' (340) may run beside this one.
	if pgrep -f "sidecar-relay model $SOCK " >/dev/null; then
		fail "$mode: a relay outlived the daemon: $(pgrep -af "sidecar-relay model $SOCK ")"
	fi
	ok "$mode: SIGTERM removed the socket and stopped the relay"
done
