#!/bin/sh
# 021-dns-rebinding: the Origin and Host checks hold against known
# bypasses. Names that merely start like loopback (127.attacker.example,
# 127.0.0.1.evil.com, localhost.evil.com), userinfo, shorthand and integer
# IPv4 forms, "null" and empty origins each get 403, create no session and
# run no code; loopback and listed origins still work.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
# Landlock off: the mark below lies outside the kernel's own directories.
CFG_EXTRA='allowed_origins: ["https://app.example.org"]
kernel_landlock: off'
write_config
start_daemon
wait_ready

H_VER='MCP-Protocol-Version: 2025-11-25'
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}'

st=$(mcp_post "$INIT")
expect_status 200 "$st" "initialize from curl (no Origin)"
SESSION=$(header Mcp-Session-Id)

# sessions: the session count /health reports.
sessions() {
	[ "$(health_status)" = 200 ] || fail "/health does not answer 200"
	"$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["sessions"])' "$TMPD/health.body"
}

# A call that would leave a mark if it ran, in a directory the kernel's
# user (not root: see kernel_user.sh) may write.
mkdir "$TMPD/mark" && chmod 1777 "$TMPD/mark"
MARK=$TMPD/mark/ran
CALL="{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_py_code\",\"arguments\":{\"code\":\"open('$MARK', 'a').write('x')\"}}}"

# refused HEADER: initialize and a call with HEADER both get 403, and
# neither a session nor the mark appears.
refused() {
	before=$(sessions)
	st=$(mcp_post "$INIT" -H "$1")
	expect_status 403 "$st" "initialize with $1"
	[ -z "$(header Mcp-Session-Id)" ] || fail "$1: 403 came with a session id"
	st=$(mcp_post "$CALL" -H "$H_VER" -H "Mcp-Session-Id: $SESSION" -H "$1")
	expect_status 403 "$st" "tools/call with $1"
	[ ! -e "$MARK" ] || fail "$1: the code ran"
	[ "$(sessions)" = "$before" ] || fail "$1: a session was created"
}

for o in http://127.attacker.example "http://127.attacker.example:$PORT" \
	http://127.0.0.1.evil.com "http://127.0.0.1.evil.com:$PORT" http://127.0.0.1.nip.io \
	http://localhost.evil.com http://127.0.0.1@evil.com http://evil.com@127.0.0.1 \
	http://127.1 "http://2130706433:$PORT" http://0x7f.1 http://0177.0.0.1 \
	"http://127.0.0.1:$PORT/" http://%6cocalhost null file:// \
	https://app.example.org.evil.com http://app.example.org https://app.example.org:8443; do
	refused "Origin: $o"
done
refused 'Origin;' # an empty Origin header

for h in "127.0.0.1.evil.com:$PORT" 127.0.0.1.evil.com "127.attacker.example:$PORT" \
	"localhost.evil.com:$PORT" "127.0.0.1.nip.io:$PORT" "127.0.0.1@evil.com:$PORT" \
	"127.1:$PORT" "2130706433:$PORT" "0x7f.1:$PORT" "127.0.0.1.:$PORT" \
	"app.example.org.evil.com" "app.example.org:8443" "evil.com:$PORT" "[::ffff:127.0.0.1]:$PORT"; do
	refused "Host: $h"
done

# What must keep working: loopback origins and Host names, and the listed one.
for h in "Origin: http://localhost:$PORT" "Origin: http://127.0.0.1:$PORT" \
	"Origin: http://[::1]:$PORT" "Origin: http://LOCALHOST.:3000" \
	"Origin: https://app.example.org" "Origin: https://app.example.org:443" \
	"Host: localhost:$PORT" "Host: LocalHost.:$PORT" "Host: 127.0.0.1:$PORT" \
	"Host: 127.9.9.9:$PORT" "Host: [::1]:$PORT" "Host: app.example.org"; do
	st=$(mcp_post '{"jsonrpc":"2.0","id":3,"method":"tools/list"}' -H "$H_VER" \
		-H "Mcp-Session-Id: $SESSION" -H "$h")
	expect_status 200 "$st" "tools/list with $h"
done

# And the call itself runs when nothing is wrong: the mark proves it could.
st=$(mcp_post "$CALL" -H "$H_VER" -H "Mcp-Session-Id: $SESSION" -H "Origin: http://localhost:$PORT")
expect_status 200 "$st" "tools/call from a loopback origin"
[ -e "$MARK" ] || fail "the allowed call did not run"
ok "the allowed call ran"
