#!/bin/sh
# 501-dir-walk: a session with 300,000 files. list_sessions
# and inspect_session once walked its working directory holding the global
# lock, stalling /health for seconds. Now, with four callers asking at once,
# /health and another session's call each answer within a second; the
# count stops at its bound and says "at least"; inspect_session lists 500
# entries and says how many there are at least; closing the session (its
# directory is removed in the background) stalls nothing either.
. "$(dirname "$0")/lib.sh"
slow_suite

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_WARM=2
write_config
start_daemon
wait_ready

run_py "$URL" "$BASE" <<'EOF2'
import sys, threading, time, urllib.request
from mcp import Client, check, ok, value_of
from calls import sc, tool

url, base = sys.argv[1:3]
N = 300000
LIMIT = 1.0

a = Client(url)
a.initialize()
b = Client(url)
b.initialize()
check(sc(b.execute("1")).get("success") is True, "b has a kernel")
t0 = time.time()
r = a.execute("import os, stat\nfor i in range(%d):\n    os.mknod('f%%d' %% i, "
              "stat.S_IFREG | 0o600)\nlen(os.listdir('.'))" % N,
              timeout=600, http_timeout=700)
check(int(value_of(r) or 0) >= N, "a made %d files" % N, r)
ok("a made %d files in %.1f s" % (N, time.time() - t0))

stop = threading.Event()
errors = []
answers = {"list": [], "inspect": []}

def caller(kind):
    c = Client(url)
    c.session_id = a.session_id      # same (anonymous) identity: a's own view
    while not stop.is_set():
        try:
            if kind == "list":
                answers[kind].append(sc(tool(c, "py_list_sessions", {})))
            else:
                answers[kind].append(sc(tool(c, "py_inspect_session", {})))
        except BaseException as e:
            errors.append("%s: %r" % (kind, e))
            return

worst = {"health": 0.0, "b": 0.0}
def probe(what, fn):
    t0 = time.time()
    fn()
    took = time.time() - t0
    worst[what] = max(worst[what], took)
    check(took < LIMIT, "%s answered in %.2f s (limit %.1f s)" % (what, took, LIMIT))

def health():
    with urllib.request.urlopen(base + "/health", timeout=10) as r:
        check(r.status == 200, "/health 200")

def b_call():
    check(value_of(b.execute("6 * 7", http_timeout=30)) == "42", "b's call works")

threads = [threading.Thread(target=caller, args=(k,)) for k in ("list", "list", "inspect", "inspect")]
for t in threads:
    t.start()
end = time.time() + 12
rounds = 0
try:
    while time.time() < end:
        probe("health", health)
        probe("b", b_call)
        rounds += 1
        time.sleep(0.1)
finally:
    stop.set()
    for t in threads:
        t.join(60)
check(not errors, "the callers had no errors", errors)
check(answers["list"] and answers["inspect"], "both tools answered",
      {k: len(v) for k, v in answers.items()})
ok("%d probes with 4 callers (%d list, %d inspect answers): slowest /health %.2f s, b %.2f s"
   % (rounds, len(answers["list"]), len(answers["inspect"]), worst["health"], worst["b"]))

ins = answers["inspect"][-1]
check(ins.get("working_directory_complete") is False, "the count says it stopped short", ins)
check(0 < ins.get("working_directory_files", 0) < N + 1, "a count of files", ins)
check(ins.get("working_directory_usage", "").startswith("at least "),
      "the usage says 'at least'", ins.get("working_directory_usage"))
check(ins.get("files_truncated") is True and len(ins.get("files", [])) == 500,
      "inspect lists 500 entries", {k: v for k, v in ins.items() if k != "files"})
check("at least" in ins.get("files_note", ""), "and says there are at least that many",
      ins.get("files_note"))
mine = [s for s in answers["list"][-1].get("sessions", []) if s["session_id"] == a.session_id]
check(len(mine) == 1 and mine[0].get("working_directory_files", 0) > 0,
      "list_sessions reports a's count", answers["list"][-1])
ok("inspect: %r; %r" % (ins["working_directory_usage"], ins["files_note"]))

# Closing a removes 300,000 files: in the background, not under the lock.
closer = threading.Thread(target=lambda: tool(b, "py_close_session", {"session_id": a.session_id}))
t0 = time.time()
closer.start()
while closer.is_alive() or time.time() - t0 < 3:
    probe("health", health)
    probe("b", b_call)
    time.sleep(0.1)
closer.join()
ok("closing a stalled nothing: slowest /health %.2f s, b %.2f s" % (worst["health"], worst["b"]))
EOF2
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
[ -z "$(ls "$TMPD/state/sessions")" ] || fail "session directories left: $(ls "$TMPD/state/sessions")"
ok "daemon stopped; every session directory removed"
