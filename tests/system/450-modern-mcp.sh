#!/bin/sh
# 450-modern-mcp: MCP 2026-07-28 beside 2025-11-25 on one daemon,
# over real HTTP with auth.mode tokens and two identities. server/discover
# names both revisions; results carry resultType and _meta serverInfo;
# tools/list carries ttlMs and cacheScope and is the same for every caller.
# The error answers: a bad Mcp-Name or MCP-Protocol-Version header (400,
# -32020), an unknown version (400, -32022 with both revisions), a missing
# _meta (400, -32602), an unknown or removed method (404, -32601); GET and
# DELETE are 405, and no response carries Mcp-Session-Id. Kernels: two calls
# with one execution_session_id share state; another identity's use of it
# answers exactly as an unknown id and starts no kernel; list_sessions
# shows only the caller's; close_session ends it; a fifth call in flight
# on one execution session gets 429. Closing a call's SSE
# stream interrupts time.sleep(60) within 2 s. initialize still opens a
# 2025-11-25 session on the same port.
. "$(dirname "$0")/lib.sh"

require_cmd curl sha256sum
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)

make_tokens
CFG_WARM=2
CFG_EXTRA="auth:
  mode: tokens
  tokens_file: $TMPD/tokens
  resource: http://127.0.0.1:$PORT/mcp"
write_config
start_daemon
wait_ready

run_py "$URL" "$TOKEN_A" "$TOKEN_B" "$PORT" <<'EOF'
import json, socket, sys, time, urllib.request
from mcp import Client, ModernClient, MODERN, check, ok, text_of

url, ta, tb, port = sys.argv[1:5]
a = ModernClient(url, token=ta)
b = ModernClient(url, token=tb)
EXEC = "execute_py_code"


def health():
    with urllib.request.urlopen("http://127.0.0.1:%s/health" % port, timeout=10) as r:
        return json.loads(r.read())


def no_session_header(r, what):
    check(r.header("Mcp-Session-Id") is None, "%s: no Mcp-Session-Id" % what)


def rpc_error(r, status, code, what):
    check(r.status == status, "%s: HTTP %d (want %d)" % (what, r.status, status))
    check(r.json is not None and r.json.get("error", {}).get("code") == code,
          "%s: JSON-RPC error %s (want %d)" % (what, (r.json or {}).get("error"), code))
    no_session_header(r, what)
    ok("%s: HTTP %d, %d" % (what, status, code))
    return r.json["error"]


# --- discovery -------------------------------------------------------------
r = a.request("server/discover")
check(r.status == 200, "server/discover: HTTP %d" % r.status)
no_session_header(r, "server/discover")
d = r.json["result"]
check(d.get("supportedVersions") == [MODERN, "2025-11-25"], "supportedVersions", d)
check(d.get("resultType") == "complete", "server/discover resultType", d)
info = d.get("_meta", {}).get("io.modelcontextprotocol/serverInfo", {})
check(info.get("name") == "codeexecd" and info.get("version"), "serverInfo in _meta", d)
check("tools" in d.get("capabilities", {}), "capabilities.tools", d)
ok("server/discover: %s, serverInfo %s" % (d["supportedVersions"], info))

la = a.result("tools/list")
lb = b.result("tools/list")
check(isinstance(la.get("ttlMs"), int) and la["ttlMs"] >= 0 and
      la.get("cacheScope") in ("public", "private"), "tools/list ttlMs, cacheScope", la)
check(la == lb, "tools/list is the same for two identities")
check(la["resultType"] == "complete", "tools/list resultType")
ok("tools/list: ttlMs %d, cacheScope %s, the same for both callers"
   % (la["ttlMs"], la["cacheScope"]))

# --- errors ----------------------------------------------------------------
e = rpc_error(a.request("tools/call", {"name": EXEC, "arguments": {"code": "1"}},
                        headers={"Mcp-Name": "execute_other_code"}),
              400, -32020, "Mcp-Name disagreeing with params.name")
