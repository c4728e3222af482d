#!/usr/bin/python3
"""make_mcp_corpus.py - write the seed corpus of fuzz_mcp (corpus/mcp).

Every case of the system tests that reach mcp.c (020 http errors, 021 DNS
rebinding, 022 strict JSON, 023 log injection) and of the hostile-request
classes of issue 9 (framing oddities as header sets, huge and deeply
nested bodies, forged session ids, method abuse), in fuzz_mcp's input
format: "METHOD\\nName: value\\n...\\n\\nbody", or a bare body POSTed in the
stub session. Run it from anywhere; it rewrites the directory.
"""

import hashlib
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "mcp")
SID = "0123456789abcdef0123456789abcdef"
OTHER = "fedcba9876543210fedcba9876543210"
VER = "2025-11-25"

INIT = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"%s",'
        '"capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}')


def rpc(method, params=None, id_=1, raw_id=None):
    m = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        m["params"] = params
    text = json.dumps(m, separators=(",", ":"))
    if raw_id is not None:
        text = text.replace('"id":%s' % json.dumps(id_), '"id":' + raw_id, 1)
    return text


def call(name, args, meta=None):
    p = {"name": name, "arguments": args}
    if meta:
        p["_meta"] = meta
    return rpc("tools/call", p, 2)


def request(method, headers, body=""):
    return method + "\n" + "".join("%s: %s\n" % h for h in headers) + "\n" + body


SESSION = [("Mcp-Session-Id", SID), ("MCP-Protocol-Version", VER),
           ("Accept", "application/json, text/event-stream")]

seeds = []

# --- lifecycle and methods (020) -----------------------------------------------
for v in ("2025-11-25", "2025-06-18", "2025-03-26", "1999-01-01"):
    seeds.append(request("POST", [("Accept", "application/json")], INIT % v))
seeds.append(INIT % VER)  # initialize inside a session
seeds.append(request("POST", [("Accept", "application/json")], '{"jsonrpc":"2.0","id":1,"method":"initialize"}'))
seeds.append(request("POST", [("Accept", "application/json")], '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":7}}'))
seeds.append('{"jsonrpc":"2.0","method":"notifications/initialized"}')
seeds.append('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}')
seeds.append('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}')
seeds.append('{"jsonrpc":"2.0","method":"notifications/cancelled"}')
seeds.append('{"jsonrpc":"2.0","id":5,"result":{}}')
seeds.append('{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"x"}}')
seeds.append(rpc("ping"))
seeds.append(rpc("tools/list"))
seeds.append(rpc("no/such/method"))
seeds.append(rpc("logging/setLevel", {"level": "warning"}))
seeds.append(rpc("logging/setLevel", {"level": "loud"}))
seeds.append(rpc("logging/setLevel", "x"))
seeds.append('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]')
seeds.append('"just a string"')
seeds += ["null", "true", "1", "[]", "{}", "{\"jsonrpc\":\"2.0\"}"]
seeds.append('{"jsonrpc":"1.0","id":5,"method":"ping"}')
seeds.append('{"jsonrpc":"2.0","id":1,"method":7}')
seeds.append('{"jsonrpc":"2.0","id":1}')
seeds.append('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}')
seeds.append('{"jsonrpc":"2.0","id":null,"method":"ping"}')
seeds.append('{"jsonrpc":"2.0","id":1,"method":')
seeds.append('{"jsonrpc":"2.0","id":1,"method":"ping"}garbage')
for tool in ("execute_py_code", "py_check_job", "py_cancel_job", "py_list_sessions",
             "py_inspect_session", "py_close_session", "py_parallel_execute",
             "py_check_batch", "no_such_tool"):
    seeds.append(call(tool, {"code": "6 * 7", "timeout": 10}))
for args in ({"code": "1", "timeout": 0}, {"code": "1", "timeout": -5},
             {"code": "1", "timeout": "soon"}, {"code": 42}, {}, {"code": "raise"},
             {"code": "cancel"}, {"code": "1", "execution_session_id": OTHER},
             {"code": "1", "execution_session_id": "unknown"},
             {"code": "1", "execution_session_id": SID}, {"code": "1", "timeout": 1e300}):
    seeds.append(call("execute_py_code", args))
