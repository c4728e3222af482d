#!/bin/sh
# 441-artifacts-on-close: nothing lost at the end. First, a
# publisher marked auto_publish gets each result's artifacts, and the result
# says where they went (published, resource_link items). With a local
# publisher marked on_close, the files of a session's outputs/ are published
# before its directory goes, whether the session is closed with py_close_session,
# expires idle, or ends with the daemon (SIGTERM); the log names what went
# where. A publisher without on_close gets nothing. A hibernated session
# that session_retention closes is published too (a worker comes back to
# its directory for it), plain and under kernel_uid_range.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
mkdir -m 777 "$TMPD/pub"
CFG_EXTRA="session_idle_timeout: 3
publishers:
  - name: keep
    type: local
    base_dir: $TMPD/pub/kept
    prefix: \"{session}\"
    on_close: true
  - name: other
    type: local
    base_dir: $TMPD/pub/other
  - name: auto
    type: local
    base_dir: $TMPD/pub/auto
    prefix: \"{session}\"
    max_bytes: 100
    auto_publish: true"
write_config
start_daemon
wait_ready

run_py "$URL" "$TMPD/pub/kept" "$TMPD/ids" <<'EOF2'
import os, sys, time
from mcp import Client, check, ok
from calls import tool, sc

url, kept, ids = sys.argv[1], sys.argv[2], sys.argv[3]
def session(tag):
    c = Client(url)
    c.initialize()
    r = c.execute("import os\nd = os.environ['CODEEXECD_OUTPUT_DIR']\n"
                  "os.makedirs(os.path.join(d, 'sub'))\n"
                  "open(os.path.join(d, 'sub', 'r.txt'), 'w').write(%r)\n"
                  "open(os.path.join(d, 'plain.csv'), 'w').write('a\\n')\n" % tag)
    check(r.get("isError") is not True, "%s wrote its outputs" % tag, r)
    return c

closed = session("closed")
r = closed.execute("open(os.path.join(d, 'late.txt'), 'w').write('late')")
pub = sc(r).get("published") or []
want = os.path.join(os.path.dirname(kept), "auto", closed.session_id, "late.txt")
check(len(pub) == 1 and pub[0]["publisher"] == "auto" and pub[0]["uri"] == "file://" + want,
      "auto_publish: the result says where its artifact went", sc(r))
check(open(want).read() == "late", "auto_publish: the artifact was copied")
links = [x for x in r["content"] if x.get("type") == "resource_link"]
check(len(links) == 1 and links[0]["uri"] == pub[0]["uri"], "auto_publish: a resource_link", r)
r = closed.execute("1")
check("published" not in sc(r), "auto_publish: a call without artifacts publishes nothing", sc(r))
r = closed.execute("open(os.path.join(d, 'huge.txt'), 'w').write('x' * 200)")
e = sc(r).get("publish_errors") or []
check(sc(r).get("published") == [] and len(e) == 1 and e[0]["name"] == "huge.txt" and
      e[0]["publisher"] == "auto" and "max_bytes" in e[0]["message"],
      "auto_publish: a failure is told in the result's publish_errors", sc(r))
ok("auto_publish publishes each result's artifacts and links them")
r = tool(closed, "py_close_session", {})
check(r.get("isError") is not True, "close_session answers", r)
f = os.path.join(kept, closed.session_id, "sub", "r.txt")
check(open(f).read() == "closed", "closed: outputs/sub/r.txt was published before the close answered")
check(os.path.exists(os.path.join(kept, closed.session_id, "plain.csv")), "closed: plain.csv too")
ok("a closed session's outputs/ is published")

idle = session("idle")
f = os.path.join(kept, idle.session_id, "sub", "r.txt")
end = time.time() + 30
while not os.path.exists(f) and time.time() < end:
    time.sleep(0.2)
check(os.path.exists(f) and open(f).read() == "idle", "idle: published when it expired")
ok("an expired session's outputs/ is published")

last = session("shutdown")
open(ids, "w").write(last.session_id)
EOF2
[ $? -eq 0 ] || fail "the on-close checks failed"
stop_daemon
sid=$(cat "$TMPD/ids")
[ "$(cat "$TMPD/pub/kept/$sid/sub/r.txt" 2>/dev/null)" = shutdown ] ||
	fail "the session open at shutdown was not published"
ok "the outputs/ of a session open at shutdown is published"
grep -q "session ${sid%"${sid#????????}"} closed: published outputs/sub/r.txt with keep as file://$TMPD/pub/kept/$sid/sub/r.txt" "$LOG" ||
	fail "the log does not name what was published where"
ok "the log names what was published where"
[ -z "$(ls -A "$TMPD/pub/other" 2>/dev/null)" ] || fail "a publisher without on_close got files"
ok "a publisher without on_close gets nothing"

# A hibernated session reaching session_retention: a worker comes back to
# its directory (under kernel_uid_range too, where the front cannot read
# it) so that outputs/ is published before the files go.
retention_round() {
	CFG_HIBERNATE_AFTER=2
	# A directory of its own: the front of this round may run as another user.
	kept=$TMPD/pub/retention-$1
	CFG_EXTRA="session_retention: 6
publishers:
  - name: keep
    type: local
    base_dir: $kept
    prefix: \"{session}\"
    on_close: true"
	if [ "$1" = uids ]; then
		worker_for_other_uids
		chmod 711 "$TMPD"
		CFG_EXTRA="$CFG_EXTRA
kernel_uid_range: \"63510-63513\""
	fi
	write_config
	start_daemon
	wait_ready
	run_py "$URL" "$kept" "$1" "$TMPD/run" <<'EOF2'
import os, sys, time
from mcp import Client, check, ok
from calls import control, wait_for

url, kept, round, rundir = sys.argv[1:5]
def seen(c):
    """The control socket's view: asking the session itself would use it."""
    for x in control(rundir, "sessions").get("sessions", []):
        if x.get("id") == c.session_id:
            return x
    return None
c = Client(url)
c.initialize()
r = c.execute("import os\nd = os.environ['CODEEXECD_OUTPUT_DIR']\n"
              "open(os.path.join(d, 'kept.txt'), 'w').write('hibernated')")
check(r.get("isError") is not True, "the session wrote its outputs", r)
check(wait_for(lambda: (seen(c) or {}).get("hibernated") is True, 30, 0.2),
      "the session hibernates")
f = os.path.join(kept, c.session_id, "kept.txt")
check(wait_for(lambda: os.path.exists(f), 40, 0.2) and open(f).read() == "hibernated",
      "%s: published when session_retention closed the hibernated session" % round)
check(wait_for(lambda: seen(c) is None, 20, 0.2), "and the session is gone")
ok("%s: a hibernated session's outputs/ is published at session_retention" % round)
EOF2
	[ $? -eq 0 ] || fail "the retention checks failed"
	stop_daemon
	rm -rf "$TMPD/state"
}
retention_round plain
if [ "$(id -u)" = 0 ]; then retention_round uids; fi
