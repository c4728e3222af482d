#!/bin/sh
# 110-cluster.sh - contrib/haproxy/cluster.cfg with three daemons (node_name
# a, b and c, each with its own port and directories) behind a real
# HAProxy on loopback, routed by the node tag of the handles.
#
# Through HAProxy: the official TypeScript SDK (2025-11-25, Mcp-Session-Id)
# and @modelcontextprotocol/client 2.4.0 (2026-07-28, which sends
# Mcp-Param-Session because the schema asks for it) each run
# $CODEEXECD_TEST_CLUSTER_SESSIONS sessions (default 30; about 90 s on two
# cores, so it runs in CI's first stage only) of 5 calls carrying a
# variable from call to call: every answer right, sessions on every node.
# Then: a promoted call's task polled through HAProxy (Mcp-Name); another
# node's handle sent straight to a node gets 421 naming it, counted in
# /metrics; `codeexecctl drain` on node a sends new sessions to b and c
# while a's own session goes on; stopping node b makes its session fail
# with HAProxy's JSON 503 naming b, while the sessions on a and c go on.
. "$(dirname "$0")/lib.sh"

RECIPE=$top_srcdir/contrib/haproxy/cluster.cfg
MAP=$top_srcdir/contrib/haproxy/nodes.map
CTL=$top_builddir/ctl/codeexecctl
N=${CODEEXECD_TEST_CLUSTER_SESSIONS:-30}

# Three daemons and two clients' 30 sessions each: once, in the first stage.
slow_suite

require_cmd haproxy
require_cmd curl
require_py ipykernel
require_binaries
require_client
require_client_modern
require_node 22
setup_tmp

# Nodes a and c and haproxy: lib.sh ends only $DAEMON_PID (node b's).
others=
cleanup_extra() {
	for p in $others; do
		kill "$p" 2>/dev/null
	done
	for p in $others; do
		wait "$p" 2>/dev/null
	done
}

# instance NAME: the config of node NAME on $PORT, directories of its own.
instance() {
	mkdir -p "$TMPD/$1"
	CFG_WARM=2 CFG_EXTRA="node_name: $1
execution_mode: adaptive
promotion_threshold_s: 60" write_config "$TMPD/$1/codeexecd.yaml"
	config_set state_dir "$TMPD/$1/state" "$TMPD/$1/codeexecd.yaml"
	config_set runtime_dir "$TMPD/$1/run" "$TMPD/$1/codeexecd.yaml"
	config_set pool.max_sessions 40 "$TMPD/$1/codeexecd.yaml"
}

port_h=$(free_port)
for i in a b c; do
	eval "port_$i=\$(free_port)"
	eval "PORT=\$port_$i"
	instance $i
done
"$CODEEXECD" --warm -f "$TMPD/a/codeexecd.yaml" >"$TMPD/warm.log" 2>&1 ||
	{ cat "$TMPD/warm.log"; fail "codeexecd --warm"; }
for i in a c b; do
	[ -n "$DAEMON_PID" ] && others="$others $DAEMON_PID"
	eval "PORT=\$port_$i"
	start_daemon "$TMPD/$i/codeexecd.yaml"
	wait_ready
	eval "pid_$i=\$DAEMON_PID"
done

# The recipe as shipped, with its addresses and the map's path moved here.
sed -e "s|bind 127.0.0.1:8000|bind 127.0.0.1:$port_h|" \
    -e "s|127.0.0.1:8001|127.0.0.1:$port_a|" \
    -e "s|127.0.0.1:8002|127.0.0.1:$port_b|" \
    -e "s|127.0.0.1:8003|127.0.0.1:$port_c|" \
    -e "s|/etc/haproxy/codeexecd-nodes.map|$MAP|" \
    "$RECIPE" >"$TMPD/haproxy.cfg"
for p in "$port_h" "$port_a" "$port_b" "$port_c"; do
	grep -q "127.0.0.1:$p\$\|127.0.0.1:$p " "$TMPD/haproxy.cfg" ||
		fail "$RECIPE: an address to replace has changed"
