#!/bin/sh
# 455-session-share: what the MCP client libraries people use need to keep
# a kernel, and what keeps a careless one from filling the pool, over real
# HTTP with auth.mode tokens and two identities (pool.max_sessions 10, so
# each identity's default share is 2).
# - On 2026-07-28 every execute result's text names its execution session
#   in one fixed line (a model sees only the text): a test that copies the
#   id from the text, as a model would, keeps x across calls; the
#   2025-11-25 path's text has no such line.
# - tools/list on 2026-07-28 says how state is kept and requires
#   execution_session_id where a tool acts in a session; code_str is
#   accepted by the schema (anyOf), rich_outputs[].data has a type.
# - GET /mcp without a session: 405, not 400.
# - 30 stateless calls of one identity never hold more than its share; the
#   result that made room names the closed session; the other identity
#   still gets a kernel at once; /metrics counts the reclaimed sessions.
#   With all its sessions busy, a new one is refused, naming the key.
# - After a SIGHUP that sets session_idle_timeout_unused: 2, an execution
#   session used once is closed within seconds, one named again is kept.
. "$(dirname "$0")/lib.sh"

require_cmd curl sha256sum
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)

make_tokens
CFG_WARM=2
auth_cfg="auth:
  mode: tokens
  tokens_file: $TMPD/tokens
  resource: http://127.0.0.1:$PORT/mcp"
CFG_EXTRA="$auth_cfg
session_idle_timeout_unused: 0"
write_config
start_daemon
wait_ready

run_py "$URL" "$TOKEN_A" "$TOKEN_B" "$PORT" <<'EOF'
import json, re, sys, threading, time
from mcp import Client, ModernClient, check, metric, ok, text_of, value_of

url, ta, tb, port = sys.argv[1:5]
EXEC = "execute_py_code"
LINE = re.compile(r"\[(new execution session; )?execution_session_id: ([0-9a-f]{32}); "
                  r"pass it as execution_session_id to continue in this kernel\]")


def sessions_of(c):
    return len(c.call("py_list_sessions", {})["structuredContent"]["sessions"])


a = ModernClient(url, token=ta)
b = ModernClient(url, token=tb)

# --- the handle in the text, as a model sees it -------------------------------
r1 = a.call(EXEC, {"code": "x = 41"})
m = LINE.search(text_of(r1))
check(m is not None and m.group(1), "the first result's text names a new session", r1)
sid = m.group(2)
check(sid == r1["structuredContent"]["execution_session_id"], "the text's id is the session's")
r2 = a.call(EXEC, {"code": "print(x + 1)", "execution_session_id": sid})
check("42" in text_of(r2), "the id copied from the text keeps x", r2)
m2 = LINE.search(text_of(r2))
check(m2 and not m2.group(1) and m2.group(2) == sid, "a later result names the same session",
      r2)
check(text_of(r2).rstrip().endswith("]") and text_of(r2).count("execution_session_id:") == 1,
      "one line, at the end", r2)
r = a.call("py_check_job", {"job_id": "nope", "execution_session_id": sid})
check(LINE.search(text_of(r)) and LINE.search(text_of(r)).group(2) == sid,
      "a tool acting in the session names it too", r)
ok("2026-07-28: the text names execution_session_id; copied from it, x = 41 is kept")
old = Client(url, token=ta)
old.initialize()
r = old.execute("y = 1\ny")
check(not LINE.search(text_of(r)) and "execution_session_id:" not in text_of(r),
      "2025-11-25: the text is the output alone", r)
ok("2025-11-25: no session line in the text")

# --- schemas, on each path ----------------------------------------------------
modern = {t["name"]: t for t in a.result("tools/list")["tools"]}
legacy = {t["name"]: t for t in old.result("tools/list")["tools"]}
ex = modern[EXEC]
check("execution_session_id" in ex["description"] and
      "execution_session_id" in ex["inputSchema"]["properties"]["code"]["description"],
      "2026-07-28: execute's description says how to keep state", ex)
check("persist between calls of this session" in
      legacy[EXEC]["inputSchema"]["properties"]["code"]["description"],
      "2025-11-25: the session keeps state by itself", legacy[EXEC])
for tools in (modern, legacy):
    s = tools[EXEC]["inputSchema"]
    check("code" not in s.get("required", []) and
          s.get("anyOf") == [{"required": ["code"]}, {"required": ["code_str"]}],
          "code or code_str, in the schema itself", s)
    data = tools[EXEC]["outputSchema"]["properties"]["rich_outputs"]["items"]["properties"]["data"]
    check("type" in data and "string" in data["type"], "rich_outputs[].data has a type", data)
for name in ("py_check_job", "py_cancel_job", "py_send"):
    if name in modern:
        check("execution_session_id" in modern[name]["inputSchema"].get("required", []),
              "2026-07-28: %s requires execution_session_id" % name, modern[name])
        check("execution_session_id" not in legacy[name]["inputSchema"].get("required", []),
              "2025-11-25: %s does not" % name, legacy[name])
