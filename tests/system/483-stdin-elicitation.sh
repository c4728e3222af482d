#!/bin/sh
# 483-stdin-elicitation: a kernel's input() as an MCP elicitation
# (issue 34 item 1) with the official TypeScript SDK 1.x client on
# 2025-11-25 (tests/client/stdin-client.mjs, elicitation/create on the
# call's stream) and the client 2.x on 2026-07-28
# (tests/client-modern/stdin-modern.mjs, InputRequiredResult and retries):
# answered, two prompts in one call, declined (EOFError), cancelled
# (KeyboardInterrupt), timed out, a getpass() prompt never forwarded, and
# a client without the elicitation capability (StdinNotImplementedError,
# as before). Then with
# execution_mode async_only a prompt inside a job fails with
# StdinNotImplementedError, and with adaptive one promoted to a job before
# its prompt gets end of input (EOFError): a job has no client to ask.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
require_client
require_node 18
start_ready_daemon

"$NODE" "$CLIENT_DIR/stdin-client.mjs" "$URL" py || fail "the SDK stdin client failed (status $?)"
ok "official TypeScript SDK: input() answered, declined, cancelled, timed out; getpass refused"

# 2026-07-28: the client 2.x (tests/client-modern), when installed.
MODERN_DIR=${CODEEXECD_TEST_CLIENT_MODERN_DIR:-$top_srcdir/tests/client-modern}
if [ -d "$MODERN_DIR/node_modules/@modelcontextprotocol/client" ]; then
	require_node 22
	"$NODE" "$MODERN_DIR/stdin-modern.mjs" "$URL" py ||
		fail "the 2026-07-28 stdin client failed (status $?)"
	ok "@modelcontextprotocol/client 2.x: InputRequiredResult answered by its retries"
else
	echo "# no $MODERN_DIR/node_modules: the 2026-07-28 part is not run (cd tests/client-modern && npm ci)"
fi

stop_daemon

# A job: the client declared elicitation, but nobody waits on the call.
job_prompt() {
	run_py "$URL" "$1" "$2" "$3" <<'EOF2'
import sys, time
from mcp import Client, check, ok

url, mode, code, want = sys.argv[1:5]
c = Client(url)
c.initialize(capabilities={"elicitation": {}})
r = c.result("tools/call", {"name": "execute_py_code", "arguments": {"code": code}})
job = r["structuredContent"]["job_id"]
for _ in range(150):
    j = c.result("tools/call", {"name": "py_check_job", "arguments": {"job_id": job}})
    if j["structuredContent"].get("status") != "running":
        break
    time.sleep(0.2)
s = j["structuredContent"]
err = s.get("error") or {}
check(err.get("type") == want, "%s: a prompt in a job fails with %s" % (mode, want), s)
ok("%s: input() in a job raises %s" % (mode, want))
EOF2
}

PORT=$(free_port)
CFG_EXTRA='execution_mode: async_only'
write_config
start_daemon
wait_ready
job_prompt async_only "input('x? ')" StdinNotImplementedError
stop_daemon

# Promoted to a job while it runs: the prompt that comes later ends its input.
PORT=$(free_port)
CFG_EXTRA='execution_mode: adaptive
promotion_threshold_s: 1'
write_config
start_daemon
wait_ready
job_prompt adaptive "import time
time.sleep(2)
input('x? ')" EOFError
