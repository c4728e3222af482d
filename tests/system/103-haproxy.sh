#!/bin/sh
# 103-haproxy.sh - contrib/haproxy's recipe: two daemons behind HAProxy.
#
# Runs the shipped haproxy.cfg with only its addresses changed to free
# loopback ports, opens six sessions through it, and checks that each
# session keeps its variables across calls (every request reached the
# instance holding its kernel) and that the sessions spread over both
# instances (each instance's /health and control socket say which it holds).

. "$(dirname "$0")/lib.sh"

RECIPE=$top_srcdir/contrib/haproxy/haproxy.cfg

require_cmd haproxy
require_py ipykernel
require_binaries
setup_tmp

# The first daemon and haproxy: lib.sh ends only the second, $DAEMON_PID.
others=
cleanup_extra() {
	for p in $others; do
		kill "$p" 2>/dev/null
	done
	for p in $others; do
		wait "$p" 2>/dev/null
	done
}

# instance NAME: the config of a daemon on $PORT with directories of its
# own, sharing the environment (build_dir) with the other.
instance() {
	mkdir -p "$TMPD/$1"
	write_config "$TMPD/$1/codeexecd.yaml"
	config_set state_dir "$TMPD/$1/state" "$TMPD/$1/codeexecd.yaml"
	config_set runtime_dir "$TMPD/$1/run" "$TMPD/$1/codeexecd.yaml"
}

# GET /health on $BASE answers 200.
answers() {
	[ "$(health_status)" = 200 ]
}

port_a=$(free_port)
port_b=$(free_port)
port_h=$(free_port)
PORT=$port_a
instance a
PORT=$port_b
instance b

# Build the shared environment once, so the two daemons never build it together.
"$CODEEXECD" --warm -f "$TMPD/a/codeexecd.yaml" >"$TMPD/warm.log" 2>&1 ||
	{ cat "$TMPD/warm.log"; fail "codeexecd --warm"; }
for i in a b; do
	others="$others $DAEMON_PID"
	eval "PORT=\$port_$i"
	start_daemon "$TMPD/$i/codeexecd.yaml"
	wait_ready
done

# The recipe as shipped, with its three addresses moved to our ports.
sed -e "s|bind 127.0.0.1:8000|bind 127.0.0.1:$port_h|" \
    -e "s|server cx1 127.0.0.1:8001|server cx1 127.0.0.1:$port_a|" \
    -e "s|server cx2 127.0.0.1:8002|server cx2 127.0.0.1:$port_b|" \
    "$RECIPE" >"$TMPD/haproxy.cfg"
for addr in "$port_h" "$port_a" "$port_b"; do
	grep -q "127.0.0.1:$addr\$\|127.0.0.1:$addr " "$TMPD/haproxy.cfg" ||
		fail "$RECIPE: an address to replace has changed"
done
haproxy -c -q -f "$TMPD/haproxy.cfg" || fail "haproxy rejects $RECIPE"
haproxy -db -f "$TMPD/haproxy.cfg" >"$TMPD/haproxy.log" 2>&1 &
others="$others $!"
BASE=http://127.0.0.1:$port_h
poll_until 30 answers || { cat "$TMPD/haproxy.log"; fail "no answer through haproxy"; }

run_py "$port_h" "$port_a" "$port_b" "$TMPD/a/run/control/codeexecd.sock" \
	"$TMPD/b/run/control/codeexecd.sock" <<'EOF' && exit 0
import json, socket, sys, urllib.error, urllib.request

front, port_a, port_b, sock_a, sock_b = sys.argv[1:]
failed = False

def fail(msg):
    global failed
    print("FAIL: " + msg)
    failed = True

