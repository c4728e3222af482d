#!/bin/sh
# 023-log-injection: what clients send is escaped in the daemon's log. A
# method, a tool name, a session id header, an Origin and a Host that
# carry a newline and a forged log line ("13:00:00 codeexecd crit: forged")
# must leave no such line in the log, only the escaped text on the line of
# the request that carried it.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
start_ready_daemon

H_VER='MCP-Protocol-Version: 2025-11-25'
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}'
st=$(mcp_post "$INIT")
expect_status 200 "$st" "initialize"
SESSION=$(header Mcp-Session-Id)

FORGED='13:00:00 codeexecd crit: forged'
# In JSON: a newline, a carriage return, an escape sequence and the forgery.
J="\\\\n$FORGED-1\\\\r\\\\n$FORGED-2\\\\u001b[2K\\\\u2028$FORGED-3"

# post BODY [curl args]: BODY through printf (so \\n stays a JSON escape).
post() {
	b=$1
	shift
	printf "$b" >"$TMPD/req"
	mcp_post @"$TMPD/req" -H "$H_VER" -H "Mcp-Session-Id: $SESSION" "$@"
}

st=$(post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping$J\"}")
expect_status 200 "$st" "a method carrying a forged line"
st=$(post "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_py_code$J\",\"arguments\":{\"code\":\"1\"}}}")
expect_status 200 "$st" "a tool name carrying a forged line"
st=$(post "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list$J\"}")
expect_status 200 "$st" "another method carrying a forged line"
# A notification is logged too (202), and an unknown session id from a header.
st=$(post "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x$J\"}")
expect_status 202 "$st" "a notification carrying a forged line"
# curl refuses raw CR/LF in a header; a raw request carries them.
"$PY" - "$PORT" "$FORGED" <<'EOF'
import socket, sys
port, forged = int(sys.argv[1]), sys.argv[2].encode()
body = b'{"jsonrpc":"2.0","id":5,"method":"ping"}'
for name in (b"Mcp-Session-Id", b"Origin", b"Host", b"User-Agent"):
    host = b"" if name == b"Host" else b"Host: 127.0.0.1\r\n"
    req = (b"POST /mcp HTTP/1.1\r\n" + host + b"Content-Type: application/json\r\n"
           b"Accept: application/json, text/event-stream\r\n" + name + b": x\rx " + forged +
           b"-4\x1b[2K" + forged + b"-5\r\nContent-Length: " + str(len(body)).encode() +
           b"\r\nConnection: close\r\n\r\n" + body)
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(req)
    while s.recv(65536):
        pass
    s.close()
EOF

# Every request above has left its line; now look for a forged one.
wait_for 20 "the notification's log line" grep -q 'notifications/x' "$LOG"
# Each line that holds the text must be one the daemon began (with its pid).
if grep -n "^$FORGED" "$LOG" ||
	grep -n forged "$LOG" | grep -v '^[0-9]*:[0-9:.]* codeexecd\[[0-9]*\] [a-z]*: '; then
	fail "a client forged a log line"
fi
if LC_ALL=C grep -n "$(printf '\033')\|$(printf '\r')" "$LOG"; then
	fail "raw control characters from a client reached the log"
fi
ok "no forged line in the log"
# The text is there, escaped, on the request's own line.
# (The log keeps the first 100 bytes of a method.)
grep -F "ping\\n$FORGED-1\\r\\n$FORGED-2\\x1b[2K\\u2028" "$LOG" >/dev/null ||
	fail "the escaped method is not in the log: $(grep -F ping "$LOG" | tail -n 3)"
ok "the method is logged, escaped: $(grep -F "ping\\n$FORGED" "$LOG" | head -n 1)"
