#!/bin/sh
# 461-restore: automatic checkpoints and the restore after a kernel is lost.
# After the agent's call, when the last automatic checkpoint is older than
# checkpoint.interval_s (or there is none), the session's namespace is
# checkpointed in the background: the answer does not wait for it, and the
# cell leaves no trace. When the kernel then dies (kill -9 from outside,
# its own SIGKILL, a timeout kill of code that ignores SIGINT: that one
# is first asked to checkpoint, SIGUSR2), the next call runs in a new
# kernel holding the latest checkpoint, and its result says so
# exactly (`restored`, kernel_restarted, one text line); what changed after
# the checkpoint is gone. A timeout whose interrupt works keeps the kernel,
# and nothing is restored into it. An automatic checkpoint over
# checkpoint.max_bytes is not taken, and the next result says so.
. "$(dirname "$0")/lib.sh"

require_py ipykernel
require_py dill
require_binaries
setup_tmp
PORT=$(free_port)
CFG_CHECKPOINT_INTERVAL=3600
CFG_CHECKPOINT='  max_bytes: 200000
  max_seconds: 5'
write_config
start_daemon
wait_ready

run_py "$URL" <<'EOF2'
import glob, json, os, re, signal, sys, time
from mcp import Client, check, ok, text_of, value_of
from calls import sc, session_info, wait_for


def checkpoints(c):
    d = session_info(c).get("working_directory")
    return sorted(glob.glob(os.path.join(d, ".codeexecd-checkpoints", "*.json")))


def run(c, code, **kw):
    r = c.execute(code, **kw)
    return r, sc(r)


a = Client(sys.argv[1])
a.initialize()
t0 = time.time()
r, s = run(a, "import os\nx = 41\ndef f(n):\n    return n + x\nos.getpid()")
check(s.get("success") is True, "the first call runs", r)
check("restored" not in s and "checkpoint_error" not in s, "nothing restored into a new session", s)
pid = int(value_of(r))
check(wait_for(lambda: len(checkpoints(a)) == 1, 30), "an automatic checkpoint is taken after "
      "the first call", checkpoints(a))
meta = json.load(open(checkpoints(a)[0]))
check(meta.get("label") == "automatic" and sorted(meta.get("names")) == ["f", "os", "x"],
      "it holds the session's names, labelled automatic", meta)
cid, at = meta["checkpoint"], meta["taken_at"]
r, s = run(a, "get_ipython().execution_count, len(In), 'dill' in __import__('sys').modules")
check(value_of(r) == "(2, 3, False)", "the checkpoint left no trace in the execution count, In "
      "or sys.modules", r)
ok("the first call's answer came first; then checkpoint %s of f, os, x" % cid)

# Within checkpoint.interval_s no other is taken: y is not in one.
r, s = run(a, "y = 2")
time.sleep(1)
check(len(checkpoints(a)) == 1, "no second checkpoint within checkpoint.interval_s", checkpoints(a))

os.kill(pid, signal.SIGKILL)
# Reaped: its worker knows it died, while idle.
check(wait_for(lambda: not os.path.exists("/proc/%d" % pid), 10), "the kernel is dead")
r, s = run(a, "f(1)")
line = ("[codeexecd] the kernel was restarted and checkpoint %s, taken at %s, was restored "
        "(3 names): what changed after %s is lost" % (cid, at, at))
check(s.get("success") is True and s.get("stdout") == "" and value_of(r) == "42",
      "the call after kill -9 sees x and f of the checkpoint", r)
check(s.get("kernel_restarted") is True, "kernel_restarted is true", s)
check(s.get("restored") == {"checkpoint": cid, "taken_at": at, "names": ["f", "os", "x"],
                            "skipped": []}, "restored names the checkpoint exactly", s)
check(text_of(r) == line + "\n42", "the text begins with the one line that says so", text_of(r))
check(s.get("stderr") == "", "no stderr note saying the variables are lost", s)
r, s = run(a, "y")
check((s.get("error") or {}).get("type") == "NameError", "y, defined after the checkpoint, is "
      "gone", r)
check("restored" not in s and s.get("kernel_restarted") is False, "said only once", s)
ok("kill -9 of the kernel: the next call ran in a new kernel with checkpoint %s" % cid)

