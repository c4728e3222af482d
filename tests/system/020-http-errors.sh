#!/bin/sh
# 020-http-errors: the HTTP statuses and JSON-RPC errors of /mcp, each
# checked with curl: session ids (400/404), DELETE, MCP-Protocol-Version
# (400), Origin (403), body size (413), batches (-32600), parse errors
# (-32700), unknown methods (-32601), bad params (-32602), GET (405); with
# auth.mode none, no RFC 9728 metadata (404) and bearer tokens ignored.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
start_ready_daemon

H_VER='MCP-Protocol-Version: 2025-11-25'
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}'
LIST='{"jsonrpc":"2.0","id":2,"method":"tools/list"}'


# expect_rpc_error CODE WHAT: the last body is a JSON-RPC error with CODE.
expect_rpc_error() {
	got=$(jget 'd.get("error", {}).get("code")' 2>/dev/null) || got="(not JSON: $(head -c 300 "$TMPD/body"))"
	if [ "$got" != "$1" ]; then
		cat "$TMPD/headers" "$TMPD/body" >&2
		fail "$2: JSON-RPC error code $got, want $1"
	fi
	ok "$2: JSON-RPC error $1"
}

# expect_json: the last response is application/json.
expect_json() {
	case $(header Content-Type) in
	application/json*) ;;
	*) fail "$1: Content-Type '$(header Content-Type)', want application/json" ;;
	esac
}

# --- initialize and session ids --------------------------------------------
st=$(mcp_post "$INIT")
expect_status 200 "$st" "initialize"
expect_json initialize
SESSION=$(header Mcp-Session-Id)
echo "$SESSION" | grep -qE '^[0-9a-fA-F]{32,}$' ||
	fail "Mcp-Session-Id '$SESSION' is not at least 32 hex digits"
[ "$(jget 'd["jsonrpc"], d["id"], d["result"]["protocolVersion"]')" = '["2.0", 1, "2025-11-25"]' ] ||
	fail "initialize result: $(cat "$TMPD/body")"
[ "$(jget 'd["result"]["serverInfo"]["name"] != ""')" = true ] || fail "no serverInfo.name"
ok "initialize: session id $SESSION"

st=$(mcp_post '{"jsonrpc":"2.0","method":"notifications/initialized"}' -H "$H_VER" -H "Mcp-Session-Id: $SESSION")
expect_status 202 "$st" "notifications/initialized"

# Two initializes give two different ids.
st=$(mcp_post "$INIT")
expect_status 200 "$st" "second initialize"
[ "$(header Mcp-Session-Id)" != "$SESSION" ] || fail "two initializes gave the same session id"
SESSION2=$(header Mcp-Session-Id)

# Version negotiation: each supported version is echoed; an unknown one gets
# the server's latest.
for v in 2025-06-18 2025-03-26 1999-01-01; do
	st=$(mcp_post "$(echo "$INIT" | sed "s/2025-11-25/$v/")")
	expect_status 200 "$st" "initialize with protocolVersion $v"
	want=$v
	[ $v = 1999-01-01 ] && want=2025-11-25
	got=$(jget 'd["result"]["protocolVersion"]')
	[ "$got" = "$want" ] || fail "initialize $v: server chose $got, want $want"
	ok "initialize $v -> $got"
done

st=$(mcp_post "$LIST" -H "$H_VER")
expect_status 400 "$st" "tools/list without Mcp-Session-Id"

st=$(mcp_post "$LIST" -H "$H_VER" -H "Mcp-Session-Id: 0123456789abcdef0123456789abcdef")
expect_status 404 "$st" "tools/list with an unknown session id"

st=$(mcp_post "$LIST" -H "$H_VER" -H "Mcp-Session-Id: not-even-hex")
expect_status 404 "$st" "tools/list with a malformed session id"

st=$(mcp_post "$LIST" -H "$H_VER" -H "Mcp-Session-Id: $SESSION")
expect_status 200 "$st" "tools/list with the session id"
expect_json tools/list
[ "$(jget '[t["name"] for t in d["result"]["tools"]].count("execute_py_code")')" = 1 ] ||
	fail "tools/list lacks execute_py_code: $(cat "$TMPD/body")"

st=$(mcp_post '{"jsonrpc":"2.0","id":"p-1","method":"ping"}' -H "$H_VER" -H "Mcp-Session-Id: $SESSION")
expect_status 200 "$st" "ping"
[ "$(jget 'd["id"], d["result"]')" = '["p-1", {}]' ] || fail "ping answer: $(cat "$TMPD/body")"

