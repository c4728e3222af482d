#!/bin/sh
# 511-worker-permit: the supervisor's permit table. Fake workers
# (fake-worker.c) send a message their phase does not permit, or one with a
# malformed field: each is killed with exactly one log line saying what it
# sent, a call in flight gets WorkerDied, and /health keeps answering. A
# RESULT that claims text was streamed that was not ends it too, as does a
# descriptor passed with a LOG, or a FILE nobody asked for.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_binaries
FAKE=$top_builddir/tests/system/fake-worker
[ -x "$FAKE" ] || fail "$FAKE not built (make check builds it)"
setup_tmp
# Workers may run under a uid the build tree is closed to: use a copy.
cp "$FAKE" "$TMPD/fake-worker" && FAKE=$TMPD/fake-worker

alive() { case $(proc_state "$1") in Z | gone) return 1 ;; esac; }
logged() { grep -q "$1" "$LOG"; }

# run_mode MODE PATTERN: a daemon whose workers run `fake-worker MODE`; wait
# for the violation PATTERN; check it came once per worker and the worker died.
run_mode() {
	mode=$1
	pattern=$2
	# $TMPD on the command line: what the test leaves behind is found and failed.
	printf '#!/bin/sh\nexec "%s" %s "%s"\n' "$FAKE" "$mode" "$TMPD" >"$TMPD/fake-$mode"
	chmod 755 "$TMPD/fake-$mode"
	WORKER=$TMPD/fake-$mode
	PORT=$(free_port)
	write_config
	LOG=$TMPD/daemon.log
	: >"$LOG"
	start_daemon
	[ -z "${3:-}" ] || $3
	wait_for 60 "$mode: the worker killed for \"$pattern\"" logged "worker [0-9]*: $pattern"
	st=$(health_status)
	[ "$st" = 200 ] || [ "$st" = 503 ] || fail "$mode: /health did not answer (got $st)"
	stop_daemon TERM
	pids=$(sed -n "s/.*worker \([0-9]*\): $pattern.*/\1/p" "$LOG")
	for p in $pids; do
		n=$(grep -c "worker $p: .*killing it" "$LOG" || true)
		[ "$n" -eq 1 ] || fail "$mode: worker $p killed and logged $n times, want once"
		alive "$p" && fail "$mode: worker $p still runs"
	done
	ok "$mode: killed and logged once: $(grep -m 1 "worker [0-9]*: $pattern" "$LOG" | sed 's/^.*worker [0-9]*: //')"
}

# Phase "starting": a RESULT before the kernel is up.
run_mode early-result "sent RESULT, which a worker may not send while starting; killing it"
# Malformed fields, whatever the phase.
run_mode malformed "sent a malformed message: READY: kernel_pid: must be an integer in \[2, 2147483647\]; killing it"
run_mode junk "sent a malformed message: READY: unknown member \"pgid\"; killing it"
# Phase "ready": OUTPUT with no request in flight.
run_mode output-idle "sent OUTPUT, which a worker may not send while ready; killing it"
# Descriptors: only FILE may carry one, and only for a FILE_OPEN in flight.
run_mode fd-with-log "sent a descriptor with LOG; killing it"
run_mode file-idle "sent FILE, which a worker may not send while ready; killing it"
run_mode two-fds "sent descriptors that no frame may carry (two at once, or more than one in a message); killing it"

# Phase "executing": the RESULT of another request. The call gets WorkerDied.
call_wrong_id() {
	wait_ready
	run_py "$URL" >"$TMPD/call.out" <<'PY'
import sys
from mcp import Client
c = Client(sys.argv[1])
c.initialize()
r = c.execute("1+1")
print((r.get("structuredContent", {}).get("error") or {}).get("type"))
PY
}
run_mode wrong-id "RESULT for request [0-9]*, but request [0-9]* is in flight; killing it" call_wrong_id
[ "$(cat "$TMPD/call.out")" = WorkerDied ] ||
	fail "the call in flight got $(cat "$TMPD/call.out"), want WorkerDied"
ok "the call in flight on the killed worker gets WorkerDied"

# A RESULT that says the call was streamed what it was not: the text the
# front would put back is not there. The call gets WorkerDied.
run_mode streamed-lie "sent RESULT for request [0-9]* that says 100 bytes of stdout and 0 of stderr were streamed, of 0 and 0; killing it" call_wrong_id
[ "$(cat "$TMPD/call.out")" = WorkerDied ] ||
	fail "the call on the lying worker got $(cat "$TMPD/call.out"), want WorkerDied"
ok "a RESULT that claims unstreamed text kills its worker; the call gets WorkerDied"
