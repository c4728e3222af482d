#!/bin/sh
# 492-codemode-control: code mode's policy and control of a call (issue 35).
# Under token auth, with three upstreams: `test` (the SDK server of 490,
# stateless, with a bearer token, allow: [agent-a]), `live` (the same
# server with sessions, UPSTREAM_STATEFUL=1, which announces tool changes)
# and `modern` (this daemon itself, which the front finds speaks MCP
# 2026-07-28 and calls statelessly). Checks: another identity has no such
# module and its raw request is denied with the reason; a tool not in
# `tools:` is denied; the agent's progress names the upstream tool while it
# runs; cancelling the agent's call cancels the upstream call (the upstream
# is sent notifications/cancelled) and the kernel's state survives;
# max_calls_per_minute refuses the call past the bucket; a tool in
# `approve:` is asked of the agent's client by elicitation (yes: called; no:
# denied) and is not offered to a client that cannot answer; a tool the server
# adds (notifications/tools/list_changed on its GET stream) becomes a
# function in a running kernel; SIGHUP lists every upstream again; an
# upstream killed mid-call gives a clear UpstreamError at once.
. "$(dirname "$0")/lib.sh"

require_cmd curl sha256sum
require_py ipykernel
require_binaries
require_client
require_node 18
setup_tmp
PORT=$(free_port)
make_tokens

UP_TOKEN=tok-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
mkdir -p "$TMPD/srv"
cp "$top_srcdir/tests/client/upstream_server.mjs" "$TMPD/srv/"
ln -sfn "$CLIENT_DIR/node_modules" "$TMPD/srv/node_modules"
"$NODE" "$TMPD/srv/upstream_server.mjs" "$TMPD/srv/port" "$UP_TOKEN" >"$TMPD/srv/log" 2>&1 &
SRV_PID=$!
UPSTREAM_STATEFUL=1 "$NODE" "$TMPD/srv/upstream_server.mjs" "$TMPD/srv/port2" \
	>"$TMPD/srv/log2" 2>&1 &
SRV2_PID=$!
cleanup_extra() { kill "$SRV_PID" "$SRV2_PID" 2>/dev/null; }
wait_for 20 "the upstream servers listen" sh -c "test -s $TMPD/srv/port && test -s $TMPD/srv/port2"
printf '%s\n' "$UP_TOKEN" >"$TMPD/up.token"
printf '%s\n' "$TOKEN_A" >"$TMPD/self.token"
chmod 600 "$TMPD/up.token" "$TMPD/self.token"

CFG_WARM=2
CFG_EXTRA="progress_interval_s: 1
auth:
  mode: tokens
  tokens_file: $TMPD/tokens
  resource: http://127.0.0.1:$PORT/mcp
upstreams:
  - name: test
    url: http://127.0.0.1:$(cat "$TMPD/srv/port")/mcp
    token_file: $TMPD/up.token
    tools: [search_issues, add, slow, cancels]
    allow: [agent-a]
    approve: [search_issues]
    timeout_s: 30
    max_calls_per_minute: 5
  - name: live
    url: http://127.0.0.1:$(cat "$TMPD/srv/port2")/mcp
  - name: modern
    url: http://127.0.0.1:$PORT/mcp
    token_file: $TMPD/self.token
    tools: [execute_py_code]
    timeout_s: 60"
write_config
config_set pool.max_sessions_per_identity 8
start_daemon
wait_ready
wait_for 30 "the front lists the daemon itself as a 2026-07-28 upstream" \
	grep -q "upstream modern: [0-9]* tools (MCP 2026-07-28)" "$LOG"
wait_for 30 "the front follows live's tool changes" \
	grep -q "upstream live: [0-9]* tools (MCP 2025-06-18)" "$LOG"
ok "listed: $(grep -o 'upstream [a-z]*: [0-9]* tools (MCP [0-9-]*)' "$LOG" | sort -u | tr '\n' ';')"

run_py "$URL" "$TOKEN_A" "$TOKEN_B" <<'PYEOF' || fail "code mode's policy and control"
import json, sys, time
from mcp import Client, check, ok, text_of
from calls import Stream, call_msg, notify, sc

url, ta, tb = sys.argv[1:4]

def session(token):
    c = Client(url, token=token)
    c.initialize()
    return c

def run(c, code, what, timeout=60):
    r = c.execute(code, timeout=timeout)
    check(sc(r).get("success") is True, what, r)
    return text_of(r)

RAW = ("import os, json, socket, struct\n"
       "s = socket.socket(fileno=os.dup(int(os.environ['CODEEXEC_UPSTREAM_FD'])))\n"
       "d = json.dumps(dict(%s, seq=5)).encode()\n"
       "s.sendall(struct.pack('>I', len(d)) + d)\n"
       "msg, fds, _, _ = socket.recv_fds(s, 1, 1)\n"
       "print('REPLY', os.fdopen(fds[0], 'rb').read().decode())\n")