done
haproxy -c -q -f "$TMPD/haproxy.cfg" || fail "haproxy rejects $RECIPE"
haproxy -db -f "$TMPD/haproxy.cfg" >"$TMPD/haproxy.log" 2>&1 &
others="$others $!"
BASE=http://127.0.0.1:$port_h
HURL=$BASE/mcp
answers() {
	[ "$(health_status)" = 200 ]
}
poll_until 30 answers || { cat "$TMPD/haproxy.log"; fail "no answer through haproxy"; }
sleep 2 # every node's first checks: rise 2 at 1 s

# nodes FILE: the tags of the "session ID" lines, counted.
nodes() {
	sed -n 's/^session \([a-z]*\)\..*/\1/p' "$1" | sort | uniq -c | tr '\n' ' '
}
spread() {
	for t in a b c; do
		grep -q "^session $t\.[0-9a-f]\{32\}\$" "$1" || return 1
	done
	[ "$(grep -c '^session ' "$1")" -eq "$N" ]
}

start=$(date +%s)
"$NODE" "$CLIENT_DIR/cluster-client.mjs" "$HURL" "$N" 5 >"$TMPD/sdk.out" 2>&1 ||
	{ cat "$TMPD/sdk.out"; fail "SDK (2025-11-25) sessions through haproxy"; }
tail -n 1 "$TMPD/sdk.out"
spread "$TMPD/sdk.out" || { cat "$TMPD/sdk.out"; fail "SDK sessions not on all three nodes"; }
ok "2025-11-25, official SDK: $N sessions x 5 calls right, by node: $(nodes "$TMPD/sdk.out")($(($(date +%s) - start)) s)"

start=$(date +%s)
"$NODE" "$MODERN_DIR/cluster-client.mjs" "$HURL" "$N" 5 >"$TMPD/modern.out" 2>&1 ||
	{ cat "$TMPD/modern.out"; fail "2026-07-28 client sessions through haproxy"; }
tail -n 1 "$TMPD/modern.out"
spread "$TMPD/modern.out" ||
	{ cat "$TMPD/modern.out"; fail "2026-07-28 sessions not on all three nodes"; }
ok "2026-07-28, @modelcontextprotocol/client: $N sessions x 5 calls right, Mcp-Param-Session sent, by node: $(nodes "$TMPD/modern.out")($(($(date +%s) - start)) s)"

# promote SECONDS: every node's promotion_threshold_s, reloaded (SIGHUP).
promote() {
	for i in a b c; do
		config_set promotion_threshold_s "$1" "$TMPD/$i/codeexecd.yaml"
		eval "kill -HUP \$pid_$i"
	done
	sleep 1
}

# Tasks: a call longer than 1 s becomes one.
promote 1
run_py "$HURL" <<'PYEOF' || { echo "--- haproxy log"; tail -n 40 "$TMPD/haproxy.log"; exit 1; }
import sys, time
from mcp import ModernClient, check, ok, text_of

url = sys.argv[1]
EXT = "io.modelcontextprotocol/tasks"


class TaskClient(ModernClient):
    def meta(self, version=None):
        m = ModernClient.meta(self, version)
        m["io.modelcontextprotocol/clientCapabilities"] = {"extensions": {EXT: {}}}
        return m


def tag(handle):
    return handle.split(".", 1)[0]


# A promoted call is a task whose id carries the node of its session;
# tasks/get goes there by Mcp-Name.
t = TaskClient(url)
first = t.call("execute_py_code", {"code": "y = 7"})
sid = first["structuredContent"]["execution_session_id"]
task = t.call("execute_py_code", {"code": "import time\ntime.sleep(2)\nprint(y * 6)",
                                  "execution_session_id": sid})
check(task.get("resultType") == "task", "the slow call is a task", task)
check(tag(task["taskId"]) == tag(sid), "the task %s is on its session's node %s"
      % (task["taskId"][:10], tag(sid)), task)
end = time.monotonic() + 30
while True:
    r = t.request("tasks/get", {"taskId": task["taskId"]}, headers={"Mcp-Name": task["taskId"]})
    check(r.status == 200 and "result" in r.json, "tasks/get through haproxy: HTTP %d" % r.status,
          r.json)
    if r.json["result"]["status"] != "working" or time.monotonic() > end:
        break
    time.sleep(0.5)
