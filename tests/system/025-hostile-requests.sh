#!/bin/sh
# 025-hostile-requests: the front door holds against malformed, hostile and
# odd requests. More than 250 requests - ambiguous
# framing, method abuse, unsupported HTTP and MCP versions, header floods,
# long URLs, huge and deeply nested bodies, wrong content types and accept
# headers, forged and expired session ids, chunked oddities, truncated and
# binary garbage, JSON that is wrong in every way, rebinding Host and Origin
# values, log-injection attempts - each on a connection of its own. Each
# gets an answer that is not a server error (500) within a few seconds, or
# its connection closed (one that stops halfway, once http.header_timeout_s
# has passed); and after each one the daemon is alive, /health
# answers 200 and an existing session still computes correctly.
. "$(dirname "$0")/lib.sh"

require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
# Requests that stop halfway are dropped after http.header_timeout_s.
CFG_EXTRA='http:
  header_timeout_s: 3'
write_config
start_daemon
wait_ready

run_py "$PORT" "$DAEMON_PID" <<'EOF2'
import json, os, socket, struct, sys, time
from mcp import check, ok
from rawhttp import Conn, Reply, request, rpc, call, mcp_headers, new_session, value_of

port, pid = int(sys.argv[1]), int(sys.argv[2])
sid = new_session(port)
gone = new_session(port)
Conn_ = Conn(port)
Conn_.send(request("DELETE", headers=mcp_headers(gone)))
check(Conn_.read_reply().status == 200, "a session to forge expired ids from is closed")
Conn_.close()

H = "Host: 127.0.0.1:%d" % port
MCPH = ["Content-Type: application/json", "Accept: application/json, text/event-stream",
        "Mcp-Session-Id: " + sid, "MCP-Protocol-Version: 2025-11-25"]
cases = []

def add(name, data, wait=8):
    cases.append((name, data, wait))

def raw(lines, body=b""):
    if isinstance(body, str):
        body = body.encode()
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body

def post(body, extra=(), hdrs=None, path="/mcp"):
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    hs = list(MCPH if hdrs is None else hdrs) + list(extra)
    return raw(["POST %s HTTP/1.1" % path, H] + hs + ["Content-Length: %d" % len(body)], body)

ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}'

# --- framing (also 026) ------------------------------------------------------
add("CL + TE", raw(["POST /mcp HTTP/1.1", H] + MCPH + ["Content-Length: 4",
    "Transfer-Encoding: chunked"], "0\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n"))
add("TE + CL", raw(["POST /mcp HTTP/1.1", H] + MCPH + ["Transfer-Encoding: chunked",
    "Content-Length: 40"], "0\r\n\r\n"))
add("two CL", raw(["POST /mcp HTTP/1.1", H] + MCPH + ["Content-Length: 40",
    "Content-Length: 41"], ping))
for v in ("-1", "+40", "40x", "0x28", "40, 40", "", " ", "99999999999999999999999",
          "4e1", "４０"):
    add("Content-Length %r" % v, raw(["POST /mcp HTTP/1.1", H] + MCPH +
                                     ["Content-Length: " + v], ping))
add("two Host", raw(["GET /health HTTP/1.1", H, "Host: evil"]))
add("no Host 1.1", raw(["GET /health HTTP/1.1"]))
add("empty Host", raw(["GET /health HTTP/1.1", "Host:"]))
add("TE in 1.0", raw(["POST /mcp HTTP/1.0", H] + MCPH + ["Transfer-Encoding: chunked"],
                     "0\r\n\r\n"))

# --- chunked oddities -------------------------------------------------------
def chunked(body, te="chunked"):
    return raw(["POST /mcp HTTP/1.1", H] + MCPH + ["Transfer-Encoding: " + te], body)
add("chunked ok", chunked("%x\r\n%s\r\n0\r\n\r\n" % (len(ping), ping)))
add("chunk size overflow", chunked("ffffffffffffffffff\r\nabc\r\n0\r\n\r\n"))
add("chunk size 2^63", chunked("8000000000000000\r\nabc\r\n0\r\n\r\n"))
add("chunk size negative", chunked("-5\r\nabcde\r\n0\r\n\r\n"))
add("chunk size not hex", chunked("zz\r\nabc\r\n0\r\n\r\n"))
add("chunk size empty", chunked("\r\nabc\r\n0\r\n\r\n"))
add("chunk extension", chunked("%x;ext=1;b=\"q\"\r\n%s\r\n0\r\n\r\n" % (len(ping), ping)))
add("chunk longer than said", chunked("2\r\n%s\r\n0\r\n\r\n" % ping))
add("chunk shorter than said", chunked("ff\r\n%s\r\n0\r\n\r\n" % ping), 3)
add("no last chunk", chunked("%x\r\n%s\r\n" % (len(ping), ping)), 3)
add("chunk without CRLF", chunked("%x\r\n%s0\r\n\r\n" % (len(ping), ping)))
add("trailer headers", chunked("%x\r\n%s\r\n0\r\nX-Trailer: 1\r\nX-Other: 2\r\n\r\n"
                               % (len(ping), ping)))
