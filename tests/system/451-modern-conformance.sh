#!/bin/sh
# 451-modern-conformance: the MCP conformance suite 0.2.0-alpha (npm
# @modelcontextprotocol/conformance, pinned in tests/client-modern, on Node
# 22) against one daemon: its 2026-07-28 scenarios that apply to a
# tools-only server with --spec-version 2026-07-28, then, on the same port,
# the 2025-11-25 scenarios 050-conformance runs, with this suite at
# --spec-version 2025-11-25 and with the pinned 0.1.16 of tests/client when
# it is installed. server-stateless runs with
# tests/client-modern/conformance-baseline.yml: four checks need diagnostic
# tools no real server lists. http-custom-header-server-validation checks
# Mcp-Param-Session against execution_session_id (x-mcp-header "Session").
# The other 2026-07-28 scenarios need fixtures
# (tools, prompts and resources named test_*, completions, input requests)
# that only a test server has.
. "$(dirname "$0")/lib.sh"
# Node's conformance suite, twice; 450 tests the same server code in every stage.
slow_suite

MODERN_SCENARIOS="server-stateless http-header-validation http-custom-header-server-validation caching tools-list resources-list prompts-list dns-rebinding-protection server-sse-multiple-streams sep-2164-resource-not-found input-required-result-unsupported-methods"
LEGACY_SCENARIOS="server-initialize ping tools-list logging-set-level server-sse-multiple-streams dns-rebinding-protection"

require_cmd curl
require_py ipykernel
require_binaries
require_client_modern
require_node 22
start_ready_daemon

CONFORMANCE=$MODERN_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js
[ -f "$CONFORMANCE" ] || skip "$CONFORMANCE missing (cd tests/client-modern && npm ci)"
BASELINE=$MODERN_DIR/conformance-baseline.yml
[ -f "$BASELINE" ] || BASELINE=$top_srcdir/tests/client-modern/conformance-baseline.yml
echo "conformance $("$NODE" "$CONFORMANCE" --version) with node $("$NODE" --version)"

failed=
# run NAME SUITE SCENARIO [ARGS...]: one scenario; passes on exit 0 with no
# failed check beyond the baseline's.
run() {
	name=$1 suite=$2 s=$3
	shift 3
	echo "=== $name: scenario $s"
	if "$NODE" "$suite" server --url "$URL" --scenario "$s" "$@" >"$TMPD/$name-$s.out" 2>&1; then
		rc=0
	else
		rc=$?
	fi
	cat "$TMPD/$name-$s.out"
	summary=$(grep -E '^Passed: ' "$TMPD/$name-$s.out" | tail -n 1)
	if [ $rc -eq 0 ] && [ -n "$summary" ]; then
		ok "$name $s: $summary"
	else
		echo "not ok - $name $s: exit $rc, ${summary:-no summary}"
		failed="$failed $name:$s"
	fi
}

for s in $MODERN_SCENARIOS; do
	if [ "$s" = server-stateless ]; then
		run 2026-07-28 "$CONFORMANCE" "$s" --spec-version 2026-07-28 \
			--expected-failures "$BASELINE"
	else
		run 2026-07-28 "$CONFORMANCE" "$s" --spec-version 2026-07-28
		grep -qE 'Passed: ([0-9]+)/\1, 0 failed' "$TMPD/2026-07-28-$s.out" ||
			failed="$failed 2026-07-28:$s(checks)"
	fi
done
for s in $LEGACY_SCENARIOS; do
	run 2025-11-25 "$CONFORMANCE" "$s" --spec-version 2025-11-25
	grep -qE 'Passed: ([0-9]+)/\1, 0 failed' "$TMPD/2025-11-25-$s.out" ||
		failed="$failed 2025-11-25:$s(checks)"
done
OLD=${CODEEXECD_TEST_CLIENT_DIR:-$top_srcdir/tests/client}/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [ -f "$OLD" ]; then
	for s in $LEGACY_SCENARIOS; do
		run 0.1.16 "$OLD" "$s"
		grep -qE 'Passed: ([0-9]+)/\1, 0 failed' "$TMPD/0.1.16-$s.out" ||
			failed="$failed 0.1.16:$s(checks)"
	done
else
	echo "# no $OLD: the 0.1.16 suite is 050-conformance's (cd tests/client && npm ci)"
fi
[ -z "$failed" ] || fail "conformance scenarios failed:$failed"
ok "all conformance scenarios passed on one daemon, 2026-07-28 and 2025-11-25"
