#!/bin/sh
# 468-restart-other-kernel: persist_sessions with a kernel other than
# ipykernel (R's IRkernel), which has no checkpoints. A stop runs no
# checkpoint cell in it; after the start the session goes on under its old
# id in its old directory, its files kept and its variables gone, and the
# first result says so in its stderr.
. "$(dirname "$0")/lib.sh"
# Long (several daemons, or every mode): CI's first stage only.
slow_suite

require_binaries
require_irkernel
setup_tmp
PORT=$(free_port)
CFG_PERSIST=true
CFG_EXTRA="kernel: ir"
write_config
sed -i 's/^name: py$/name: r/' "$TMPD/codeexecd.yaml"
start_daemon
wait_ready
run_py "$URL" "$TMPD" <<'EOF2'
import json, sys
from mcp import Client, check, ok, text_of
from calls import sc

url, tmpd = sys.argv[1], sys.argv[2]
a = Client(url)
a.initialize()
r = a.execute("x <- 41\nwriteLines('here', 'kept.txt')\ngetwd()", tool="execute_r_code")
check(sc(r).get("success") is True, "R runs", r)
json.dump({"a": a.session_id, "cwd": text_of(r)}, open(tmpd + "/ids.json", "w"))
EOF2
stop_daemon TERM
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC after SIGTERM"
if grep -q "checkpoint" "$LOG"; then fail "the stop ran a checkpoint in R: $(grep checkpoint "$LOG")"; fi
start_daemon
wait_ready
run_py "$URL" "$TMPD" <<'EOF2'
import json, sys
from mcp import Client, check, ok, text_of
from calls import sc

url, tmpd = sys.argv[1], sys.argv[2]
ids = json.load(open(tmpd + "/ids.json"))
a = Client(url)
a.session_id = ids["a"]
r = a.execute("c(file.exists('kept.txt'), exists('x'))", tool="execute_r_code", http_timeout=90)
s = sc(r)
check(s.get("success") is True and "TRUE FALSE" in text_of(r), "the file is kept, x is gone", r)
check(s.get("stderr", "").startswith("[codeexecd] the daemon restarted and a new kernel was "
      "started in its directory; variables from earlier calls are lost"), "the result says so", s)
check("restored" not in s and "restore_error" not in s, "nothing claims a restore", s)
ok("an R session goes on after the restart: its files kept, its variables gone, and it says so")
EOF2
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
