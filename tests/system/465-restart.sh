#!/bin/sh
# 465-restart: with persist_sessions, sessions outlive the daemon.
# SIGTERM checkpoints every session with a kernel ("shutdown"), keeps its
# directory and writes the journal (state_dir/journal/sessions.json, 0600); the
# next start has every session back under its old id, hibernated: a
# 2025-11-25 client's Mcp-Session-Id and a 2026-07-28 execution_session_id
# both go on, each first call restoring the checkpoint (said exactly), a
# session that never ran code too. A SIGKILL of the whole daemon loses only
# what changed after each session's last checkpoint; a SIGKILL of the
# front, which the parent replaces, loses nothing. Directories the
# journal does not name (a stray one, a symbolic link) are removed, never
# followed. With persist_sessions false a restart ends every session.
. "$(dirname "$0")/lib.sh"
# Long (several daemons, or every mode): CI's first stage only.
slow_suite

require_py ipykernel
require_py dill
require_py numpy
require_binaries
setup_tmp
PORT=$(free_port)
CFG_PERSIST=true

# One round: plain, or with kernel_uid_range ("uids").
one_round() {
	round=$1
	CFG_WARM=1
	CFG_EXTRA=
	if [ "$round" = uids ]; then
		worker_for_other_uids
		chmod 711 "$TMPD"
		CFG_WARM=2
		CFG_EXTRA='kernel_uid_range: "63480-63483"'
	fi
	write_config
	start_daemon
	wait_ready

	# Phase 1: three sessions, then SIGTERM.
	run_py "$URL" "$TMPD" "$round" <<'EOF2'
import json, sys
from mcp import Client, ModernClient, check, ok, value_of
from calls import sc

url, tmpd = sys.argv[1], sys.argv[2]
a = Client(url)
a.initialize()
r = a.execute("import os, numpy as np\nx = 41\narr = np.arange(1000)\n"
              "open('kept.txt', 'w').write('here')\n(os.getuid(), os.getcwd())")
check(sc(r).get("success") is True, "a's first call runs", r)
uid, cwd = eval(value_of(r))
m = ModernClient(url)
r = m.call("execute_py_code", {"code": "y = 'modern'"})
esid = sc(r)["execution_session_id"]
idle = Client(url)
idle.initialize()
json.dump({"a": a.session_id, "esid": esid, "idle": idle.session_id, "uid": uid, "cwd": cwd},
          open(tmpd + "/ids.json", "w"))
ok("a (2025-11-25), an execution session (2026-07-28) and an idle session before the stop")
EOF2
	stop_daemon TERM
	[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC after SIGTERM"
	grep -q "sessions kept in the journal for the next start: 3" "$TMPD/daemon.log" ||
		fail "the stop did not say it kept the sessions"
	[ "$(stat -c %a "$TMPD/state/journal/sessions.json")" = 600 ] || fail "the journal is not mode 0600"
	ok "SIGTERM kept the sessions: $(grep -o '"id"' "$TMPD/state/journal/sessions.json" | wc -l) in the journal"

	# Strays the journal does not name: removed at the start, a link never followed.
	stray=$TMPD/state/sessions/0123456789abcdef
	mkdir "$stray"
	chown codeexecd "$stray" 2>/dev/null || true
	mkdir "$TMPD/outside" && touch "$TMPD/outside/precious"
	ln -s "$TMPD/outside" "$TMPD/state/sessions/fedcba9876543210"

	start_daemon
	wait_ready
	poll_until 10 test ! -e "$stray" || fail "a directory the journal does not name was kept"
	[ ! -e "$TMPD/state/sessions/fedcba9876543210" ] || fail "a link in sessions/ was kept"
	[ -e "$TMPD/outside/precious" ] || fail "the link was followed"
	ok "a stray directory and a link were removed, the link not followed"

	run_py "$URL" "$TMPD" "$round" <<'EOF2'
import glob, json, os, sys
from mcp import Client, ModernClient, check, ok, text_of, value_of
from calls import sc, tool

url, tmpd = sys.argv[1], sys.argv[2]
ids = json.load(open(tmpd + "/ids.json"))


def latest(cwd):
    metas = [json.load(open(p)) for p in glob.glob(cwd + "/.codeexecd-checkpoints/*.json")]
    return max(metas, key=lambda m: m["taken_at"])


a = Client(url)
a.session_id = ids["a"]
r = a.execute("x, int(arr.sum()), open('kept.txt').read(), os.getuid(), os.getcwd()",
              http_timeout=90)
s = sc(r)
check(s.get("success") is True, "a's first call after the restart runs", r)
x, total, kept, uid, cwd = eval(value_of(r))
check((x, total, kept) == (41, 499500, "here"), "a's variables and files survived", r)
check((uid, cwd) == (ids["uid"], ids["cwd"]), "in its old directory, as its old uid", r)
check(os.stat(cwd).st_uid == uid, "which still owns the directory", cwd)
meta = latest(cwd)
at = meta["taken_at"]
check(meta["label"] == "shutdown", "the checkpoint was the stop's", meta)
check(s.get("restored") == {"checkpoint": meta["checkpoint"], "taken_at": at,
                            "names": ["arr", "np", "os", "x"], "skipped": []},
      "restored names the stop's checkpoint", s)
check(text_of(r).startswith("[codeexecd] the kernel was restarted and checkpoint %s, taken at "
      "%s, was restored (4 names): what changed after %s is lost\n" % (meta["checkpoint"], at, at)),
      "the text says so first", text_of(r))
ok("a's Mcp-Session-Id goes on after the restart, checkpoint %s restored" % meta["checkpoint"])

m = ModernClient(url)
r = m.call("execute_py_code", {"code": "y", "execution_session_id": ids["esid"]})
check(value_of(r) == "'modern'" and (sc(r).get("restored") or {}).get("names") == ["y"],
      "the 2026-07-28 execution session goes on with y restored", r)
ok("the execution_session_id goes on after the restart")

idle = Client(url)
idle.session_id = ids["idle"]
r = idle.execute("1 + 1")
check(value_of(r) == "2" and "restored" not in sc(r) and "restore_error" not in sc(r),
      "a session that never ran code goes on, nothing to restore", r)
ok("the idle session's id goes on")

# SIGKILL of the whole daemon: what the last checkpoint holds survives.
r = a.execute("z = 7")
r = tool(a, "py_checkpoint", {"label": "before the kill"})
check(sc(r).get("names") is not None, "a checkpoint is taken", r)
a.execute("w = 'after the checkpoint'")
EOF2
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null || true
	DAEMON_PID=
	no_leftovers() { [ -z "$(leftovers)" ]; }
	poll_until 20 no_leftovers || fail "the front or a kernel outlived the SIGKILL of the daemon"
	start_daemon
	wait_ready
	run_py "$URL" "$TMPD" "$round" <<'EOF2'
import json, sys
from mcp import Client, check, ok, value_of
from calls import sc

url, tmpd = sys.argv[1], sys.argv[2]
ids = json.load(open(tmpd + "/ids.json"))
a = Client(url)
a.session_id = ids["a"]
r = a.execute("x, z, 'w' in dir()", http_timeout=90)
check(eval(value_of(r)) == (41, 7, False), "after SIGKILL: what the checkpoint held survives, "
      "what came after it is lost", r)
check((sc(r).get("restored") or {}).get("names") == ["arr", "np", "os", "x", "z"],
      "restored says so", r)
ok("SIGKILL of the daemon lost only what changed after the last checkpoint")
EOF2

	# SIGKILL of the front: the parent starts a new one, which takes over
	# the live kernel (482-front-crash has the details): nothing is lost,
	# not even what came after the last checkpoint.
	run_py "$URL" "$TMPD" "$round" <<'EOF2'
import json, sys
from mcp import Client, check, value_of
from calls import sc, tool

url, tmpd = sys.argv[1], sys.argv[2]
a = Client(url)
a.session_id = json.load(open(tmpd + "/ids.json"))["a"]
a.execute("v = 5")
check(sc(tool(a, "py_checkpoint", {})).get("names") is not None, "a checkpoint is taken")
a.execute("v2 = 'after it'")
EOF2
	front=$(front_pid)
	[ -n "$front" ] || fail "no front"
	sleep 2.5 # the journal is written each second it changed
	kill -KILL "$front"
	wait_for 30 "a new front" grep -q "starting a new front: it takes over every live worker" "$LOG"
	wait_ready
	run_py "$URL" "$TMPD" "$round" <<'EOF2'
import json, sys
from mcp import Client, check, ok, value_of
from calls import sc

url, tmpd = sys.argv[1], sys.argv[2]
a = Client(url)
a.session_id = json.load(open(tmpd + "/ids.json"))["a"]
r = a.execute("x, z, v, v2", http_timeout=90)
check(eval(value_of(r)) == (41, 7, 5, "after it") and "restored" not in sc(r),
      "after a SIGKILL of the front: the session kept its kernel, nothing restored", r)
ok("SIGKILL of the front lost nothing: the new front took the kernel over")
EOF2

	# persist_sessions false: a restart ends every session.
	stop_daemon TERM
	config_set persist_sessions false
	start_daemon
	wait_ready
	run_py "$URL" "$TMPD" "$round" <<'EOF2'
import json, sys
from mcp import Client, check, ok

url, tmpd = sys.argv[1], sys.argv[2]
ids = json.load(open(tmpd + "/ids.json"))
a = Client(url)
a.session_id = ids["a"]
r = a.http("POST", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                               "params": {"name": "execute_py_code",
                                          "arguments": {"code": "x"}}}))
check(r.status == 404, "without persist_sessions the old session id is unknown", r.status)
ok("persist_sessions false: the restart ended the sessions")
EOF2
	[ ! -e "$TMPD/state/journal/sessions.json" ] ||
		fail "persist_sessions false left the old journal, for a later start to load"
	stop_daemon
	[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
	rm -rf "$TMPD/state"
}

one_round plain
if [ "$(id -u)" = 0 ]; then one_round uids; else echo "# uids: needs root; not run"; fi
