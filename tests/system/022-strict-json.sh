#!/bin/sh
# 022-strict-json: request bodies are strict JSON. Comments, single quotes,
# trailing commas, NaN and Infinity, raw control bytes, lone surrogates and
# bad UTF-8 get -32700; a \u0000 anywhere (method, tool name, code, id,
# member name) gets -32602 naming the field, and the code does not run;
# ids beyond 64 bits are refused, those within come back exactly as sent.
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

# post BODY: POST BODY (printf escapes allowed: \t, \377) in the session.
post() {
	printf "$1" >"$TMPD/req"
	mcp_post @"$TMPD/req" -H "$H_VER" -H "Mcp-Session-Id: $SESSION"
}

# refused STATUS CODE WHAT BODY [FIELD]: BODY gets HTTP STATUS and JSON-RPC
# error CODE, no result, and (if given) a message naming FIELD.
refused() {
	st=$(post "$4")
	expect_status "$1" "$st" "$3"
	got=$(jget 'd.get("error", {}).get("code")' 2>/dev/null) || got="(not JSON)"
	[ "$got" = "$2" ] || fail "$3: error code $got, want $2: $(cat "$TMPD/body")"
	[ "$(jget '"result" in d')" = false ] || fail "$3: a result came back: $(cat "$TMPD/body")"
	if [ $# -ge 5 ]; then
		jget 'd["error"]["message"]' | grep -qF "$5" ||
			fail "$3: the message does not name $5: $(cat "$TMPD/body")"
	fi
	ok "$3: $2 $(jget 'd["error"]["message"]')"
}

P='{"jsonrpc":"2.0","id":1,"method":"ping"'
CALLP='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_py_code","arguments":'

# --- not JSON: -32700 -----------------------------------------------------------
refused 400 -32700 "a block comment" "$P /* comment */}"
refused 400 -32700 "a line comment" "$P} // comment"
refused 400 -32700 "a comment before the value" "/* c */ $P}"
refused 400 -32700 "single quotes" "{'jsonrpc':'2.0','id':1,'method':'ping'}"
refused 400 -32700 "a single-quoted value" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":'ping'}"
refused 400 -32700 "a trailing comma in an object" "$P,}"
refused 400 -32700 "a trailing comma in an array" "$P,\"params\":{\"a\":[1,2,]}}"
refused 400 -32700 "NaN" "${CALLP}{\"code\":\"1\",\"timeout\":NaN}}}"
refused 400 -32700 "Infinity" "${CALLP}{\"code\":\"1\",\"timeout\":Infinity}}}"
refused 400 -32700 "-Infinity" "${CALLP}{\"code\":\"1\",\"timeout\":-Infinity}}}"
refused 400 -32700 "a raw tab in a string" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\t\"}"
refused 400 -32700 "a lone surrogate" "${CALLP}{\"code\":\"'\\\\ud800'\"}}}"
refused 400 -32700 "bytes that are not UTF-8" "${CALLP}{\"code\":\"'\377'\"}}}"
refused 400 -32700 "a leading zero" "{\"jsonrpc\":\"2.0\",\"id\":01,\"method\":\"ping\"}"
refused 400 -32700 "a hexadecimal number" "{\"jsonrpc\":\"2.0\",\"id\":0x10,\"method\":\"ping\"}"
refused 400 -32700 "two values" "$P}$P}"
refused 400 -32700 "True" "$P,\"params\":{\"a\":True}}"
refused 400 -32700 "an empty body" ""
refused 400 -32600 "the body null" "null"
refused 400 -32600 "a bare number" "42"

# --- NUL: -32602 naming the field, nothing cut short -------------------------------
MARK=$TMPD/ran
refused 400 -32602 "method ping\\\\u0000junk" \
	'{"jsonrpc":"2.0","id":1,"method":"ping\\u0000junk"}' method
refused 400 -32602 "tool name with a NUL" \
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_py_code\\\\u0000junk\",\"arguments\":{\"code\":\"open('$MARK', 'a').write('x')\"}}}" \
	params.name
[ ! -e "$MARK" ] || fail "the call with a NUL in its tool name ran"
refused 400 -32602 "code with a NUL" \
	"${CALLP}{\"code\":\"open('$MARK', 'a').write('A')\\\\u0000open('$MARK', 'a').write('B')\"}}}" \
	params.arguments.code
[ ! -e "$MARK" ] || fail "code with a NUL ran (cut short): $(cat "$MARK")"
refused 400 -32602 "an argument with a NUL" \
	"${CALLP}{\"code\":\"1\",\"execution_session_id\":\"a\\\\u0000b\"}}}" \
	params.arguments.execution_session_id
refused 400 -32602 "an id with a NUL" '{"jsonrpc":"2.0","id":"a\\u0000b","method":"ping"}' id
[ "$(jget 'd["id"]')" = null ] || fail "an id with a NUL was echoed: $(cat "$TMPD/body")"
refused 400 -32602 "a member name with a NUL" \
	'{"jsonrpc":"2.0","id":1,"method":"ping","id\\u0000x":7}' "member name"
refused 400 -32602 "a NUL in initialize" \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a\\u0000b","version":"0"}}}' \
	params.clientInfo.name

# --- ids ----------------------------------------------------------------------------
for id in 99999999999999999999 18446744073709551616 18446744073709551615 \
	9223372036854775808 -9223372036854775809 -99999999999999999999; do
	refused 400 -32700 "id $id" "{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"ping\"}" "64-bit"
done
for id in 9223372036854775807 -9223372036854775808 0 '"99999999999999999999"' \
	'"\\u00e9t\\u00e9 \\\\ \\u0001"'; do
	st=$(post "{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"ping\"}")
	expect_status 200 "$st" "ping with id $id"
	want=$(printf '%b' "$id" | "$PY" -c 'import json, sys; print(repr(json.loads(sys.stdin.read())))')
	[ "$(jget 'repr(d["id"])')" = "$want" ] || fail "id $id came back as $(cat "$TMPD/body")"
	ok "id $id round-trips as $want"
done
st=$(post '{"jsonrpc":"2.0","id":1.5,"method":"ping"}')
expect_status 400 "$st" "a fractional id"

# --- and the session still computes ---------------------------------------------------
st=$(post "${CALLP}{\"code\":\"6 * 7\"}}}")
expect_status 200 "$st" "tools/call 6 * 7 after all that"
jget 'd["result"]["content"][0]["text"]' | grep -q 42 || fail "6 * 7 did not give 42: $(cat "$TMPD/body")"
ok "the session still computes"