check(r.json["result"]["status"] == "completed" and "42" in text_of(r.json["result"]["result"]),
      "the task completed with 42", r.json)
ok("a task on node %s, created and polled through haproxy" % tag(sid))
PYEOF
promote 60

PID_B=$pid_b run_py "$HURL" "$port_a" "$port_b" "$port_c" "$CTL" "$TMPD" <<'PYEOF' || { echo "--- haproxy log"; tail -n 40 "$TMPD/haproxy.log"; exit 1; }
import json, os, signal, subprocess, sys, time, urllib.error, urllib.request
from mcp import Client, ModernClient, check, ok, text_of

url, pa, pb, pc, ctl, tmpd = sys.argv[1:7]
ports = {"a": pa, "b": pb, "c": pc}


def tag(handle):
    return handle.split(".", 1)[0]


# A 2026-07-28 execution session, through haproxy.
m = ModernClient(url)
sid = m.call("execute_py_code", {"code": "y = 7"})["structuredContent"]["execution_session_id"]

# Another node's handle sent straight to a node: 421 naming it, counted.
other = {"a": "b", "b": "c", "c": "a"}[tag(sid)]
direct = Client("http://127.0.0.1:%s/mcp" % ports[other])
direct.session_id = sid
r = direct.request("tools/list")
check(r.status == 421 and r.json["error"]["code"] == -32050 and
      r.json["error"]["data"]["node"] == tag(sid) and
      ("node '%s'" % tag(sid)) in r.json["error"]["message"],
      "node %s answers another node's session with 421 naming it" % other, r.json)
m = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % ports[other], timeout=10).read().decode()
check("codeexecd_misdirected_requests_total 1" in m, "counted in /metrics",
      [l for l in m.splitlines() if "misdirected" in l])
ok("node %s: another node's session answered 421 naming node %s, counted in /metrics"
   % (other, tag(sid)))


def session_on(node, tries=30):
    """A 2025-11-25 session through haproxy that landed on `node`, with x set."""
    for _ in range(tries):
        c = Client(url)
        c.initialize()
        if tag(c.session_id) == node:
            c.execute("x = '%s-kept'" % node)
            return c
        c.delete()
    check(False, "no session landed on node %s in %d tries" % (node, tries))


def still(c, node):
    r = c.execute("print(x)")
    check(text_of(r).strip() == "%s-kept" % node, "the session on %s still has x" % node, r)


sa = session_on("a")
out = subprocess.run([ctl, "-s", os.path.join(tmpd, "a/run/control/codeexecd.sock"), "drain"],
                     capture_output=True, text=True, timeout=30)
check(out.returncode == 0 and "draining" in out.stdout, "codeexecctl drain", out.stdout + out.stderr)
h = urllib.request.Request("http://127.0.0.1:%s/health" % pa)
try:
    urllib.request.urlopen(h, timeout=10)
    check(False, "a draining node's /health answers 503")
except urllib.error.HTTPError as e:
    body = json.load(e)
    check(e.code == 503 and body["status"] == "draining", "a's /health: 503 draining", body)
time.sleep(3)  # haproxy's check: fall 2 at 1 s
landed = []
for _ in range(6):
    c = Client(url)
    c.initialize()
    landed.append(tag(c.session_id))
    c.delete()
check("a" not in landed, "no new session on the draining node a", landed)
still(sa, "a")
ok("node a drained: new sessions went to %s; a's own session went on" % " ".join(landed))

sb, sc = session_on("b"), session_on("c")
os.kill(int(os.environ["PID_B"]), signal.SIGTERM)
time.sleep(2)
r = sb.request("tools/call", {"name": "execute_py_code", "arguments": {"code": "print(x)"}})
check(r.status == 503 and r.json and r.json["error"]["code"] == -32051 and
      "node b" in r.json["error"]["message"], "b's session: a clear error naming node b",
      (r.status, r.raw))
still(sc, "c")
still(sa, "a")
ok("node b stopped: its session fails naming it (%s); a's and c's go on"
   % r.json["error"]["message"][:60])
PYEOF
# Node b ($DAEMON_PID) was stopped above: reap it here, not in cleanup.
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
ok "cluster of three behind haproxy"