check("Mcp-Name" in e["message"], "the -32020 message names Mcp-Name", e)
rpc_error(a.request("tools/call", {"name": EXEC, "arguments": {"code": "1"}},
                    headers={"Mcp-Name": None}), 400, -32020, "Mcp-Name missing")
rpc_error(a.request("tools/list", headers={"Mcp-Method": "prompts/list"}),
          400, -32020, "Mcp-Method disagreeing with the method")
rpc_error(a.request("tools/list", headers={"Mcp-Method": None}), 400, -32020,
          "Mcp-Method missing")
rpc_error(a.request("tools/list", {"_meta": a.meta("2099-01-01")}), 400, -32020,
          "MCP-Protocol-Version disagreeing with _meta")
v = ModernClient(url, token=ta, version="2099-01-01")
e = rpc_error(v.request("tools/list"), 400, -32022, "unknown version 2099-01-01")
check(e.get("data", {}).get("supported") == [MODERN, "2025-11-25"] and
      e["data"].get("requested") == "2099-01-01", "-32022 data: both revisions, requested", e)
rpc_error(a.request("tools/list", meta=False), 400, -32602, "_meta missing")
rpc_error(a.request("no/such/method"), 404, -32601, "unknown method")
for removed in ("initialize", "ping", "logging/setLevel"):
    rpc_error(a.request(removed), 404, -32601, "%s on the 2026-07-28 path" % removed)
for m in ("GET", "DELETE"):
    r = a.http(m, headers={"MCP-Protocol-Version": MODERN,
                           "Mcp-Session-Id": "0123456789abcdef0123456789abcdef"})
    check(r.status == 405 and r.header("Allow") == "POST", "%s: 405, Allow: POST" % m)
    ok("%s /mcp on the 2026-07-28 path: 405" % m)

# --- kernels named by execution_session_id ----------------------------------
before = health()["sessions"]
r1 = a.call(EXEC, {"code": "x = 41"})
sid = r1["structuredContent"]["execution_session_id"]
check(len(sid) == 32 and r1["isError"] is False, "the first call started a session", r1)
check(Client.last[1].header("Mcp-Session-Id") is None, "no Mcp-Session-Id minted")
r2 = a.call(EXEC, {"code": "x + 1", "execution_session_id": sid})
check("42" in text_of(r2) and r2["structuredContent"]["execution_session_id"] == sid,
      "the second call with its execution_session_id saw x", r2)
check(r2["resultType"] == "complete" and
      "io.modelcontextprotocol/serverInfo" in r2.get("_meta", {}), "tools/call stamps", r2)
ok("two calls with execution_session_id %s share state" % sid[:8])
# A session id sent on this path is ignored, never echoed.
r = a.request("tools/call", {"name": EXEC, "arguments": {"code": "x", "execution_session_id": sid}},
              headers={"Mcp-Session-Id": "0123456789abcdef0123456789abcdef"})
check(r.status == 200 and "41" in text_of(r.json["result"]), "Mcp-Session-Id ignored")
no_session_header(r, "a call sent with Mcp-Session-Id")
ok("an Mcp-Session-Id sent on the 2026-07-28 path is ignored and not echoed")

# Another identity: the same answer as an unknown id, and no kernel.
n = health()["sessions"]
unknown = b.call(EXEC, {"code": "x", "execution_session_id": "f" * 32})
foreign = b.call(EXEC, {"code": "x", "execution_session_id": sid})
check(unknown == foreign and foreign["isError"] is True and
      "unknown execution_session_id" in text_of(foreign),
      "B's use of A's id answers as an unknown one", [unknown, foreign])
cu = b.call("py_close_session", {"session_id": "f" * 32})
cf = b.call("py_close_session", {"session_id": sid})
check(cu == cf and cf["isError"] is True, "B's close_session of A's id: as unknown", [cu, cf])
check(health()["sessions"] == n, "no session was created for B's calls")
check("41" in text_of(a.call(EXEC, {"code": "x", "execution_session_id": sid})),
      "A's session is untouched")
ok("another identity's execution_session_id answers as an unknown one; no kernel started")

