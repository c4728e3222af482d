#!/bin/sh
# 531-sidecar-socket: socket: true serves a sidecar on a Unix socket that
# kernels whose network cannot reach the host's loopback use (issue 14
# item 4). In kernel_network_mode isolated the TCP URL is refused (seed
# 000) and $MODEL_URL_SOCKET answers; in inherit both work. Probes from the
# isolated kernel show that nothing else of the host became reachable: the
# relay reaches only its sidecar (an absolute URL for the daemon's own
# port still lands there), the daemon's port and a host listener stay
# refused, the control socket stays closed, and runtime_dir/sidecars holds
# the sidecar's socket alone.
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

for mode in inherit isolated; do
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
def unix_get(path, target):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    conn = http.client.HTTPConnection("sidecar")
    conn.sock = s
    conn.request("GET", target)
    return json.loads(conn.getresponse().read())
try:
    out["unix"] = unix_get(os.environ["MODEL_URL_SOCKET"], "/predict")
except Exception as e:
    out["unix"] = "error: %r" % e
# An absolute URL for the daemon's own port: the relay goes to its sidecar only.
try:
    out["absolute"] = unix_get(os.environ["MODEL_URL_SOCKET"], "http://127.0.0.1:PORT/health")
except Exception as e:
    out["absolute"] = "error: %r" % e
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
if mode == "isolated":
    check(out["tcp_sidecar"].startswith("refused"), "isolated: the TCP URL is refused", out)
    check(out["tcp_daemon"].startswith("refused"), "isolated: the daemon's port is refused", out)
    check(out["tcp_other"].startswith("refused"), "isolated: a host listener is refused", out)
else:
    check(out["tcp_sidecar"] == "connected", "inherit: the TCP URL works", out)
check(out["control"].startswith("refused"), "%s: the control socket stays closed" % mode, out)
# Kernels of the daemon's uid own runtime_dir/sidecars (as they could stop
# the sidecar itself): it must hold the sidecar's socket and nothing else.
check(out["listing"] == ["model.sock"] or out["listing"].startswith("refused"),
      "%s: runtime_dir/sidecars holds only the sidecar's socket" % mode, out)
ok("%s: Unix socket works; TCP %s; nothing else reached" % (mode, out["tcp_sidecar"]))
EOF2
	stop_daemon TERM
	[ ! -e "$SOCK" ] || fail "$mode: the socket outlived the daemon"
	if pgrep -f "codeexecd --sidecar-relay" >/dev/null; then
		fail "$mode: a relay outlived the daemon: $(pgrep -af sidecar-relay)"
	fi
	ok "$mode: SIGTERM removed the socket and stopped the relay"
done