add("1-byte chunks", chunked("".join("1\r\n%s\r\n" % ch for ch in ping) + "0\r\n\r\n"))
add("chunked beyond max_request_bytes", chunked("".join("1000\r\n%s\r\n" % ("x" * 4096)
                                                        for _ in range(20)) + "0\r\n\r\n"))
for te in ("CHUNKED", "chunked, identity", "gzip, chunked", "gzip", "identity",
           "chunked ", "xchunked", "chunked\t"):
    add("Transfer-Encoding %r" % te, chunked("%x\r\n%s\r\n0\r\n\r\n" % (len(ping), ping), te))

# --- methods and paths ------------------------------------------------------
for m in ("PUT", "PATCH", "TRACE", "CONNECT", "HEAD", "OPTIONS", "FOO", "post", "GET",
          "M" * 5000, "PRI", "PROPFIND", "LINK"):
    # (Accept without event streams: a GET would open one, and it lasts.)
    add("method %s" % m[:20], raw(["%s /mcp HTTP/1.1" % m, H] +
                                  [h for h in MCPH if not h.startswith("Accept")] +
                                  ["Accept: application/json", "Content-Length: 0"]))
for path in ("/mcp/", "/MCP", "/mcp?x=1", "/mcp/../health", "//mcp", "/%6dcp", "/mcp%00",
             "/mcp#frag", "/health/../mcp", "*", "http://127.0.0.1/mcp", "mcp", "/",
             "/nonexistent", "/health?" + "a" * 3000, "/.well-known/oauth-protected-resource",
             "/%2e%2e/%2e%2e/etc/passwd", "/mcp;x"):
    add("path %r" % path[:40], post(ping, path=path))
for path in ("/" + "a" * 8000, "/mcp?" + "q=1&" * 5000, "/" + "b" * 100000):
    add("long URL %d" % len(path), raw(["GET %s HTTP/1.1" % path, H]))

# --- HTTP versions and request lines ------------------------------------------
for line in ("GET /health", "GET /health HTTP/0.9", "GET /health HTTP/2.0",
             "GET /health HTTP/1.2", "GET /health HTTP/9.9", "GET /health http/1.1",
             "GET /health HTTP/1.1 extra", "GET  /health  HTTP/1.1", "GET /health HTTP/",
             "GET /health HTTP/1.", "\tGET /health HTTP/1.1", "GET\t/health\tHTTP/1.1",
             "PRI * HTTP/2.0", "", " ", "GET /health HTTP/1.1\x00",
             "GET /heal\x00th HTTP/1.1"):
    add("request line %r" % line[:30], raw([line, H]))
