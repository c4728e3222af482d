#!/bin/sh
# 454-client-libs: codeexecd through the MCP client libraries agent
# developers use, pinned in tests/client-libs: the Vercel AI SDK
# (@ai-sdk/mcp), the OpenAI Agents SDK (MCPServerStreamableHttp), Mastra
# (MCPClient), LangChain's MCP adapters (run by LangGraph's ToolNode),
# mcp-remote (a stdio <-> HTTP proxy, driven as its host would over stdio),
# mcp-use (1.x, whose MCPClient is built in) and the MCP Inspector's CLI.
# Each driver uses only what its library hands a model (the result's text
# and images, never structuredContent):
# tools/list names execute_py_code; `x = 41` then `print(x + 1)` prints 42
# (on 2026-07-28 by copying execution_session_id from the first result's
# text, on 2025-11-25 by the MCP session); a matplotlib figure comes back as
# an image/png item; 1/0 says ZeroDivisionError (and isError, where the
# library passes it on). Each prints the revision it negotiated, as seen on
# the wire. Then, against a second daemon with auth.mode tokens, each library
# that can send headers works with the right token and is refused with a
# wrong one and with none, and says so without trying OAuth client
# registration (tokens mode answers a plain Bearer challenge); mcp-remote,
# which registers on any 401, is noted instead.
# tests/client-libs/README.md has what each library does.
. "$(dirname "$0")/lib.sh"
# Seven Node libraries against two daemons; 452 covers the revisions in
# every stage.
slow_suite

require_cmd curl
require_py ipykernel matplotlib
require_binaries

# LIBS_DIR: tests/client-libs with its node_modules (npm ci there; .ci/run
# does it and passes CODEEXECD_TEST_CLIENT_LIBS_DIR), and NODE: the Node 22
# its package.json pins (the libraries need Node >= 22).
require_client_libs() {
	LIBS_DIR=${CODEEXECD_TEST_CLIENT_LIBS_DIR:-$top_srcdir/tests/client-libs}
	for p in @ai-sdk/mcp @openai/agents @mastra/mcp @langchain/mcp-adapters mcp-remote mcp-use \
		@modelcontextprotocol/inspector; do
		[ -d "$LIBS_DIR/node_modules/$p" ] ||
			skip "no $LIBS_DIR/node_modules/$p (run: cd tests/client-libs && npm ci)"
	done
	NODE=$LIBS_DIR/node_modules/node/bin/node
	[ -x "$NODE" ] || skip "no $NODE (run: cd tests/client-libs && npm ci)"
	major=$("$NODE" -p 'process.versions.node.split(".")[0]' 2>/dev/null) || major=0
	[ "$major" -ge 22 ] || skip "$NODE is Node $major; the libraries need 22"
}
require_client_libs

# The drivers: tests/client-libs/CLIENT.mjs.
CLIENTS="ai-sdk openai-agents mastra langchain mcp-remote mcp-use inspector"
FAILED=
SKIPPED=

# drive MODE CLIENT [ENV=VALUE...]: run CLIENT's driver in MODE (run or
# auth) against $URL, with the ENV settings it reads, and print its output
# and verdict. A failure is recorded, named, not fatal: every library is
# tried. One at a time: each starts a Node process heavy enough to load a
# small machine, and its kernels are then the daemon's only ones.
drive() {
	dmode=$1
	dclient=$2
	shift 2
	out=$TMPD/$dclient-$dmode${1:+-opt}.out
	t0=$(date +%s)
	# Libraries write state under HOME (the Inspector's catalog, say), the
	# drivers their temporary directories under TMPDIR: both in $TMPD, gone
	# with it even after a driver that failed. No telemetry leaves the machine.
	env HOME="$TMPD/client-home" TMPDIR="$TMPD/client-tmp" OPENAI_AGENTS_DISABLE_TRACING=1 \
		MASTRA_TELEMETRY_DISABLED=1 MCP_USE_ANONYMIZED_TELEMETRY=false "$@" \
		"$NODE" "$LIBS_DIR/$dclient.mjs" "$URL" py "$dmode" >"$out" 2>&1 && rc=0 || rc=$?
	cat "$out"
	dname="$dclient ($dmode${*:+, $*}; $(($(date +%s) - t0)) s)"
	case $rc in
	0) ok "$dname" ;;
	77)
		SKIPPED="$SKIPPED; $dname"
		echo "# $dname skipped: $(sed -n 's/^SKIP: [^:]*: //p' "$out")"
		;;
	*)
		FAILED="$FAILED; $dname"
		echo "# $dname FAILED (status $rc): $(grep -m1 '^FAIL: ' "$out")"
		;;
	esac
}

# --- one daemon without auth: every library's scenario ----------------------
CFG_WARM=2
start_ready_daemon
mkdir -p "$TMPD/client-home" "$TMPD/client-tmp"
for c in $CLIENTS; do
	drive run "$c"
done
# mcp-remote and the Inspector's CLI speak 2025-11-25 unless told: once more
# each with its opt-in (--protocol auto, --protocol-era auto), on 2026-07-28.
drive run mcp-remote MCP_REMOTE_PROTOCOL=auto
drive run inspector INSPECTOR_PROTOCOL_ERA=auto
echo "# the revision each negotiated:"
cat "$TMPD"/*-run*.out | sed -n 's/^revision: /#   /p'
stop_daemon
# The second daemon logs afresh; what the first logged, when a library failed.
if [ -n "$FAILED" ]; then
	echo "---- the first daemon's log ----" >&2
	tail -n 100 "$TMPD/daemon.log" >&2
fi
mv "$TMPD/daemon.log" "$TMPD/daemon-noauth.log"

# --- one daemon with auth.mode tokens: right, wrong and no token ------------
make_tokens
CFG_EXTRA="auth:
  mode: tokens
  tokens_file: $TMPD/tokens"
write_config
start_daemon
wait_ready
# The drivers read the token from the environment (not their command line).
CODEEXECD_TOKEN=$TOKEN_A
export CODEEXECD_TOKEN
for c in $CLIENTS; do
	drive auth "$c"
done
unset CODEEXECD_TOKEN
echo "# what each library says when the token is refused:"
cat "$TMPD"/*-auth.out | sed -n 's/^autherror: /#   /p'

[ -z "$SKIPPED" ] || echo "# skipped: ${SKIPPED#; }"
[ -z "$FAILED" ] || fail "client libraries failed: ${FAILED#; }"
ok "every client library that can run here passed"