seen_a = [s["session_id"] for s in
          a.call("py_list_sessions", {})["structuredContent"]["sessions"]]
seen_b = [s["session_id"] for s in
          b.call("py_list_sessions", {})["structuredContent"]["sessions"]]
check(sid in seen_a and sid not in seen_b, "list_sessions: only the caller's", [seen_a, seen_b])
ok("list_sessions shows A's session to A only")

r = a.call("py_check_job", {"job_id": "nope"})
check(r["isError"] is True and "execution_session_id" in text_of(r),
      "check_job without execution_session_id on this path is refused", r)
ok("a session tool without execution_session_id: isError naming it")

# The legacy path never reaches an execution session by Mcp-Session-Id.
old = Client(url, token=ta)
old.session_id = sid
r = old.request("tools/list")
check(r.status == 404, "Mcp-Session-Id of an execution session: 404 (got %d)" % r.status)
ok("an execution session is no 2025-11-25 session")

# http.max_concurrent_calls_per_session holds for an execution session too.
import threading
slow = []
threads = [threading.Thread(target=lambda: slow.append(ModernClient(url, token=ta).request(
    "tools/call", {"name": EXEC, "arguments": {"code": "import time\ntime.sleep(3)",
                                               "execution_session_id": sid}}).status))
           for _ in range(4)]
for t in threads:
    t.start()
time.sleep(1)
r = ModernClient(url, token=ta).request("tools/call", {"name": EXEC, "arguments": {
    "code": "1", "execution_session_id": sid}})
check(r.status == 429 and "max_concurrent_calls_per_session" in r.json["error"]["message"],
      "a fifth call in flight on one execution session: 429 (got %d)" % r.status)
for t in threads:
    t.join()
check(slow == [200] * 4, "the four calls ran", slow)
ok("a fifth concurrent call on one execution session: 429")

# --- cancellation: closing the stream interrupts ----------------------------
# With a progressToken the answer is an SSE stream; without, a JSON one the
# client stops waiting for. Either way its closing cancels the call.
for meta in (dict(a.meta(), progressToken="p1"), a.meta()):
    body = json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {
        "name": EXEC, "arguments": {"code": "import time\ntime.sleep(60)",
                                    "execution_session_id": sid},
        "_meta": meta}})
    s = socket.create_connection(("127.0.0.1", int(port)))
    s.sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n"
               "Content-Type: application/json\r\n"
               "Accept: application/json, text/event-stream\r\nAuthorization: Bearer %s\r\n"
               "MCP-Protocol-Version: %s\r\nMcp-Method: tools/call\r\nMcp-Name: %s\r\n"
               "Content-Length: %d\r\n\r\n%s"
               % (port, ta, MODERN, EXEC, len(body), body)).encode())
    time.sleep(2)  # the kernel sleeps now
    s.close()
    closed = time.monotonic()
    r = a.call(EXEC, {"code": "print('after')", "execution_session_id": sid})
    took = time.monotonic() - closed
    check("after" in text_of(r), "the next call ran", r)
    check(took < 2.5, "the sleep was interrupted %.2f s after the stream closed" % took, r)
    ok("closing the call's %s stream interrupted time.sleep(60): the next call ended "
       "%.2f s later" % ("SSE" if "progressToken" in meta else "JSON", took))

c = a.call("py_close_session", {"session_id": sid})
check(c["structuredContent"].get("closed") is True, "close_session", c)
r = a.call(EXEC, {"code": "1", "execution_session_id": sid})
check(r["isError"] is True and "unknown execution_session_id" in text_of(r),
      "a closed execution session is unknown", r)
ok("close_session ended the execution session")

# --- the 2025-11-25 path on the same port ----------------------------------
old = Client(url, token=ta)
old.initialize()
r = old.execute("y = 2")
check(r["isError"] is False and old.session_id, "legacy session", r)
check(old.session_id == r["structuredContent"]["session_id"], "legacy: kernel of the session")
ok("initialize still opens a 2025-11-25 session (%s)" % old.session_id[:8])
EOF
