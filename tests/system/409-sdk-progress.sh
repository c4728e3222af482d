#!/bin/sh
# 409-sdk-progress: the official MCP TypeScript SDK client (npm
# @modelcontextprotocol/sdk) drives one ~32 s call with an onprogress
# callback and a 10 s request timeout that resetTimeoutOnProgress keeps
# alive on the daemon's progress notifications (default progress_interval_s);
# without resetTimeoutOnProgress the SDK times out and cancels, and the
# kernel stops (tests/client/progress-client.mjs).
. "$(dirname "$0")/lib.sh"
# Node's SDK client is slow to start; 403 tests progress in every stage.
slow_suite

require_cmd curl
require_py ipykernel
require_binaries
require_client
require_node 18
start_ready_daemon

"$NODE" "$CLIENT_DIR/progress-client.mjs" "$URL" py || fail "the SDK progress client failed (status $?)"
ok "official TypeScript SDK: a 32 s call kept alive by progress through a 10 s timeout"