# --- MCP-Protocol-Version ---------------------------------------------------
st=$(mcp_post "$LIST" -H 'MCP-Protocol-Version: 1999-01-01' -H "Mcp-Session-Id: $SESSION")
expect_status 400 "$st" "unsupported MCP-Protocol-Version"
st=$(mcp_post "$LIST" -H 'MCP-Protocol-Version: 2025-06-18' -H "Mcp-Session-Id: $SESSION")
expect_status 200 "$st" "MCP-Protocol-Version 2025-06-18"
# Absent header: the server assumes 2025-03-26 (spec, transports).
st=$(mcp_post "$LIST" -H "Mcp-Session-Id: $SESSION")
expect_status 200 "$st" "no MCP-Protocol-Version header"

# --- Origin -------------------------------------------------------------------
st=$(mcp_post "$LIST" -H "$H_VER" -H "Mcp-Session-Id: $SESSION" -H 'Origin: http://evil.example.com')
expect_status 403 "$st" "Origin http://evil.example.com"
st=$(mcp_post "$INIT" -H 'Origin: http://evil.example.com')
expect_status 403 "$st" "initialize from Origin http://evil.example.com"
for o in "http://localhost:$PORT" "http://127.0.0.1:$PORT" "http://[::1]:$PORT"; do
	st=$(mcp_post "$LIST" -H "$H_VER" -H "Mcp-Session-Id: $SESSION" -H "Origin: $o")
	expect_status 200 "$st" "Origin $o"
done

# --- body size: max_request_bytes is 65536 in the test config ----------------
"$PY" -c 'import json; print(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
	"params": {"name": "execute_py_code", "arguments": {"code": "#" + "x" * 200000}}}))' >"$TMPD/big.json"
st=$(mcp_post @"$TMPD/big.json" -H "$H_VER" -H "Mcp-Session-Id: $SESSION")
expect_status 413 "$st" "200 kB body with Content-Length"
st=$(mcp_post @"$TMPD/big.json" -H "$H_VER" -H "Mcp-Session-Id: $SESSION" \
	-H 'Transfer-Encoding: chunked')
expect_status 413 "$st" "200 kB chunked body"
# The daemon still serves after refusing them.
st=$(mcp_post "$LIST" -H "$H_VER" -H "Mcp-Session-Id: $SESSION")
expect_status 200 "$st" "tools/list after the 413s"

# --- JSON-RPC errors ------------------------------------------------------------
st=$(mcp_post '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]' \
	-H "$H_VER" -H "Mcp-Session-Id: $SESSION")
echo "batch: HTTP $st"
expect_rpc_error -32600 "JSON array (batch) body"

st=$(mcp_post '{"jsonrpc":"2.0","id":1,"method":' -H "$H_VER" -H "Mcp-Session-Id: $SESSION")
echo "malformed: HTTP $st"
expect_rpc_error -32700 "malformed JSON"
[ "$(jget 'd["id"]')" = None ] || [ "$(jget 'd["id"]')" = null ] ||
	fail "parse error id must be null: $(cat "$TMPD/body")"

st=$(mcp_post '{"jsonrpc":"2.0","id":1,"method":"ping"}garbage' -H "$H_VER" -H "Mcp-Session-Id: $SESSION")
expect_rpc_error -32700 "JSON followed by garbage"

st=$(mcp_post '"just a string"' -H "$H_VER" -H "Mcp-Session-Id: $SESSION")
expect_rpc_error -32600 "a JSON string instead of an object"

st=$(mcp_post '{"jsonrpc":"1.0","id":5,"method":"ping"}' -H "$H_VER" -H "Mcp-Session-Id: $SESSION")
expect_rpc_error -32600 "jsonrpc 1.0"

st=$(mcp_post '{"jsonrpc":"2.0","id":7,"method":"no/such/method"}' -H "$H_VER" -H "Mcp-Session-Id: $SESSION")
expect_status 200 "$st" "unknown method"
expect_rpc_error -32601 "unknown method"
[ "$(jget 'd["id"]')" = 7 ] || fail "error id must echo the request's: $(cat "$TMPD/body")"

