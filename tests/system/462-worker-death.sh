#!/bin/sh
# 462-worker-death: a session whose worker dies keeps its state.
# The worker of a session is killed (SIGKILL from outside); the session's
# next call runs in a new worker started in the same working directory,
# where its files are, with its last checkpoint restored, and its result
# says so exactly. Under kernel_uid_range the new kernel has the session's
# old uid, which no other session got meanwhile. Closing the session then
# removes its directory.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_py dill
require_binaries
setup_tmp
PORT=$(free_port)
CFG_CHECKPOINT_INTERVAL=3600

for round in plain uids; do
	CFG_WARM=1
	CFG_EXTRA=
	if [ $round = uids ]; then
		[ "$(id -u)" = 0 ] || { echo "# uids: needs root; not run"; continue; }
		worker_for_other_uids
		chmod 711 "$TMPD"
		CFG_WARM=2
		CFG_EXTRA='kernel_uid_range: "63460-63463"'
	fi
	write_config
	start_daemon
	wait_ready
	run_py "$URL" "$TMPD/run" "$round" <<'EOF2'
import glob, json, os, signal, sys, time
from mcp import Client, check, ok, text_of, value_of
from calls import control, sc, session_info, wait_for, proc_alive

url, rundir, round_ = sys.argv[1:4]
a = Client(url)
a.initialize()
r = a.execute("import os\nx = 41\nopen('kept.txt', 'w').write('here')\n(os.getuid(), os.getcwd())")
check(sc(r).get("success") is True, "a's first call runs", r)
uid, cwd = eval(value_of(r))
ckdir = os.path.join(cwd, ".codeexecd-checkpoints")
check(wait_for(lambda: len(glob.glob(ckdir + "/*.json")) == 1, 30), "a's checkpoint is taken")
meta = json.load(open(glob.glob(ckdir + "/*.json")[0]))
wpid = [w["pid"] for w in control(rundir)["workers"] if w.get("session") == a.session_id[:8]]
check(len(wpid) == 1, "a's worker is in the status", control(rundir))
os.kill(wpid[0], signal.SIGKILL)
check(wait_for(lambda: not proc_alive(wpid[0]), 10), "a's worker is dead")
# The front learns of it from the parent, soon after: a call sent before
# then fails as the call in flight would (WorkerDied); that race is not
# what this test is about.
check(wait_for(lambda: all(w["pid"] != wpid[0] or w.get("state") == "dead"
                           for w in control(rundir)["workers"]), 10),
      "the front knows a's worker is dead", control(rundir))
check(wait_for(lambda: os.path.isdir(cwd), 1) and os.path.exists(os.path.join(cwd, "kept.txt")),
      "a's directory is kept", cwd)
if round_ == "uids":
    b = Client(url)
    b.initialize()
    rb = b.execute("__import__('os').getuid()")
    check(int(value_of(rb)) != uid, "another session does not get a's reserved uid %d" % uid, rb)

r = a.execute("x, open('kept.txt').read(), os.getuid(), os.getcwd()", http_timeout=90)
s = sc(r)
check(s.get("success") is True, "a's next call runs", r)
check(eval(value_of(r)) == (41, "here", uid, cwd), "in a new kernel with x, the file, the same "
      "uid and directory", r)
at = meta["taken_at"]
check(s.get("restored") == {"checkpoint": meta["checkpoint"], "taken_at": at,
                            "names": ["os", "x"], "skipped": []}, "restored names the checkpoint",
      s)
check(s.get("kernel_restarted") is True and s.get("stderr") == "", "kernel_restarted, no "
      "stderr note", s)
check(text_of(r).startswith("[codeexecd] the kernel was restarted and checkpoint %s, taken at "
      "%s, was restored (2 names): what changed after %s is lost\n" % (meta["checkpoint"], at, at)),
      "the text says so first", text_of(r))
nw = [w["pid"] for w in control(rundir)["workers"] if w.get("session") == a.session_id[:8]]
check(len(nw) == 1 and nw[0] != wpid[0], "a has a new worker", control(rundir))
r = a.execute("x + 1")
check(value_of(r) == "42" and "restored" not in sc(r), "and keeps it", r)
ok("%s: a's worker was killed; its next call ran in a new worker in %s with checkpoint %s"
   % (round_, cwd, meta["checkpoint"]))

a.delete()
check(wait_for(lambda: not os.path.exists(cwd), 10), "closing a removes its directory", cwd)
ok("%s: closing the session removed its directory" % round_)
EOF2
	stop_daemon
	[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
done