seeds.append(rpc("tools/call", {"arguments": {"code": "1"}}, 8))
seeds.append(rpc("tools/call", "not an object", 8))
seeds.append(rpc("tools/call", {"name": "execute_py_code", "arguments": [1]}, 8))
seeds.append(call("execute_py_code", {"code": "print(1)"}, {"progressToken": "p1"}))
seeds.append(call("execute_py_code", {"code": "print(1)"}, {"progressToken": 7}) + "!")
seeds.append(request("POST", SESSION, call("execute_py_code", {"code": "1"}, {"progressToken": 3})))

# --- headers: sessions, versions, HTTP methods ------------------------------------
LIST = rpc("tools/list", None, 2)
seeds.append(request("POST", [("MCP-Protocol-Version", VER)], LIST))
seeds.append(request("POST", [("Mcp-Session-Id", "0" * 32), ("MCP-Protocol-Version", VER)], LIST))
seeds.append(request("POST", [("Mcp-Session-Id", "not-even-hex")], LIST))
seeds.append(request("POST", [("Mcp-Session-Id", OTHER)], LIST))
seeds.append(request("POST", [("Mcp-Session-Id", SID), ("MCP-Protocol-Version", "1999-01-01")], LIST))
seeds.append(request("POST", [("Mcp-Session-Id", SID + "x" * 300)], LIST))
seeds.append(request("POST", [("Mcp-Session-Id", "")], LIST))
seeds.append(request("GET", [("Accept", "text/event-stream"), ("Mcp-Session-Id", SID)]))
seeds.append(request("GET", [("Accept", "application/json"), ("Mcp-Session-Id", SID)]))
seeds.append(request("GET", [("Accept", "text/event-stream")]))
seeds.append(request("GET", [("Accept", "text/event-stream"), ("Mcp-Session-Id", "0" * 32)]))
seeds.append(request("DELETE", [("Mcp-Session-Id", SID)]))
seeds.append(request("DELETE", [("Mcp-Session-Id", "0" * 32)]))
seeds.append(request("DELETE", []))
for m in ("PUT", "PATCH", "OPTIONS", "HEAD", "TRACE", "CONNECT", "BREW"):
    seeds.append(request(m, SESSION, LIST))

# --- framing oddities and hostile headers (issue 9, items 1 and 4) ----------------
for hs in ([("Content-Length", "5"), ("Transfer-Encoding", "chunked")],
           [("Content-Length", "5"), ("Content-Length", "6")],
           [("Host", "localhost"), ("Host", "evil.com")],
           [("Transfer-Encoding", "chunked, identity")],
           [("Content-Type", "text/plain")], [("Accept", "text/html")],
           [("Origin", "http://127.attacker.example")], [("Origin", "null")], [("Origin", "")],
           [("Origin", "http://127.0.0.1@evil.com")], [("Host", "127.0.0.1.evil.com:8000")],
           [("Host", "127.1")], [("Host", "[::1]:8000")], [("Origin", "http://[::1]:8000")],
           [("X-Flood-%d" % i, "y" * 50) for i in range(40)]):
    seeds.append(request("POST", SESSION + hs, LIST))

# --- strict JSON (022) ------------------------------------------------------------
P = '{"jsonrpc":"2.0","id":1,"method":"ping"'
CALLP = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_py_code","arguments":'
seeds += [P + " /* comment */}", P + "} // comment", "/* c */ " + P + "}",
          "{'jsonrpc':'2.0','id':1,'method':'ping'}", P[:-7] + "'ping'}", P + ",}",
          P + ',"params":{"a":[1,2,]}}', CALLP + '{"code":"1","timeout":NaN}}}',
          CALLP + '{"code":"1","timeout":Infinity}}}', CALLP + '{"code":"1","timeout":-Infinity}}}',
          P[:-1] + '\t"}', CALLP + '{"code":"\'\\ud800\'"}}}', CALLP + '{"code":"\'\\udc00\'"}}}',
          CALLP + '{"code":"\'\\ud83d\\ude00\'"}}}', '{"jsonrpc":"2.0","id":01,"method":"ping"}',
          '{"jsonrpc":"2.0","id":0x10,"method":"ping"}', P + "}" + P + "}",
          P + ',"params":{"a":True}}', "", " ", "\ufeff" + P + "}",
          '{"jsonrpc":"2.0","id":1,"method":"ping\\u0000junk"}',
          '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_py_code\\u0000junk","arguments":{"code":"1"}}}',
          CALLP + '{"code":"print(\'A\')\\u0000print(\'B\')"}}}',
          CALLP + '{"code":"1","execution_session_id":"a\\u0000b"}}}',
          '{"jsonrpc":"2.0","id":"a\\u0000b","method":"ping"}',
          '{"jsonrpc":"2.0","id":1,"method":"ping","id\\u0000x":7}',
          '{"jsonrpc":"2.0","id":1,"method":"ping","params":["\\u0000"]}']
