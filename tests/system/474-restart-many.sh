#!/bin/sh
# 474-restart-many: a start after a restart with 1,000 sessions kept. The
# parent names every kept directory to the new front (DIR_LEFT) before the
# front reads a word, more than the socket between them holds: the parent
# took the full socket for a dead front, and the start hung. Now it waits
# (FRONT_FULL_MS) for the front to read; every session comes back.
. "${srcdir:-.}/system/lib.sh"

require_py ipykernel
require_py dill
require_binaries
setup_tmp
PORT=$(free_port)
CTL=$top_builddir/ctl/codeexecctl
[ -x "$CTL" ] || fail "$CTL not built"
CFG_PERSIST=true
CFG_WARM=1
CFG_EXTRA='max_hibernated_sessions: 2000'
write_config
start_daemon
wait_ready

run_py "$URL" "$TMPD" <<'EOF2'
import json, sys
from mcp import Client, check, ok
from calls import sc

url, tmpd = sys.argv[1], sys.argv[2]
a = Client(url)
a.initialize()
check(sc(a.execute("x = 41"))["success"] is True, "a's call runs")
json.dump({"a": a.session_id}, open(tmpd + "/ids.json", "w"))
ok("one session before the stop")
EOF2
stop_daemon TERM
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC after SIGTERM"

# 999 more sessions, each a copy of a's journal entry and directory (its
# checkpoint with it): what a busy daemon keeps across a restart.
run_py "$TMPD" <<'EOF2'
import json, os, secrets, shutil, sys
from mcp import ok

state = sys.argv[1] + "/state"
path = state + "/journal/sessions.json"
j = json.load(open(path))
seed = j["sessions"][0]
src = state + "/sessions/" + seed["dir"]
st = os.stat(src)
clones = {}
while len(j["sessions"]) < 1000:
    e = dict(seed, id=secrets.token_hex(16), dir=secrets.token_hex(8))
    dst = state + "/sessions/" + e["dir"]
    shutil.copytree(src, dst, symlinks=True)
    for root, dirs, files in os.walk(dst):
        for n in [root] + [os.path.join(root, f) for f in dirs + files]:
            os.lchown(n, st.st_uid, st.st_gid)
    j["sessions"].append(e)
    clones[e["id"]] = 1
with open(path + ".new", "w") as f:
    json.dump(j, f)
os.chown(path + ".new", os.stat(path).st_uid, os.stat(path).st_gid)
os.chmod(path + ".new", 0o600)
os.rename(path + ".new", path)
json.dump(list(clones)[-1], open(sys.argv[1] + "/clone.json", "w"))
ok("the journal holds 1000 sessions, each with its directory")
EOF2

start_daemon
wait_ready
grep -q "session directories kept for the front's journal: 1000" "$TMPD/daemon.log" ||
	fail "the parent did not keep the 1000 directories"
! grep -q "taking it for gone" "$TMPD/daemon.log" ||
	fail "the parent took the new front for gone: $(grep 'taking it for gone' "$TMPD/daemon.log")"
n=$("$CTL" -j -s "$TMPD/run/control/codeexecd.sock" sessions |
	python3 -c 'import json,sys; print(len(json.load(sys.stdin)["sessions"]))')
[ "$n" = 1000 ] || fail "the front has $n sessions back, not 1000"
ok "a start with 1000 kept sessions: all back, hibernated"

run_py "$URL" "$TMPD" <<'EOF2'
import json, sys
from mcp import Client, check, ok, value_of
from calls import sc

url, tmpd = sys.argv[1], sys.argv[2]
for sid in (json.load(open(tmpd + "/ids.json"))["a"], json.load(open(tmpd + "/clone.json"))):
    c = Client(url)
    c.session_id = sid
    r = c.execute("x + 1", http_timeout=90)
    check(value_of(r) == "42" and sc(r).get("restored", {}).get("names") == ["x"],
          "session %.8s goes on with x restored" % sid, r)
ok("the first session and a copy both go on after the restart")
EOF2
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
ok "done"
