#!/bin/sh
# 343-no-root-kernels: started as root, codeexecd never runs kernels as
# root: with neither user nor kernel_uid_range, or with
# user root, it refuses to start and says what to set; with user set its
# kernels run as that user.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: the refusal is about a daemon started as root"
setup_tmp
PORT=$(free_port)

# refused WHAT PATTERN: the daemon must exit non-zero, saying PATTERN.
refused() {
	timeout 120 "$CODEEXECD" -d -f "$TMPD/codeexecd.yaml" -W "$WORKER" >"$TMPD/out.log" 2>&1 &&
		fail "$1: the daemon started"
	grep -q "$2" "$TMPD/out.log" || fail "$1: no reason given: $(cat "$TMPD/out.log")"
	ok "$1: refused ($(grep -o "$2.*" "$TMPD/out.log" | head -c 120))"
}

write_config
config_unset user
refused "neither user nor kernel_uid_range" "kernels would run as root. Set user"
CFG_EXTRA='user: root'
write_config
refused "user: root" "user root is root"

CFG_EXTRA=
write_config
start_daemon
wait_ready
run_py "$URL" <<'PYEOF'
import sys
from mcp import Client, check, ok
c = Client(sys.argv[1])
c.initialize()
out = c.execute("import os; print(os.getuid(), os.geteuid())")["structuredContent"]["stdout"].split()
check(out and "0" not in out, "the kernel does not run as root", out)
ok("the kernel runs as uid %s (user: codeexecd)" % out[0])
PYEOF