call() {
	mcp_post "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":$1}" \
		-H "$H_VER" -H "Mcp-Session-Id: $SESSION"
}
st=$(call '{"name":"execute_py_code","arguments":{"code":"1","timeout":0}}')
expect_rpc_error -32602 "timeout 0"
st=$(call '{"name":"execute_py_code","arguments":{"code":"1","timeout":-5}}')
expect_rpc_error -32602 "timeout -5"
st=$(call '{"name":"execute_py_code","arguments":{"code":"1","timeout":"soon"}}')
expect_rpc_error -32602 "timeout of the wrong type"
st=$(call '{"name":"execute_py_code","arguments":{"code":42}}')
expect_rpc_error -32602 "code of the wrong type"
st=$(call '{"name":"execute_py_code","arguments":{}}')
expect_rpc_error -32602 "code missing"
st=$(call '{"name":"no_such_tool","arguments":{"code":"1"}}')
expect_rpc_error -32602 "unknown tool"
st=$(call '{"arguments":{"code":"1"}}')
expect_rpc_error -32602 "tools/call without a name"
st=$(call '"not an object"')
expect_rpc_error -32602 "params not an object"
st=$(mcp logging/setLevel '{"level":"loud"}')
expect_rpc_error -32602 "logging/setLevel with an unknown level"
st=$(mcp logging/setLevel '{"level":"warning"}')
expect_status 200 "$st" "logging/setLevel warning"
[ "$(jget 'd["result"]')" = '{}' ] || fail "logging/setLevel result: $(cat "$TMPD/body")"

# A good call still works after all that.
st=$(call '{"name":"execute_py_code","arguments":{"code":"6 * 7","timeout":10}}')
expect_status 200 "$st" "tools/call 6 * 7"
jget 'd["result"]["content"][0]["text"]' | grep -q 42 || fail "6 * 7 did not give 42: $(cat "$TMPD/body")"

# --- GET, DELETE ----------------------------------------------------------------
# GET /mcp is the optional server stream: 405 where there is none, else an
# SSE stream (read for one second only).
st=$(curl -s -o "$TMPD/body" -D "$TMPD/headers" -w '%{http_code}' --max-time 1 \
	-H 'Accept: text/event-stream' -H "$H_VER" -H "Mcp-Session-Id: $SESSION" "$URL" || true)
case $st in
405) ok "GET /mcp: 405, no server stream" ;;
200)
	case $(header Content-Type) in
	text/event-stream*) ok "GET /mcp: 200 text/event-stream" ;;
	*) fail "GET /mcp: 200 with Content-Type '$(header Content-Type)'" ;;
	esac
	st=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H 'Accept: text/event-stream' \
		-H "$H_VER" "$URL" || true)
	# No session, no stream to offer: 405, which clients take as "none".
	expect_status 405 "$st" "GET /mcp without Mcp-Session-Id"
	st=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H 'Accept: text/event-stream' \
		-H "$H_VER" -H "Mcp-Session-Id: 0123456789abcdef0123456789abcdef" "$URL" || true)
	expect_status 404 "$st" "GET /mcp with an unknown session id"
	;;
*) expect_status 405 "$st" "GET /mcp" ;;
esac

st=$(http DELETE -H "$H_VER")
expect_status 400 "$st" "DELETE without Mcp-Session-Id"
st=$(http DELETE -H "$H_VER" -H "Mcp-Session-Id: 0123456789abcdef0123456789abcdef")
expect_status 404 "$st" "DELETE of an unknown session"
st=$(http DELETE -H "$H_VER" -H "Mcp-Session-Id: $SESSION")
case $st in 200 | 204) ok "DELETE /mcp: HTTP $st" ;; *) expect_status 200 "$st" "DELETE /mcp" ;; esac
st=$(mcp_post "$LIST" -H "$H_VER" -H "Mcp-Session-Id: $SESSION")
expect_status 404 "$st" "tools/list in a deleted session"
st=$(call '{"name":"execute_py_code","arguments":{"code":"1"}}')
expect_status 404 "$st" "tools/call in a deleted session"
st=$(http DELETE -H "$H_VER" -H "Mcp-Session-Id: $SESSION")
expect_status 404 "$st" "second DELETE of the same session"

# The other session is untouched.
SESSION=$SESSION2
st=$(mcp_post "$LIST" -H "$H_VER" -H "Mcp-Session-Id: $SESSION")
expect_status 200 "$st" "tools/list in the other session"

# --- other paths ----------------------------------------------------------------
st=$(curl -s -o /dev/null -w '%{http_code}' "$BASE/no-such-path")
expect_status 404 "$st" "GET /no-such-path"

# --- auth.mode none (the default) -------------------------------------------------
# No RFC 9728 metadata, and a bearer token is neither needed nor checked.
for p in /.well-known/oauth-protected-resource /.well-known/oauth-protected-resource/mcp; do
	st=$(curl -s -o /dev/null -w '%{http_code}' "$BASE$p")
	expect_status 404 "$st" "GET $p with auth.mode none"
done
st=$(mcp_post "$LIST" -H "$H_VER" -H "Mcp-Session-Id: $SESSION" -H 'Authorization: Bearer bogus')
expect_status 200 "$st" "a bogus bearer token with auth.mode none"