# --- allow: another identity -----------------------------------------------
b = session(tb)
t = run(b, "try:\n    from codeexec_upstreams import test\n    print('IMPORTED')\n"
        "except ImportError as e:\n    print('IMPORTERROR', e)", "agent-b imports")
check("IMPORTERROR no upstream test" in t, "agent-b has no module test", t)
t = run(b, RAW % "{'op': 'call', 'upstream': 'test', 'tool': 'add', 'arguments': {'a': 1, 'b': 2}}",
        "agent-b's raw request")
check('"denied"' in t and "no upstream test for identity agent-b" in t,
      "agent-b's raw call is denied, with the reason", t)
ok("allow: agent-b is refused test (%s)" % t.strip()[:120])

# --- tools: a tool the server lists but the configuration does not expose --
a = session(ta)
t = run(a, RAW % "{'op': 'call', 'upstream': 'test', 'tool': 'fail', 'arguments': {}}",
        "a raw call of an unexposed tool")
check('"denied"' in t and "tool fail is not exposed" in t, "a tool not in tools: is denied", t)
t = run(a, "from codeexec_upstreams import test\nprint(sorted(test.__all__))", "agent-a imports test")
check("['add', 'cancels', 'slow']" in t,
      "agent-a sees the exposed tools, but not one needing an approval its client cannot give", t)
t = run(a, RAW % "{'op': 'call', 'upstream': 'test', 'tool': 'search_issues', 'arguments': {'query': 'x'}}",
        "a raw call of a tool needing approval")
check('"denied"' in t and "needs the agent's approval" in t,
      "a tool needing approval is refused when no client can approve", t)
ok("tools: an unexposed tool is denied; approve: hidden from a client without elicitation")

# --- approve: the agent's client is asked by elicitation ------------------
e = Client(url, token=ta)
e.initialize(capabilities={"elicitation": {}})
def approved_call(rid, answer):
    code = ("from codeexec_upstreams import test\nimport codeexec_upstreams\n"
            "try:\n    print('FOUND', test.search_issues(query='leak', limit=1)['items'][0]['title'])\n"
            "except codeexec_upstreams.UpstreamError as x:\n    print('TYPE', x.type, 'MSG', x)\n")
    st = Stream(e, call_msg(e, "execute_py_code", {"code": code}, rid, token="a%d" % rid)).start()
    asked = None
    deadline = time.time() + 30
    while asked is None and time.time() < deadline:
        asked = next((m for _, m in list(st.events) if m.get("method") == "elicitation/create"), None)
        time.sleep(0.1)
    check(asked is not None, "the client is asked to approve the call", st.evidence())
    msg = asked["params"].get("message", "")
    check("search_issues" in msg and "upstream test" in msg and "leak" in msg,
          "the question names the tool, the upstream and the arguments", msg)
    r = e.http("POST", json.dumps({"jsonrpc": "2.0", "id": asked["id"],
                                   "result": {"action": "accept", "content": {"value": answer}}}))
    check(r.status in (200, 202, 204), "the answer is accepted", r.status)
    check(st.wait(30), "the approved call ends", st.evidence())
    return " ".join(text_of(m["result"]) for _, m in st.responses())
t = approved_call(41, "yes")
check("FOUND leak #1" in t, "an approved call is made", t)
t = approved_call(42, "no")
check("TYPE denied" in t and "did not approve" in t, "a refused approval raises denied", t)
ok("approve: asked by elicitation; yes calls, no raises denied")

# --- progress names the upstream tool --------------------------------------
st = Stream(a, call_msg(a, "execute_py_code", {"code": "kept = 'still here'\nr = test.slow(seconds=2.5)"},
                        31, token="p31")).run()
said = " ".join(e["params"].get("message", "") for _, e in st.progress())
check(st.status == 200 and "calling upstream test.slow" in said,
      "the agent's progress names the upstream tool while it runs", st.evidence())
ok("progress: %r" % said.strip()[:100])

# --- cancel of the agent's call cancels the upstream call -----------------
counter = session(ta)  # its own bucket of max_calls_per_minute
COUNT = "from codeexec_upstreams import test\nprint('CANCELS', test.cancels())"
before = run(counter, COUNT, "count cancels before")
st = Stream(a, call_msg(a, "execute_py_code", {"code": "r = test.slow(seconds=25)"}, 32,
                        token="p32")).start()
deadline = time.time() + 20
while time.time() < deadline and not any("calling upstream test.slow" in e.get("params", {}).get("message", "")
                                         for _, e in list(st.events)):
    time.sleep(0.1)
started = time.time()
n = notify(a, "notifications/cancelled", {"requestId": 32, "reason": "test 492"})
check(n.status in (200, 202, 204), "the agent's cancel is accepted", n.status)
check(st.wait(15), "the cancelled call's exchange ends", st.evidence())
check(time.time() - started < 10, "the cancelled call ended long before the upstream tool would")
deadline = time.time() + 10
while True:
    t = run(counter, COUNT, "count cancels after")
    if int(t.split()[1]) > int(before.split()[1]) or time.time() > deadline:
        break
    time.sleep(0.5)
