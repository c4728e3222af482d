#!/bin/sh
# 040-sdk-client: the official MCP TypeScript SDK client (npm
# @modelcontextprotocol/sdk) connects over streamable HTTP, lists the tools
# and runs code (tests/client/sdk-client.mjs).
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
require_client
require_node 18
start_ready_daemon

"$NODE" "$CLIENT_DIR/sdk-client.mjs" "$URL" py || fail "the SDK client failed (status $?)"
ok "official TypeScript SDK client against $URL"
