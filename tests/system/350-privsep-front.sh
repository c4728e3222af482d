#!/bin/sh
# 350-privsep-front: the privileged parent against a compromised front.
# Through the test hook (CODEEXECD_TEST_FRONT_FILTER,
# front_testhook.h) the front sends the parent what a subverted front
# would: ids it was never given, the parent's own pid and pids 1 and -1 as
# kernels to kill, the directory of a live worker, another network mode,
# records of another version, of the parent's own range, with a descriptor
# attached, and garbage. Each is refused with one log line, and nothing
# happens: every process lives on and the session keeps its variables.
# With kernel_uid_range the front's identity can neither read a kernel's
# working directory nor signal the kernel. Last, the parent is killed: the
# front, the workers and the kernels end with it (item 4).
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_cmd setpriv
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: kernels run under uids from kernel_uid_range"
setup_tmp
chmod 711 "$TMPD"
worker_for_other_uids
PORT=$(free_port)
CFG_EXTRA='kernel_uid_range: "63390-63393"'
write_config
chmod 644 "$TMPD/codeexecd.yaml"
CODEEXECD_TEST_FRONT_FILTER=1
export CODEEXECD_TEST_FRONT_FILTER
start_daemon
unset CODEEXECD_TEST_FRONT_FILTER
wait_ready
FRONT=$(front_pid)
[ -n "$FRONT" ] || fail "no front"

run_py "$URL" "$TMPD/session" <<'PY' || fail "a session before the lies"
import sys
from mcp import Client, check, value_of
c = Client(sys.argv[1])
c.initialize()
r = c.execute("import os\nx = 41\nprint(os.getpid(), os.getcwd())")
check(r["structuredContent"]["success"], "code runs", r)
open(sys.argv[2], "w").write(c.session_id + " " + r["structuredContent"]["stdout"])
PY
read -r SID KPID KDIR <"$TMPD/session"

# The front's identity and the kernel's: no reading, no signalling.
FUID=$(awk '/^Uid:/ { print $2 }' "/proc/$FRONT/status")
FGID=$(awk '/^Gid:/ { print $2 }' "/proc/$FRONT/status")
KUID=$(awk '/^Uid:/ { print $2 }' "/proc/$KPID/status")
[ "$FUID" != "$KUID" ] || fail "the front and the kernel share uid $FUID"
as_front() { setpriv --reuid="$FUID" --regid="$FGID" --clear-groups "$@"; }
as_front ls "$KDIR" >/dev/null 2>&1 && fail "uid $FUID (the front's) can list the kernel's directory $KDIR"
as_front kill -0 "$KPID" 2>/dev/null && fail "uid $FUID (the front's) can signal kernel $KPID"
ok "the front's uid $FUID can neither list $KDIR nor signal kernel $KPID (uid $KUID)"

# What the front cannot read it says so, rather than count it as empty.
run_py "$URL" "$SID" <<'PY' || fail "inspect_session and list_sessions under kernel_uid_range"
import sys
from mcp import Client, check, ok
from calls import tool, sc
c = Client(sys.argv[1])
c.session_id = sys.argv[2]
r = sc(tool(c, "py_inspect_session", {}))
check(r.get("files", 0) is None and "kernel_uid_range" in r.get("files_note", ""),
      "inspect_session says the directory is not listed, and why", r)
check(r.get("working_directory_bytes", 0) is None and
      "not counted" in r.get("working_directory_usage", ""), "no usage counted as 0", r)
ok("inspect_session: the front says it may not read the kernel's directory")
PY

n0=$(grep -c "front: refused" "$LOG" || true)
curl -s -o /dev/null --max-time 5 -H 'X-Codeexecd-Test: lie' "$BASE/health" || true
# Eleven: REMOVE_SESSION_DIR of a live worker's directory is no longer
# refused but deferred until that worker is reaped (never under it).
enough() { [ "$(grep -c "front: refused" "$LOG")" -ge $((n0 + 11)) ]; }
wait_for 20 "eleven refusals in the parent's log" enough
for what in \
	"END_WORKER (999999): worker 999999 was never started" \
	"KILL_KERNEL (999999): worker 999999 was never started" \
	"REMOVE_SESSION_DIR (999999): directory 999999 was never made" \
	"KILL_KERNEL .*is not the kernel claimed" \
	"SPAWN_WORKER (424242): network mode" \
	"is no process of ours" \
	"protocol version 1, not" \
	"a message only the parent sends" \
	"END_WORKER carries 1 descriptors" \
	"malformed"; do
	grep -q "front: refused $what" "$LOG" || grep -q "front: refused .*$what" "$LOG" ||
		fail "no refusal saying '$what' in the log"
done
ok "the parent refused and logged every request of the lying front"

for p in "$DAEMON_PID" "$FRONT" "$KPID"; do
	st=$(proc_state "$p")
	[ "$st" != gone ] && [ "$st" != Z ] || fail "process $p died of the lies"
done
[ -d "$KDIR" ] || fail "the live session's directory $KDIR was removed"
run_py "$URL" "$SID" <<'PY' || fail "the session after the lies"
import sys
from mcp import Client, check, ok, value_of
c = Client(sys.argv[1])
c.session_id = sys.argv[2]
check(value_of(c.execute("x + 1")) == "42", "the session keeps its kernel and x", Client.last)
ok("the session keeps its kernel and its variables")
PY
ok "nothing happened: the parent, the front and the kernel live on"

# The parent dies: the front goes with it (PDEATHSIG), and the workers,
# whose sockets the front held, end their kernels. Nothing is left.
WORKERS=$(worker_pids)
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null || true
DAEMON_PID=
gone() { for p in "$@"; do st=$(proc_state "$p"); [ "$st" = gone ] || [ "$st" = Z ] || return 1; done; }
wait_for 20 "the front, the workers and the kernel to end after the parent" gone "$FRONT" $WORKERS "$KPID"
ok "the parent killed: its front, workers and kernels end too"