for raw in ("99999999999999999999", "18446744073709551616", "18446744073709551615",
            "9223372036854775808", "-9223372036854775809", "-99999999999999999999",
            "9223372036854775807", "-9223372036854775808", "0", "-0", "1.5", "1e3",
            '"99999999999999999999"', '"\\u00e9t\\u00e9 \\\\ \\u0001"'):
    seeds.append('{"jsonrpc":"2.0","id":%s,"method":"ping"}' % raw)

# --- log injection (023) ----------------------------------------------------------
seeds.append(rpc("ping\n13:00:00 codeexecd crit: forged"))
seeds.append(call("execute_py_code\r\n13:00:00 codeexecd crit: forged", {"code": "1"}))
seeds.append(request("POST", [("Mcp-Session-Id", SID + "\x1b[31m")], LIST))
seeds.append(rpc("\u2028\u202e\x7f\x85"))

# --- size and depth ---------------------------------------------------------------
seeds.append("[" * 33 + "]" * 33)
seeds.append('{"a":' * 40 + "1" + "}" * 40)
seeds.append(rpc("ping", {"x": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}))
seeds.append(call("execute_py_code", {"code": "#" + "x" * 20000}))
seeds.append(rpc("ping", {"k%d" % i: i for i in range(500)}))

# --- MCP 2026-07-28: per-request _meta, mirrored headers (issue 20) ---------------
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}}
TASKS = dict(META, **{"io.modelcontextprotocol/clientCapabilities":
                      {"extensions": {"io.modelcontextprotocol/tasks": {}}}})


def modern(method, params, name=None, version=MODERN, extra=()):
    h = [("MCP-Protocol-Version", version), ("Mcp-Method", method)]
    if name is not None:
        h.append(("Mcp-Name", name))
    return request("POST", h + list(extra), rpc(method, params))


seeds.append(modern("server/discover", {"_meta": META}))
seeds.append(modern("tools/list", {"_meta": META}))
seeds.append(modern("tools/call", {"name": "py_list_sessions", "arguments": {}, "_meta": META},
                    "py_list_sessions"))
seeds.append(modern("tools/call", {"name": "py_list_sessions", "arguments": {}, "_meta": META},
                    "=?base64?cHlfbGlzdF9zZXNzaW9ucw==?="))
seeds.append(modern("tools/call", {"name": "py_list_sessions", "arguments": {}, "_meta": META},
                    "=?base64?cHlf!!!zZXNzaW9ucw?="))
seeds.append(modern("tools/call", {"name": "py_check_job", "arguments": {
    "job_id": "x", "execution_session_id": SID}, "_meta": META}, "py_check_job"))
seeds.append(modern("tools/call", {"name": "execute_py_code", "arguments": {
    "code": "1", "execution_session_id": OTHER}, "_meta": TASKS}, "execute_py_code",
    extra=[("Mcp-Session-Id", SID)]))
seeds.append(modern("tasks/get", {"taskId": SID, "_meta": TASKS}, SID))
seeds.append(modern("tasks/cancel", {"taskId": 7, "_meta": TASKS}, "7"))
seeds.append(modern("resources/read", {"uri": "codeexecd://%s/outputs/a" % SID, "_meta": META},
                    "codeexecd://%s/outputs/a" % SID))
seeds.append(modern("tools/list", {"_meta": dict(META, **{
    "io.modelcontextprotocol/protocolVersion": "1999-01-01"})}, version="1999-01-01"))
seeds.append(modern("tools/list", {}))
seeds.append(modern("initialize", {"_meta": META}))
seeds.append(request("GET", [("MCP-Protocol-Version", MODERN)]))

if os.path.isdir(OUT):
    shutil.rmtree(OUT)
os.makedirs(OUT)
for s in seeds:
    data = s.encode("utf-8")
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print("%d seeds in %s" % (len(set(seeds)), OUT))