check(int(t.split()[1]) == int(before.split()[1]) + 1,
      "the upstream was sent notifications/cancelled once", (before, t))
t2 = run(a, "print(kept)", "the cancelled session's state")
check("still here" in t2, "the kernel's state survived the cancel", t2)
ok("cancel: the upstream got notifications/cancelled (%s -> %s)" % (before.split()[1], t.split()[1]))

# --- max_calls_per_minute: 5, a fresh session -----------------------------
c = session(ta)
t = run(c, "from codeexec_upstreams import test\nimport codeexec_upstreams\nn = 0\n"
        "try:\n    for i in range(8):\n        test.add(a=i, b=1); n += 1\n"
        "except codeexec_upstreams.UpstreamError as e:\n    print('STOP', n, e.type, e)\n",
        "calls past the rate")
check("STOP 5 limit" in t and "max_calls_per_minute" in t,
      "the sixth call in a minute is refused by max_calls_per_minute", t)
ok("rate: %s" % t.strip()[:120])

# --- listChanged: a tool the server adds reaches a running kernel ---------
t = run(a, "from codeexec_upstreams import live\nprint('GREW', live.grow())", "grow live")
check("GREW grown_1" in t, "live added a tool", t)
t = run(a, "import time\nfor i in range(100):\n"
        "    try:\n        print('NEW', live.grown_1()); break\n"
        "    except AttributeError as e:\n        err = e; time.sleep(0.2)\n"
        "else:\n    print('MISSING', err)", "call the new tool")
check("NEW grown 1" in t, "the new tool became a function (listChanged followed)", t)
ok("listChanged: %s" % t.strip())

# --- 2026-07-28 upstream: the daemon itself --------------------------------
t = run(a, "from codeexec_upstreams import modern\n"
        "r = modern.execute_py_code(code='print(6 * 7)')\n"
        "print('MODERN', r.get('success'), r.get('stdout', '').strip())", "call the daemon over 2026-07-28",
        timeout=90)
check("MODERN True 42" in t, "an upstream speaking 2026-07-28 is called statelessly", t)
ok("2026-07-28 upstream: %s" % t.strip())
PYEOF

grep -q "upstream call: identity agent-a session .* upstream test tool slow: cancelled" "$LOG" ||
	fail "the audit log has the cancelled call"
grep -q "upstream call: identity agent-a session .* upstream modern tool execute_py_code: ok" "$LOG" ||
	fail "the audit log has the 2026-07-28 call"
ok "audit: the cancelled and the 2026-07-28 calls"

# --- SIGHUP lists every upstream again ------------------------------------
n0=$(grep -c "upstream test: [0-9]* tools" "$LOG")
kill -HUP "$DAEMON_PID"
wait_for 30 "test listed again after SIGHUP" \
	sh -c "[ \$(grep -c 'upstream test: [0-9]* tools' '$LOG') -gt $n0 ]"
grep -q "reload: listing the tools of 3 upstreams again" "$LOG" || fail "SIGHUP: no re-list logged"
ok "SIGHUP: the upstreams were listed again"

# --- an upstream that dies mid-call ---------------------------------------
run_py "$URL" "$TOKEN_A" "$SRV_PID" <<'PYEOF' || fail "an upstream that dies mid-call"
import os, signal, sys, time
from mcp import Client, check, ok, text_of
from calls import Stream, call_msg

url, ta, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
a = Client(url, token=ta)
a.initialize()
code = ("from codeexec_upstreams import test\nimport codeexec_upstreams\n"
        "try:\n    test.slow(seconds=25)\n"
        "except codeexec_upstreams.UpstreamError as e:\n    print('TYPE', e.type, 'MSG', e)\n")
st = Stream(a, call_msg(a, "execute_py_code", {"code": code}, 51, token="p51")).start()
deadline = time.time() + 30
while time.time() < deadline and not any("calling upstream test.slow" in m.get("params", {}).get("message", "")
                                         for _, m in list(st.events)):
    time.sleep(0.1)
time.sleep(0.5)  # the request is at the upstream now
os.kill(pid, signal.SIGKILL)
t0 = time.time()
check(st.wait(20), "the call ends", st.evidence())
t = " ".join(text_of(m["result"]) for _, m in st.responses())
# libcurl tries a dead kept-alive connection once more on a new one, so the
# error is what the exchange met last: a reset (upstream) or a refusal (unavailable).
check(("TYPE upstream" in t or "TYPE unavailable" in t) and "127.0.0.1" in t,
      "the call in flight raises UpstreamError, naming the upstream's address", t)
check(time.time() - t0 < 10, "at once, not after the tool's time", time.time() - t0)
r = a.execute("print('AFTER', 1 + 1)", timeout=30)
check("AFTER 2" in text_of(r), "the kernel goes on", r)
ok("upstream killed mid-call: %s" % t.strip()[:160])
PYEOF
stop_daemon
