#!/bin/sh
# 026-http-framing: requests whose framing a proxy could read differently
# from the daemon get 400 and a closed connection, so that
# nothing can be smuggled behind a proxy: Content-Length with
# Transfer-Encoding, two different Content-Lengths, a Content-Length that is
# not a number, two Host headers, HTTP/1.1 without Host. A CORS preflight is
# answered for an allowed origin only, naming it, never with "*".
. "$(dirname "$0")/lib.sh"

require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_EXTRA='allowed_origins: ["https://notebook.example.org"]'
write_config
start_daemon
wait_ready

run_py "$PORT" <<'EOF2'
import sys
from mcp import check, ok
from rawhttp import Conn, request, rpc, mcp_headers, new_session, compute, health

port = int(sys.argv[1])
sid = new_session(port)
ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'

def head(lines, body=b""):
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body

H = "Host: 127.0.0.1:%d" % port
S = ["Mcp-Session-Id: " + sid, "MCP-Protocol-Version: 2025-11-25",
     "Content-Type: application/json", "Accept: application/json, text/event-stream"]
smuggled = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
cases = [
    ("Content-Length and Transfer-Encoding",
     head(["POST /mcp HTTP/1.1", H] + S + ["Content-Length: %d" % len(ping),
          "Transfer-Encoding: chunked"], ping)),
    ("Transfer-Encoding and Content-Length (other order)",
     head(["POST /mcp HTTP/1.1", H] + S + ["Transfer-Encoding: chunked",
          "Content-Length: 5"], b"0\r\n\r\n" + smuggled)),
    ("two different Content-Lengths",
     head(["POST /mcp HTTP/1.1", H] + S + ["Content-Length: %d" % len(ping),
          "Content-Length: %d" % (len(ping) + len(smuggled))], ping + smuggled)),
    ("Content-Length with a sign", head(["POST /mcp HTTP/1.1", H] + S +
                                        ["Content-Length: +%d" % len(ping)], ping)),
    ("Content-Length with trailing junk", head(["POST /mcp HTTP/1.1", H] + S +
                                               ["Content-Length: %dx" % len(ping)], ping)),
    ("Content-Length as a list", head(["POST /mcp HTTP/1.1", H] + S +
                                      ["Content-Length: %d, %d" % (len(ping), len(ping))], ping)),
    ("two Transfer-Encodings", head(["POST /mcp HTTP/1.1", H] + S +
                                    ["Transfer-Encoding: chunked",
                                     "Transfer-Encoding: chunked"], b"0\r\n\r\n")),
    ("Transfer-Encoding in HTTP/1.0", head(["POST /mcp HTTP/1.0", H] + S +
                                          ["Transfer-Encoding: chunked"], b"0\r\n\r\n")),
    ("two Host headers", head(["GET /health HTTP/1.1", H, "Host: evil.example.com"])),
    ("two Host headers on /mcp", head(["POST /mcp HTTP/1.1", H, "Host: 127.0.0.1"] + S +
                                      ["Content-Length: %d" % len(ping)], ping)),
    ("HTTP/1.1 without Host", head(["GET /health HTTP/1.1"])),
    ("HTTP/1.1 POST without Host", head(["POST /mcp HTTP/1.1"] + S +
                                        ["Content-Length: %d" % len(ping)], ping)),
]
for what, data in cases:
    c = Conn(port)
    c.send(data)
    r = c.read_reply()
    check(r.status == 400, "%s: HTTP 400" % what, repr(r))
    check(r.closed and c.closed_by_peer(5), "%s: the connection is closed" % what, repr(r))
    c.close()
    ok("%s: 400, connection closed" % what)

# Well-framed requests still work: one identical Content-Length twice is
# not ambiguous, HTTP/1.0 needs no Host, chunked bodies are read.
c = Conn(port)
c.send(head(["POST /mcp HTTP/1.1", H] + S + ["Transfer-Encoding: chunked"],
            b"%x\r\n%s\r\n0\r\n\r\n" % (len(ping), ping)))
r = c.read_reply()
check(r.status == 200 and r.json().get("result") == {}, "a chunked POST is answered", repr(r))
c.close()
c = Conn(port)
c.send(head(["GET /health HTTP/1.0"]))
r = c.read_reply()
check(r.status == 200, "HTTP/1.0 without Host is answered", repr(r))
c.close()
ok("well-framed chunked and HTTP/1.0 requests are answered")

# CORS preflight: only for allowed origins, naming the origin.
def preflight(origin, host=H):
    c = Conn(port)
    c.send(head(["OPTIONS /mcp HTTP/1.1", host, "Origin: " + origin,
                 "Access-Control-Request-Method: POST",
                 "Access-Control-Request-Headers: content-type, mcp-session-id"]))
    r = c.read_reply()
    c.close()
    return r

for origin in ("http://evil.example.com", "http://127.0.0.1.evil.example.com", "null"):
    r = preflight(origin)
    check(r.status == 403, "preflight from %s: 403" % origin, repr(r))
    check("access-control-allow-origin" not in r.headers,
          "preflight from %s: no Access-Control-Allow-Origin" % origin, repr(r))
    ok("preflight from %s refused, no CORS headers" % origin)
for origin in ("https://notebook.example.org", "http://localhost:3000"):
    r = preflight(origin)
    check(r.status in (200, 204), "preflight from %s is answered" % origin, repr(r))
    check(r.headers.get("access-control-allow-origin") == origin,
          "preflight from %s names it, not *" % origin, repr(r))
    check("mcp-session-id" in r.headers.get("access-control-allow-headers", "").lower(),
          "preflight allows Mcp-Session-Id", repr(r))
    check("POST" in r.headers.get("access-control-allow-methods", ""),
          "preflight allows POST", repr(r))
    ok("preflight from %s: %d, Access-Control-Allow-Origin: %s"
       % (origin, r.status, r.headers["access-control-allow-origin"]))

# The answer to an allowed origin's request names it too; nothing says "*".
c = Conn(port)
c.send(head(["POST /mcp HTTP/1.1", H, "Origin: https://notebook.example.org"] + S +
            ["Content-Length: %d" % len(ping)], ping))
r = c.read_reply()
c.close()
check(r.status == 200 and r.headers.get("access-control-allow-origin") ==
      "https://notebook.example.org", "an allowed origin's POST names the origin", repr(r))
check("mcp-session-id" in r.headers.get("access-control-expose-headers", "").lower(),
      "and exposes Mcp-Session-Id", repr(r))
r = preflight("http://evil.example.com")
check(r.headers.get("access-control-allow-origin") != "*", "never *", repr(r))
ok("an allowed origin's request is answered with its origin, never *")

st, _ = health(port)
v, _, r = compute(port, sid, "6 * 7")
check(st == 200 and v == "42", "the daemon still serves", repr(r))
ok("after all of it the session computes 6 * 7 = 42")
EOF2
ok "HTTP framing and CORS"
