#!/bin/sh
# 477-hibernated-share: past max_hibernated_sessions, the session closed is
# the least recently used of the identity that holds the most hibernated
# ones, not the oldest of all: one identity filling the slots (forks are
# born hibernated) must not close another's older sessions. Identity B
# hibernates one session first; identity A then hibernates three, with
# max_hibernated_sessions 2: A's two oldest close, B's and A's newest stay.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_py dill
require_binaries
setup_tmp
PORT=$(free_port)
make_tokens
CFG_WARM=1
CFG_HIBERNATE_AFTER=1
CFG_EXTRA="max_hibernated_sessions: 2
auth:
  mode: tokens
  tokens_file: $TMPD/tokens
  resource: http://127.0.0.1:$PORT/mcp"
write_config
start_daemon
wait_ready

run_py "$URL" "$TOKEN_A" "$TOKEN_B" "$TMPD/run" <<'EOF2'
import sys
from mcp import Client, check, ok, value_of
from calls import control, sc, wait_for

url, ta, tb, rundir = sys.argv[1:5]


def listed():
    return {x["id"]: x["hibernated"] for x in control(rundir, "sessions")["sessions"]}


def hibernated(c):
    check(sc(c.execute("x = %r" % c.token[-4:])).get("success") is True, "a call runs")
    check(wait_for(lambda: listed().get(c.session_id) is True, 60),
          "session %.8s hibernates" % c.session_id, listed())


b = Client(url, token=tb)
b.initialize()
hibernated(b)
a = []
for i in range(3):
    c = Client(url, token=ta)
    c.initialize()
    hibernated(c)
    a.append(c)
check(wait_for(lambda: len(listed()) == 2, 30), "two hibernated sessions are kept", listed())
now = listed()
check(b.session_id in now and a[2].session_id in now,
      "B's older session and A's newest stay; A's two oldest closed", now)
r = b.execute("x")
check(sc(r).get("success") is True and value_of(r) == repr(tb[-4:]),
      "B's session goes on, its x restored", r)
ok("A filling the hibernation slots closed its own sessions, not B's")
EOF2
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
