#!/bin/sh
# 467-restart-clients: the official MCP TypeScript clients keep their
# kernel state across a SIGTERM and start of the daemon (persist_sessions):
# the SDK 1.x on 2025-11-25 reconnects with its Mcp-Session-Id, and
# @modelcontextprotocol/client 2.4.0 pinned to 2026-07-28 passes its
# execution_session_id (tests/client/restart-client.mjs,
# tests/client-modern/restart-modern.mjs).
. "$(dirname "$0")/lib.sh"
# Long (several daemons, or every mode): CI's first stage only.
slow_suite

require_py ipykernel
require_py dill
require_binaries
require_client
require_client_modern
require_node 22
setup_tmp
PORT=$(free_port)
CFG_PERSIST=true
write_config
start_daemon
wait_ready
"$NODE" "$CLIENT_DIR/restart-client.mjs" "$URL" py before "$TMPD/sdk.id" ||
	fail "the SDK client before the restart"
"$NODE" "$MODERN_DIR/restart-modern.mjs" "$URL" py before "$TMPD/modern.id" ||
	fail "the 2026-07-28 client before the restart"
stop_daemon TERM
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC after SIGTERM"
start_daemon
wait_ready
"$NODE" "$CLIENT_DIR/restart-client.mjs" "$URL" py after "$TMPD/sdk.id" ||
	fail "the SDK client after the restart"
ok "the SDK (2025-11-25) kept its session across the restart"
"$NODE" "$MODERN_DIR/restart-modern.mjs" "$URL" py after "$TMPD/modern.id" ||
	fail "the 2026-07-28 client after the restart"
ok "@modelcontextprotocol/client (2026-07-28) kept its execution session across the restart"
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