add("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00" * 30)
add("bare LF", b"GET /health HTTP/1.1\nHost: 127.0.0.1\n\n")
add("bare CR", b"GET /health HTTP/1.1\rHost: 127.0.0.1\r\r")
add("mixed line ends", b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\n\r\n")

# --- header floods and odd headers ------------------------------------------
for n in (60, 64, 65, 100, 1000):
    add("%d headers" % n, raw(["GET /health HTTP/1.1", H] + ["X-H%d: v" % i for i in range(n)]))
for size in (8000, 15000, 17000, 100000):
    add("one header of %d bytes" % size, raw(["GET /health HTTP/1.1", H, "X-Big: " + "v" * size]))
add("header without colon", raw(["GET /health HTTP/1.1", H, "NoColonHere"]))
add("space before colon", raw(["GET /health HTTP/1.1", H, "X-A : b"]))
add("empty header name", raw(["GET /health HTTP/1.1", H, ": value"]))
add("obs-fold", raw(["POST /mcp HTTP/1.1", H] + MCPH + ["X-Folded: a", " continued",
                     "Content-Length: %d" % len(ping)], ping))
add("NUL in header", raw(["GET /health HTTP/1.1", H, "X-A: b\x00c"]))
add("high bytes in header", b"GET /health HTTP/1.1\r\n" + H.encode() + b"\r\nX-A: \xff\xfe\r\n\r\n")
add("Expect 100-continue", raw(["POST /mcp HTTP/1.1", H] + MCPH + ["Expect: 100-continue",
                                "Content-Length: %d" % len(ping)], ping))
add("Expect other", raw(["POST /mcp HTTP/1.1", H] + MCPH + ["Expect: 200-ok",
                         "Content-Length: %d" % len(ping)], ping))
add("Upgrade websocket", raw(["GET /mcp HTTP/1.1", H, "Upgrade: websocket",
                              "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZQ==",
                              "Sec-WebSocket-Version: 13"]))
add("Upgrade h2c", raw(["GET /health HTTP/1.1", H, "Upgrade: h2c", "Connection: Upgrade, HTTP2-Settings",
                        "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"]))
add("Connection: close, keep-alive", raw(["GET /health HTTP/1.1", H,
                                          "Connection: close, keep-alive"]))

# --- content types and accept headers ---------------------------------------
base = [h for h in MCPH if not h.startswith(("Content-Type", "Accept"))]
for ct in ("text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded",
           "application/json; charset=utf-16", "application/xml", "", "*/*",
           "application/json" + "; a=b" * 500):
    add("Content-Type %r" % ct[:30], post(ping, hdrs=base + ["Content-Type: " + ct,
                                                             "Accept: application/json"]))
add("no Content-Type", post(ping, hdrs=base + ["Accept: application/json"]))
for acc in ("text/html", "", "*/*", "text/event-stream", "application/json;q=0",
            "application/*", "x" * 9000):
    add("Accept %r" % acc[:30], post(call("1+1"), hdrs=base + ["Content-Type: application/json",
                                                                "Accept: " + acc]))
add("GET stream with Accept text/html", raw(["GET /mcp HTTP/1.1", H, "Accept: text/html",
                                             "Mcp-Session-Id: " + sid]))

# --- session ids and protocol versions --------------------------------------
nos = [h for h in MCPH if not h.startswith(("Mcp-Session-Id", "MCP-Protocol"))]
for s_ in ("0" * 32, "f" * 32, gone, sid.upper(), sid + "0", sid[:-1], "", " ", "x" * 10000,
           "../../etc/passwd", "'; DROP TABLE sessions; --", sid + " ", "%00" + sid,
           "null", "undefined", sid + "," + sid):
    add("session id %r" % s_[:40], post(call("1+1"), hdrs=nos + ["Mcp-Session-Id: " + s_,
                                                               "MCP-Protocol-Version: 2025-11-25"]))
    if sid.lower() not in s_.lower():  # (the one it names would end)
        add("DELETE session %r" % s_[:40], raw(["DELETE /mcp HTTP/1.1", H,
                                                "Mcp-Session-Id: " + s_]))
add("two session ids", post(ping, hdrs=nos + ["Mcp-Session-Id: " + sid, "Mcp-Session-Id: " + gone]))
for v in ("1999-01-01", "", "2025-11-25x", "9" * 5000, "2024-11-05", "2025-06-18", "latest"):
    add("protocol version %r" % v[:20], post(ping, hdrs=nos + ["Mcp-Session-Id: " + sid,
                                                              "MCP-Protocol-Version: " + v]))
for v in ("1999-01-01", "", {"a": 1}, 2025, None, "x" * 10000):
    add("initialize protocolVersion %r" % str(v)[:20], post(json.dumps(rpc("initialize", {
        "protocolVersion": v, "capabilities": {}, "clientInfo": {"name": "h", "version": "0"}})),
        hdrs=nos))
add("initialize without params", post(json.dumps(rpc("initialize")), hdrs=nos))
add("initialize in a session", post(json.dumps(rpc("initialize", {"protocolVersion": "2025-11-25"}))))

# --- bodies: size and nesting -----------------------------------------------
add("CL 10^12, no body", raw(["POST /mcp HTTP/1.1", H] + MCPH + ["Content-Length: 1000000000000"]), 3)
add("body over max_request_bytes", post('{"a":"' + "x" * 100000 + '"}'))
add("CL larger than body", raw(["POST /mcp HTTP/1.1", H] + MCPH + ["Content-Length: 1000"], ping), 3)
for depth in (100, 1000, 10000, 30000):
    add("nested arrays %d" % depth, post("[" * depth + "]" * depth))
    add("nested objects %d" % depth, post('{"a":' * depth + "1" + "}" * depth))
add("nested params 5000", post('{"jsonrpc":"2.0","id":1,"method":"ping","params":' +
                               '{"a":' * 5000 + "1" + "}" * 5000 + "}"))
add("unclosed nesting", post("[" * 20000))
add("50k string code", post(json.dumps(call("'" + "a" * 50000 + "'"))))
add("many keys", post("{" + ",".join('"k%d":%d' % (i, i) for i in range(5000)) + "}"))
add("big batch", post("[" + ",".join([ping] * 1500) + "]"))

# --- JSON, wrong in every way -----------------------------------------------
for body in ("", " ", "null", "true", "false", "1", '"str"', "[]", "[1]", "{}", "{", "}",
             "[", "]", ping + "x", ping + ping, ping + "\x00", "\x00" + ping, "\ufeff" + ping,
             '{"jsonrpc":"2.0","id":1,"method":"ping",}', "{'jsonrpc':'2.0','id':1,'method':'ping'}",
             '{"jsonrpc":"2.0","id":1,"method":"ping"/* c */}', '// c\n' + ping,
             '{"jsonrpc":"2.0","id":NaN,"method":"ping"}', '{"jsonrpc":"2.0","id":Infinity,"method":"ping"}',
             '{"jsonrpc":"2.0","id":-Infinity,"method":"ping"}', '{"jsonrpc":"2.0","id":1e999,"method":"ping"}',
             '{"jsonrpc":"2.0","id":1.5,"method":"ping"}', '{"jsonrpc":"2.0","id":{},"method":"ping"}',
             '{"jsonrpc":"2.0","id":[],"method":"ping"}', '{"jsonrpc":"2.0","id":true,"method":"ping"}',
             '{"jsonrpc":"2.0","id":null,"method":"ping"}', '{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}',
             '{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}', '{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}',
             '{"jsonrpc":"2.0","id":"' + "i" * 20000 + '","method":"ping"}',
             '{"jsonrpc":"2.0","id":1,"method":1}', '{"jsonrpc":"2.0","id":1,"method":null}',
             '{"jsonrpc":"2.0","id":1,"method":{}}', '{"jsonrpc":"2.0","id":1,"method":""}',
             '{"jsonrpc":"2.0","id":1,"method":"' + "m" * 20000 + '"}',
             '{"jsonrpc":"2.0","id":1,"method":"ping\\u0000junk"}',
             '{"jsonrpc":"2.0","id":1,"method":"ping\\n13:00:00 codeexecd crit: forged"}',
             '{"jsonrpc":"2.0","id":1,"method":"\\u001b[31mred"}',
             '{"jsonrpc":"1.0","id":1,"method":"ping"}', '{"jsonrpc":2.0,"id":1,"method":"ping"}',
             '{"id":1,"method":"ping"}', '{"jsonrpc":"2.0","method":"ping","id":1,"id":2}',
             '{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}',
             '{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}',
             '{"jsonrpc":"2.0","id":1,"result":{}}', '{"jsonrpc":"2.0","id":1,"error":{"code":1}}',
             '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}',
             '{"jsonrpc":"2.0","method":"notifications/unknown"}',
             '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":' + "[" * 50 + "]" * 50 + "}}",
             '{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"' + "x" * 5000 + '"}}',
             '{"jsonrpc":"2.0","id":1,"method":"resources/list"}',
             '{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"x"}}',
             '{"jsonrpc":"2.0","id":1,"method":"' + "tools/call" + '"}',
             '"\\ud800"', '{"jsonrpc":"2.0","id":1,"method":"ping\\ud800"}',
             '{"jsonrpc":"2.0","id":1,"method":"pi\\u006eg"}'):
    add("JSON %r" % body[:50], post(body))
for raw_bytes in (b'{"jsonrpc":"2.0","id":1,"method":"p\xffing"}', b"\xc0\xaf",
                  b'{"jsonrpc":"2.0","id":1,"method":"\xed\xa0\x80"}',
                  b'{"jsonrpc":"2.0","id":1,"method":"\xe2\x82"}',
                  ping.encode("utf-16"), ping.encode("utf-32"), os.urandom(512),
                  b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 100):
    add("bytes %r" % raw_bytes[:16], post(raw_bytes))

# --- tools/call arguments ---------------------------------------------------
def tc(name, args):
    p = {"name": name}
    if args is not Ellipsis:
        p["arguments"] = args
    return json.dumps(rpc("tools/call", p))
for name, args in (("execute_py_code", Ellipsis), ("execute_py_code", []), ("execute_py_code", "x"),
                   ("execute_py_code", {"code": 1}), ("execute_py_code", {"code": None}),
                   ("execute_py_code", {"code": ["a"]}), ("execute_py_code", {"code": ""}),
                   ("execute_py_code", {"code": "1", "timeout": -1}),
                   ("execute_py_code", {"code": "1", "timeout": "x"}),
                   ("execute_py_code", {"code": "1", "timeout": 1e308}),
                   ("execute_py_code", {"code": "1", "timeout": 0}),
                   ("execute_py_code", {"code": "1", "execution_session_id": "0" * 32}),
                   ("execute_py_code", {"code": "1", "execution_session_id": gone}),
                   ("execute_py_code", {"code": "print('A')\u0000print('B')"}),
                   ("execute_py_code\u0000junk", {"code": "1"}), ("nope", {}), ("", {}),
                   ("x" * 10000, {}), ("py_check_job", {"job_id": "../../x"}),
                   ("py_check_job", {"job_id": 5}), ("py_cancel_job", {"job_id": "x" * 5000}),
                   ("py_inspect_session", {"session_id": gone}),
                   ("py_close_session", {"session_id": "0" * 32}),
                   ("py_parallel_execute", {"codes": "x"}),
                   ("py_parallel_execute", {"codes": [1, 2]}),
                   ("py_check_batch", {"batch_id": {}})):
    add("tools/call %r %r" % (name[:20], str(args)[:30]), post(tc(name, args)))

# --- rebinding and origins (here only liveness) --------------
for host in ("127.0.0.1.evil.com", "localhost.evil.com", "127.0.0.1@evil.com", "[::1]",
             "2130706433", "0x7f.1", "127.1", "evil.com", "127.0.0.1:99999", "x" * 5000):
    add("Host %r" % host[:30], raw(["POST /mcp HTTP/1.1", "Host: " + host] + MCPH +
                                   ["Content-Length: %d" % len(ping)], ping))
for origin in ("http://127.attacker.example", "http://evil.com", "null", "", "http://localhost.evil.com",
               "http://127.0.0.1@evil.com", "file://", "http://[::1]:1", "o" * 5000):
    add("Origin %r" % origin[:30], post(ping, extra=["Origin: " + origin]))

# --- pipelining and garbage -------------------------------------------------
add("pipelined pings", post(ping) + post(ping) + post(ping))
add("request then garbage", post(ping) + b"\x00\xff garbage \r\n\r\n")
add("pure garbage", os.urandom(2000))
add("zeros", b"\x00" * 5000)
add("TLS ClientHello", b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + os.urandom(160))
add("SSH banner", b"SSH-2.0-OpenSSH_9.0\r\n")
add("headers never end", b"GET /health HTTP/1.1\r\nHost: x\r\n", 1)
add("connect and close", b"", 0)
add("half a request line", b"POST /mc", 1)

# --- the checks -------------------------------------------------------------
check(len(cases) >= 250, "at least 250 hostile requests (%d)" % len(cases))
checker = [None]

def checker_conn():
    if checker[0] is None:
        checker[0] = Conn(port, timeout=15)
    return checker[0]

def check_alive(i, name):
    try:
        os.kill(pid, 0)
    except OSError:
        check(False, "the daemon died after %r" % name)
    for attempt in (1, 2):
        try:
            c = checker_conn()
            c.send(request("GET", "/health"))
            r = c.read_reply()
            if r.status is None:
                raise OSError("closed")
            c.send(request("POST", body=call("n = %d\nn * 3" % i), headers=mcp_headers(sid)))
            r2 = c.read_reply()
            if r2.status is None:
                raise OSError("closed")
            break
        except OSError:
            if checker[0]:
                checker[0].close()
            checker[0] = None
            if attempt == 2:
                raise
    check(r.status == 200, "/health after %r: %s" % (name, r.status), repr(r))
    check(value_of(r2) == str(3 * i), "the session computes after %r" % name, repr(r2))

statuses = {}
t0 = time.monotonic()
for i, (name, data, wait) in enumerate(cases):
    c = Conn(port)
    if wait == 0:
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.close()
        st = "reset"
    else:
        try:
            c.send(data)
        except OSError:
            pass  # the daemon may close before reading everything
        c.sock.settimeout(wait)
        try:
            r = c.read_reply()
            st = r.status if r.status is not None else "closed"
        except socket.timeout:
            st = "waiting"
        except (OSError, ValueError, IndexError):
            st = "closed"
        c.close()
    check(st != 500, "%r: no internal server error" % name)
    check(st != "waiting" or wait < 5, "%r: answered or closed within %d s" % (name, wait))
    statuses[st] = statuses.get(st, 0) + 1
    check_alive(i, name)
ok("%d hostile requests in %.0f s; answers: %s" % (len(cases), time.monotonic() - t0,
   ", ".join("%s x%d" % (k, v) for k, v in sorted(statuses.items(), key=str))))
ok("after each one the daemon was alive, /health said 200 and the session computed")
EOF2
ok "hostile requests"
