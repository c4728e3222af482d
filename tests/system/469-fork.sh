#!/bin/sh
# 469-fork: py_fork_session makes a new execution session of the caller's
# identity from a fresh checkpoint of the source and the privileged
# parent's copy of its working directory. Both go on independently (a
# change in one is not seen in the other); files are copied, while a link
# planted in the source (to /etc/shadow, to another session's directory)
# is not followed and a FIFO does not hang the copy; a directory over
# fork_max_bytes is refused with nothing left behind; a second identity's
# fork of the session answers as an unknown session; a hibernated source
# forks from its latest checkpoint and stays hibernated; the 2026-07-28
# path forks an execution session; parallel_execute's from_session starts
# every item from the source's state (its variables and files) while the
# source stays as it was, and another identity's from_session is unknown.
# The answer's text and structuredContent
# are asserted exactly, and so is the fork's first result, which restores
# the checkpoint. Plain, and with kernel_uid_range (as root), where the
# fork has a uid of its own. A busy source is forked once its call ends,
# and a fork outlives a restart of the daemon (persist_sessions).
. "$(dirname "$0")/lib.sh"

require_cmd curl sha256sum
require_py ipykernel
require_py dill
require_binaries
setup_tmp
PORT=$(free_port)
make_tokens

# One round: plain, or with kernel_uid_range ("uids").
one_round() {
	round=$1
	CFG_WARM=2
	CFG_HIBERNATE_AFTER=4
	CFG_PERSIST=true
	UIDS=
	if [ "$round" = uids ]; then
		worker_for_other_uids
		chmod 711 "$TMPD"
		UIDS='kernel_uid_range: "63740-63769"'
	fi
	CFG_EXTRA="fork_max_bytes: 4000000
auth:
  mode: tokens
  tokens_file: $TMPD/tokens
  resource: http://127.0.0.1:$PORT/mcp
$UIDS"
	write_config
	start_daemon
	wait_ready

	run_py "$URL" "$TOKEN_A" "$TOKEN_B" "$TMPD" "$round" <<'EOF2'
import json, os, sys, time
from mcp import Client, ModernClient, check, ok, text_of, value_of
from calls import control, sc, tool, wait_for

url, ta, tb, tmpd, rnd = sys.argv[1:6]
a = Client(url, token=ta)
a.initialize()
b = Client(url, token=tb)
b.initialize()
bdir = eval(value_of(b.execute("import os\nopen('b.txt', 'w').write('b only')\nos.getcwd()")))
r = a.execute("import os\nx = 1\nopen('f.txt', 'w').write('A')\nos.mkdir('sub')\n"
              "open('sub/g.txt', 'w').write('GG')\n"
              "os.symlink('/etc/shadow', 'shadow')\nos.symlink(%r, 'other')\n"
              "os.mkfifo('fifo')\n(os.getuid(), os.getcwd())" % bdir)
check(sc(r).get("success") is True, "A's first call", r)
auid, adir = eval(value_of(r))


def sessions():
    return os.listdir(tmpd + "/state/sessions")


def usage(d):
    """Regular files under d (never through a link) and their bytes."""
    n = size = 0
    for root, dirs, files in os.walk(d):
        for f in files:
            st = os.lstat(os.path.join(root, f))
            if (st.st_mode & 0o170000) == 0o100000:
                n, size = n + 1, size + st.st_size
    return n, size


before = set(sessions())
r = tool(a, "py_fork_session", {"label": "try-two"})
s = sc(r)
fid = s.get("execution_session_id")
check(s.get("success") is True and fid and fid != a.session_id, "A's fork answers", r)
n, size = usage(adir)  # the source as it is now: the checkpoint taken, nothing since
check(s == {"success": True, "execution_session_id": fid, "forked_from": a.session_id,
            "checkpoint": s.get("checkpoint"), "names": ["os", "x"], "skipped": [],
            "bytes_copied": size, "files_copied": n, "entries_skipped": 3},
      "structuredContent says what was copied and skipped", (s, n, size))
cid = s["checkpoint"]
meta = json.load(open(adir + "/.codeexecd-checkpoints/%s.json" % cid))
check(meta["label"] == "try-two", "the fork's checkpoint is the source's, with the label", meta)
check(text_of(r) == "execution session %s forked from %s: checkpoint %s (2 names), %d bytes in "
      "%d files copied, 3 entries not copied (links, devices, FIFOs, sockets, unreadable). "
      "Pass this execution_session_id to run in the fork; its first call restores the "
      "checkpoint." % (fid, a.session_id, cid, size, n), "the text says so", text_of(r))
copies = [d for d in set(sessions()) - before
          if os.path.exists(os.path.join(tmpd, "state/sessions", d, "f.txt"))]
check(len(copies) == 1, "one new directory holds the copy", copies)
ok("A forks its session: checkpoint %s, %d files, %d bytes, 3 entries skipped" % (cid, n, size))

r = tool(a, "execute_py_code", {"code": "import os\n(x, open('f.txt').read(), "
         "open('sub/g.txt').read(), os.path.lexists('shadow'), os.path.lexists('other'), "
         "os.path.lexists('fifo'), os.getuid(), os.getcwd())", "execution_session_id": fid})
fs = sc(r)
check(fs.get("success") is True, "the fork's first call runs", r)
fx, ftext, gtext, shadow, other, fifo, fuid, fdir = eval(value_of(r))
check((fx, ftext, gtext) == (1, "A", "GG"), "the fork has x and the files", r)
check((shadow, other, fifo) == (False, False, False), "no link, no FIFO in the fork", r)
check(fdir != adir and os.stat(fdir).st_uid == fuid, "its own directory, of its own uid", fdir)
if rnd == "uids":
    check(fuid != auid, "under kernel_uid_range the fork's uid is not the source's", (fuid, auid))
    check(all(os.lstat(os.path.join(rt, f)).st_uid == fuid
              for rt, ds, fl in os.walk(fdir) for f in fl + ds), "every copied entry is the fork's")
check(fs.get("restored") == {"checkpoint": cid, "taken_at": meta["taken_at"],
                             "names": ["os", "x"], "skipped": []},
      "its first result says the checkpoint was restored", fs)
at = meta["taken_at"]
check(text_of(r).startswith("[codeexecd] the kernel was restarted and checkpoint %s, taken at "
      "%s, was restored (2 names): what changed after %s is lost\n" % (cid, at, at)),
      "and its text too", text_of(r))
ok("the fork's first call restores the checkpoint; files copied, links and the FIFO not")

fork = lambda code: value_of(tool(a, "execute_py_code", {"code": code,
                                                         "execution_session_id": fid}))
check(fork("x = 2\nopen('only_fork.txt', 'w').write('f')\nx") == "2", "the fork changes x")
check(value_of(a.execute("x, os.path.exists('only_fork.txt')")) == "(1, False)",
      "the source does not see the fork's change")
a.execute("x = 3")
check(fork("x") == "2", "nor the fork the source's")
ok("source and fork go on independently")

# A busy source: the fork waits for the running call, as a checkpoint does.
import threading
busy = threading.Thread(target=lambda: a.execute("import time\ntime.sleep(2)\nlate = 'set'"))
busy.start()
time.sleep(0.5)
r = tool(a, "py_fork_session", {})
busy.join()
bid_ = sc(r).get("execution_session_id")
check("late" in (sc(r).get("names") or []), "the fork of a busy source waited for its call", r)
check(value_of(tool(a, "execute_py_code", {"code": "late", "execution_session_id": bid_}))
      == "'set'", "and holds what that call set")
ok("a busy source is forked once its call ends")

# parallel_execute from_session: each item starts from A's state; A unchanged.
r = tool(a, "py_parallel_execute", {"code": "x = x + k\nresult = [x, open('f.txt').read(), "
         "os.path.lexists('shadow'), os.getcwd() != %r]" % adir,
         "inputs": [{"k": 10}, {"k": 20}], "from_session": a.session_id})
s = sc(r)
check(s.get("from_session") == a.session_id and s.get("checkpoint") and s.get("total") == 2,
      "the batch names its source and the checkpoint taken", r)
bid = s["batch_id"]
check(wait_for(lambda: sc(tool(a, "py_check_batch", {"batch_id": bid})).get("status")
               == "completed", 120, 0.3), "the batch ends")
items = sc(tool(a, "py_check_batch", {"batch_id": bid}))["items"]
check([(i["status"], i.get("result")) for i in items]
      == [("completed", [13, "A", False, True]), ("completed", [23, "A", False, True])],
      "each item sees the source's x and files, in a copy of its own", items)
check(value_of(a.execute("x")) == "3", "the source is unchanged")
resp = b.request("tools/call", {"name": "py_parallel_execute", "arguments": {
    "code": "result = x", "inputs": [{}], "from_session": a.session_id}})
err = (resp.json or {}).get("error") or {}
check(err.get("code") == -32602 and err.get("message") == "unknown from_session",
      "B's batch from A's session is refused as unknown", resp.json)
ok("parallel_execute from_session: every item starts from the source's state")

# Another identity: A's session and A's fork are unknown to B.
for sid in (a.session_id, fid):
    resp = b.request("tools/call", {"name": "py_fork_session",
                                    "arguments": {"execution_session_id": sid}})
    err = (resp.json or {}).get("error") or {}
    check(err.get("code") == -32602 and err.get("message") == "unknown execution_session_id",
          "B's fork of A's session is refused as unknown", resp.json)
ok("a second identity cannot fork A's sessions")

# Over fork_max_bytes: refused, nothing left.
c = Client(url, token=ta)
c.initialize()
c.execute("open('big', 'wb').write(b'x' * 4000001)")
before = set(sessions())
nsess = len(control(tmpd + "/run", "sessions").get("sessions", []))
resp = c.request("tools/call", {"name": "py_fork_session", "arguments": {}})
err = (resp.json or {}).get("error") or {}
check(err.get("code") == -32000 and err.get("message") == "cannot fork the session: the "
      "working directory holds more than fork_max_bytes (4000000 bytes) of files: nothing was "
      "kept of the copy", "over the cap: refused, saying so", resp.json)
# The parent's remover takes the copy away off its loop: soon, not at once.
check(wait_for(lambda: not [d for d in set(sessions()) - before
                            if os.path.exists(os.path.join(tmpd, "state/sessions", d, "big"))],
               30), "no directory left of the copy", sessions())
check(len(control(tmpd + "/run", "sessions").get("sessions", [])) == nsess, "no session made")
ok("a working directory over fork_max_bytes is refused, nothing half-made left")

# A hibernated source forks from its latest checkpoint and stays hibernated.
h = Client(url, token=ta)
h.initialize()
h.execute("hv = 'kept'")


def hibernated(sid):
    for e in control(tmpd + "/run", "sessions").get("sessions", []):
        if e.get("id") == sid:
            return e.get("hibernated")


check(wait_for(lambda: hibernated(h.session_id) is True, 30, 0.2), "h hibernates")
r = tool(h, "py_fork_session", {})
s = sc(r)
hid = s.get("execution_session_id")
check(s.get("checkpoint") is None and "names" not in s and s.get("entries_skipped") == 0,
      "a hibernated source's fork names no new checkpoint", s)
check(text_of(r).startswith("execution session %s forked from %s: its latest checkpoint (it "
      "was hibernated), " % (hid, h.session_id)), "the text says so", text_of(r))
check(hibernated(h.session_id) is True, "the source stays hibernated")
check(hibernated(hid) is True, "the fork is hibernated until its first call")
r = tool(h, "execute_py_code", {"code": "hv", "execution_session_id": hid})
check(value_of(r) == "'kept'" and (sc(r).get("restored") or {}).get("names") == ["hv"],
      "the fork of a hibernated session restores its checkpoint", r)
ok("a hibernated session forks from its latest checkpoint")

# 2026-07-28: an execution session forks; the fork is named by its id.
m = ModernClient(url, token=ta)
esid = sc(m.call("execute_py_code", {"code": "mv = 7"}))["execution_session_id"]
r = m.call("py_fork_session", {"execution_session_id": esid})
mid = sc(r)["execution_session_id"]
check(sc(r)["forked_from"] == esid and sc(r)["names"] == ["mv"], "the modern fork answers", r)
check(value_of(m.call("execute_py_code", {"code": "mv", "execution_session_id": mid})) == "7",
      "the modern fork has mv")
mb = ModernClient(url, token=tb)
resp = mb.request("tools/call", {"name": "py_fork_session",
                                 "arguments": {"execution_session_id": esid}})
res = (resp.json or {}).get("result") or {}
check(res.get("isError") is True and text_of(res) == "unknown execution_session_id",
      "B's fork of A's execution session is refused as unknown", resp.json)
ok("the 2026-07-28 path forks an execution session")

# A fork not called yet outlives a restart (persist_sessions).
check(value_of(a.execute("x")) == "3", "A goes on (woken if it hibernated)")
r = tool(a, "py_fork_session", {})
check(sc(r).get("checkpoint"), "a live A's fork names its checkpoint", r)
json.dump({"fork": sc(r)["execution_session_id"], "checkpoint": sc(r)["checkpoint"]},
          open(tmpd + "/fork.json", "w"))
EOF2
	stop_daemon TERM
	[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
	start_daemon
	wait_ready
	run_py "$URL" "$TOKEN_A" "$TMPD" <<'EOF2'
import json, sys
from mcp import Client, check, ok, value_of
from calls import sc, tool

url, ta, tmpd = sys.argv[1:4]
ids = json.load(open(tmpd + "/fork.json"))
a = Client(url, token=ta)
a.initialize()
r = tool(a, "execute_py_code", {"code": "x", "execution_session_id": ids["fork"]},
         http_timeout=90)
check(value_of(r) == "3" and (sc(r).get("restored") or {}).get("checkpoint")
      == ids["checkpoint"], "the fork's first call after the restart restores its checkpoint", r)
ok("a fork outlives a restart of the daemon")
EOF2
	stop_daemon
	[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
	rm -rf "$TMPD/state"
	mkdir -p "$TMPD/state"
}

one_round plain
if [ "$(id -u)" = 0 ]; then one_round uids; else echo "# uids: needs root; not run"; fi