def post(msg, sid=None, version=None, method="POST"):
    """One MCP request through HAProxy; (status, session id header, message)."""
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    if sid:
        headers["Mcp-Session-Id"] = sid
    if version:
        headers["MCP-Protocol-Version"] = version
    data = json.dumps(msg).encode() if msg is not None else None
    req = urllib.request.Request("http://127.0.0.1:%s/mcp" % front, data=data,
                                 headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            status, hdrs, body = r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        status, hdrs, body = e.code, e.headers, e.read().decode()
    if "text/event-stream" in hdrs.get("Content-Type", ""):
        datas = [l[5:].strip() for l in body.splitlines() if l.startswith("data:")]
        body = datas[-1] if datas else ""
    return status, hdrs.get("Mcp-Session-Id"), (json.loads(body) if body.strip() else None)

def execute(sid, version, code, rid):
    msg = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
           "params": {"name": "execute_py_code", "arguments": {"code": code}}}
    status, _, answer = post(msg, sid, version)
    if status != 200 or "result" not in (answer or {}):
        fail("session %.8s: %r: HTTP %d %s" % (sid, code, status, answer))
        return None
    return answer["result"]["structuredContent"]

def health(port):
    """/health of one instance; 503 only says that no idle kernel is ready."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%s/health" % port, timeout=10) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        return json.load(e)

def control_sessions(path):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)
    s.connect(path)
    s.sendall(b'{"cmd":"sessions"}\n')
    data = b""
    while not data.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return {x["id"] for x in json.loads(data)["sessions"]}

# Open all sessions first, then use them in an irregular order, so that no
# run of round robin can line up with the requests by chance.
sessions = []
for i in range(6):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "103-haproxy", "version": "1"}}}
    status, sid, answer = post(init)
    if status != 200 or not sid:
        fail("initialize %d through haproxy: HTTP %d, session %r" % (i, status, sid))
        continue
    sessions.append((sid, answer["result"]["protocolVersion"], i * 7 + 1))
for sid, version, _ in sessions:
    status, _, _ = post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid, version)
    if status not in (200, 202, 204):
        fail("notifications/initialized of %.8s: HTTP %d" % (sid, status))

# Set a variable in every session, then read them back: a request sent to
# the other instance would find no session there and get 404.
for n, (sid, version, value) in enumerate(sessions):
    execute(sid, version, "x = %d" % value, 10 + n)
for n, k in enumerate([5, 0, 0, 3, 1, 4, 4, 4, 2, 5, 1, 3]):
    if k >= len(sessions):
        continue
    sid, version, value = sessions[k]
    r = execute(sid, version, "print(x)", 20 + n)
    if r is not None and r.get("stdout", "").strip() != str(value):
        fail("session %.8s: x is %r, expected %d" % (sid, r, value))

ha, hb = health(port_a), health(port_b)
print("sessions per instance: %d and %d" % (ha["sessions"], hb["sessions"]))
if ha["sessions"] < 1 or hb["sessions"] < 1:
    fail("sessions did not spread over both instances: %s, %s" % (ha, hb))
if ha["sessions"] + hb["sessions"] != len(sessions):
    fail("%d sessions opened, instances hold %d" % (len(sessions),
                                                      ha["sessions"] + hb["sessions"]))
try:
    on_a, on_b = control_sessions(sock_a), control_sessions(sock_b)
    for sid, _, _ in sessions:
        if (sid in on_a) == (sid in on_b):
            fail("session %.8s is on %s" % (sid, "both instances" if sid in on_a else "neither"))
except (OSError, ValueError, KeyError) as e:
    fail("control sockets: %s" % e)

# DELETE reaches the holding instance too.
for sid, version, _ in sessions:
    status, _, _ = post(None, sid, version, method="DELETE")
    if status != 200:
        fail("DELETE of %.8s through haproxy: HTTP %d" % (sid, status))
left = health(port_a)["sessions"] + health(port_b)["sessions"]
if left != 0:
    fail("%d sessions left after DELETE" % left)
if not failed:
    print("ok: %d sessions through haproxy kept their state on their instance" % len(sessions))
sys.exit(1 if failed else 0)
EOF
echo "--- haproxy log"
tail -n 30 "$TMPD/haproxy.log"
exit 1
