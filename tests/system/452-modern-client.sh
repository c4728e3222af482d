#!/bin/sh
# 452-modern-client: the official MCP TypeScript client 2.4.0 (npm
# @modelcontextprotocol/client, pinned in tests/client-modern) against one
# daemon. Pinned to 2026-07-28: two calls with one execution_session_id
# share state, a call without one gets a new session, close_session ends
# it, and no response carries Mcp-Session-Id. On the legacy setting the
# same client initializes a 2025-11-25 session and its calls share its
# kernel.
. "$(dirname "$0")/lib.sh"
# Node's client; 450 tests the same server code in every stage.
slow_suite

require_cmd curl
require_py ipykernel
require_binaries
require_client_modern
require_node 22
start_ready_daemon

# The script imports the client from the node_modules beside it: take the
# copy in MODERN_DIR (the source tree's, where npm ci ran).
SCRIPT=$MODERN_DIR/modern-client.mjs
[ -f "$SCRIPT" ] || skip "$SCRIPT missing"
for mode in modern legacy; do
	"$NODE" "$SCRIPT" "$URL" py $mode || fail "the client on the $mode setting failed"
	ok "@modelcontextprotocol/client 2.4.0, $mode setting"
done
