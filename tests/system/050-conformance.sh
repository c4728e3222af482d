#!/bin/sh
# 050-conformance: the official MCP conformance suite (npm
# @modelcontextprotocol/conformance, run with Node 22) against /mcp.
. "$(dirname "$0")/lib.sh"

SCENARIOS="server-initialize ping tools-list logging-set-level server-sse-multiple-streams dns-rebinding-protection"

require_cmd curl
require_py ipykernel
require_binaries
require_client
require_node 22
start_ready_daemon

CONFORMANCE=$CLIENT_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js
[ -f "$CONFORMANCE" ] || skip "$CONFORMANCE missing (cd tests/client && npm ci)"
echo "conformance $("$NODE" "$CONFORMANCE" --version) with node $("$NODE" --version)"

failed=
for s in $SCENARIOS; do
	echo "=== scenario $s"
	if "$NODE" "$CONFORMANCE" server --url "$URL" --scenario "$s" >"$TMPD/$s.out" 2>&1; then
		rc=0
	else
		rc=$?
	fi
	cat "$TMPD/$s.out"
	summary=$(grep -E '^Passed: ' "$TMPD/$s.out" | tail -n 1)
	if [ $rc -eq 0 ] && echo "$summary" | grep -qE 'Passed: ([0-9]+)/\1, 0 failed'; then
		ok "conformance $s: $summary"
	else
		echo "not ok - conformance $s: exit $rc, ${summary:-no summary}"
		failed="$failed $s"
	fi
done
[ -z "$failed" ] || fail "conformance scenarios failed:$failed"
ok "all conformance scenarios passed: $SCENARIOS"