# A timeout whose interrupt works: the kernel keeps its state, nothing is restored.
r, s = run(a, "z = 7\nimport time\ntime.sleep(60)", timeout=2)
check((s.get("error") or {}).get("type") == "TimeoutError", "the timeout ends the call", r)
r, s = run(a, "z, x")
check(value_of(r) == "(7, 41)" and "restored" not in s and s.get("kernel_restarted") is False,
      "after an interrupted timeout the kernel is the same and nothing is restored", r)
ok("a timeout that the interrupt ended restores nothing")

# A timeout kill: the code ignores SIGINT, the kernel is killed after the grace.
b = Client(sys.argv[1])
b.initialize()
r, s = run(b, "v = [1, 2, 3]")
check(wait_for(lambda: len(checkpoints(b)) == 1, 30), "b's first checkpoint is taken")
bid = json.load(open(checkpoints(b)[0]))["checkpoint"]
# Before the kill the kernel is asked to checkpoint (SIGUSR2, whose handler
# the daemon's checkpoint cell armed): what the code did until then survives.
r, s = run(b, "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
              "v.append(4)\ntime.sleep(120)", timeout=2, http_timeout=60)
check((s.get("error") or {}).get("type") == "TimeoutError" and
      (s.get("error") or {}).get("message", "") == "Execution exceeded 2 seconds and the "
      "kernel did not stop when interrupted, so it was asked to checkpoint its namespace, "
      "then killed and restarted: the next call restores the latest checkpoint",
      "the kernel that ignored SIGINT checkpoints, then is killed", r)
check(wait_for(lambda: len(checkpoints(b)) == 2, 10), "a checkpoint was taken before the kill")
last = [json.load(open(f)) for f in checkpoints(b) if json.load(open(f))["checkpoint"] != bid][0]
check(last["label"] == "before a kill" and "v" in last["names"], "labelled 'before a kill'", last)
r, s = run(b, "v")
check(value_of(r) == "[1, 2, 3, 4]" and
      (s.get("restored") or {}).get("checkpoint") == last["checkpoint"],
      "after the timeout kill, v is as the code left it at the kill", r)
check(text_of(r).startswith("[codeexecd] the kernel was restarted and checkpoint %s"
                            % last["checkpoint"]), "the text says so", text_of(r))
ok("a timeout kill: checkpoint %s taken before the kill, restored" % last["checkpoint"])
# A kernel stuck where no signal handler runs (here: one that blocks
# SIGUSR2 too) is killed after rescue_s; the latest earlier checkpoint is
# what the next call restores.
r, s = run(b, "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
              "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})\n"
              "v.append(5)\ntime.sleep(120)", timeout=2, http_timeout=60)
check((s.get("error") or {}).get("type") == "TimeoutError", "the stuck kernel is killed", r)
r, s = run(b, "v")
check(value_of(r) == "[1, 2, 3, 4]" and
      (s.get("restored") or {}).get("checkpoint") == last["checkpoint"],
      "a kernel that could not checkpoint: the latest earlier checkpoint is restored", r)
ok("a kernel that cannot checkpoint before its kill loses only what came after the last one")

# The kernel's own SIGKILL during a call.
r, s = run(b, "import os\nfh = open('/dev/null')")
r, s = run(b, "os.kill(os.getpid(), 9)")
check((s.get("error") or {}).get("type") == "KernelDied", "KernelDied", r)
r, s = run(b, "v")
check(value_of(r) == "[1, 2, 3, 4]", "KernelDied: the next call has the checkpoint's v", r)

# An automatic checkpoint over checkpoint.max_bytes: not taken, and said.
c = Client(sys.argv[1])
c.initialize()
r, s = run(c, "big = b'x' * 400000")
check(s.get("success") is True and "checkpoint_error" not in s, "the big call itself answers", r)
r, s = run(c, "1")
err = s.get("checkpoint_error") or {}
check(err.get("type") == "CheckpointTooLarge", "the next result says the checkpoint was too "
      "large", s)
check(text_of(r) == "[codeexecd] the automatic checkpoint after the last call was not taken: "
      + err.get("message", "") + "\n1", "and its text says so first", text_of(r))
check(checkpoints(c) == [], "no checkpoint file was left", checkpoints(c))
r, s = run(c, "2")
check("checkpoint_error" not in s, "said once", s)
ok("a checkpoint over max_bytes is not taken and the next result says why")
EOF2