r = a.call(EXEC, {"code_str": "x", "execution_session_id": sid})
check(value_of(r) == "41", "code_str runs", r)
ok("schemas: anyOf code/code_str, typed data, execution_session_id required on 2026-07-28")

# --- GET without a session ----------------------------------------------------
g = Client(url, token=ta).http("GET", headers={"Accept": "text/event-stream"})
check(g.status == 405 and g.header("Allow") == "POST, DELETE",
      "GET /mcp without a session: 405 (got %d %s)" % (g.status, g.raw[:200]))
ok("GET /mcp without Mcp-Session-Id: 405, Allow: POST, DELETE")

# --- one identity's share -----------------------------------------------------
held, told = [], 0
for i in range(30):
    r = a.call(EXEC, {"code": "%d" % i})
    check(value_of(r) == str(i), "stateless call %d ran" % i, r)
    if r["structuredContent"].get("reclaimed_session_id"):
        told += 1
        check("least recently used idle session %s was closed"
              % r["structuredContent"]["reclaimed_session_id"] in text_of(r),
              "the text says which session made room", r)
    held.append(sessions_of(a))
check(max(held) <= 2, "agent-a never held more than its share of 2 (held %s)" % held)
check(told >= 27, "the results that made room said so (%d of 30)" % told)
ok("30 stateless calls: agent-a held at most %d sessions; %d results named the one closed"
   % (max(held), told))
t0 = time.time()
r = b.call(EXEC, {"code": "'b'"})
check(value_of(r) == "'b'" and "reclaimed_session_id" not in r["structuredContent"],
      "agent-b gets a kernel at once, at no one's cost", r)
ok("agent-b's first call: answered in %.1f s, nothing reclaimed" % (time.time() - t0))
n = metric(port, 'codeexecd_sessions_reclaimed_total{reason="identity_share"}')
check(n is not None and n >= told, "/metrics counts them (%s)" % n)
ok("/metrics: %d sessions reclaimed for identity_share" % n)

# Every session of agent-a busy: the next is refused, naming the key.
def sleeper():
    try:
        ModernClient(url, token=ta).call(EXEC, {"code": "import time; time.sleep(6)"})
    except Exception:
        pass


threads = [threading.Thread(target=sleeper) for _ in range(2)]
for t in threads:
    t.start()
deadline = time.time() + 60
while metric(port, 'codeexecd_sessions{state="busy"}') != 2 and time.time() < deadline:
    time.sleep(0.2)
r = a.request("tools/call", {"name": EXEC, "arguments": {"code": "1"}})
err = (r.json or {}).get("error") or {}
check("pool.max_sessions_per_identity" in err.get("message", ""),
      "with both sessions busy, a third is refused naming the key", r.raw)
for t in threads:
    t.join()
ok("both busy: refused with %r" % err.get("message"))
EOF

# --- session_idle_timeout_unused, set by SIGHUP -------------------------------
CFG_EXTRA="$auth_cfg
session_idle_timeout_unused: 2"
write_config
kill -HUP "$DAEMON_PID"
poll_until 20 grep -q "configuration .* reloaded" "$LOG" || fail "the reload was not logged"
sleep 1

run_py "$URL" "$TOKEN_A" "$PORT" <<'EOF'
import sys, time
from mcp import ModernClient, check, metric, ok

url, ta, port = sys.argv[1:4]
EXEC = "execute_py_code"
a = ModernClient(url, token=ta)


before = metric(port, 'codeexecd_sessions_reclaimed_total{reason="unused"}')
once = a.call(EXEC, {"code": "1"})["structuredContent"]["execution_session_id"]
kept = a.call(EXEC, {"code": "k = 1"})["structuredContent"]["execution_session_id"]
a.call(EXEC, {"code": "k", "execution_session_id": kept})
time.sleep(5)
ids = [s["session_id"] for s in a.call("py_list_sessions", {})["structuredContent"]["sessions"]]
check(once not in ids, "the session used once is closed after 2 s (%s)" % ids)
check(kept in ids, "the session named again is kept (%s)" % ids)
after = metric(port, 'codeexecd_sessions_reclaimed_total{reason="unused"}')
check(after is not None and after >= before + 1, "/metrics counts it (%s -> %s)" % (before, after))
ok("session_idle_timeout_unused 2 (by SIGHUP): the unused session closed, the other kept")
EOF
grep -q 'after its only call (session_idle_timeout_unused)' "$LOG" ||
	fail "the unused session's close was not logged"
grep -q 'closed to make room for a new one (pool.max_sessions_per_identity 2 reached)' "$LOG" ||
	fail "the reclaim was not logged"
ok "the log says why each session was closed"
