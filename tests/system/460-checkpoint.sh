#!/bin/sh
# 460-checkpoint: py_checkpoint saves a kernel's namespace with dill, name
# by name, skipping (with the reason) what cannot be saved; py_restore puts
# it back, the latest or a given one, replacing what was defined since.
# Neither leaves a trace in In, Out, _ or the execution count, nor makes
# dill importable where it was not imported. The files are the kernel's,
# mode 0600, in the session's directory. Over checkpoint.max_bytes or
# checkpoint.max_seconds nothing is taken and the earlier checkpoint stays;
# py_inspect_session lists the checkpoints. On a full disk, CheckpointFailed.
. "$(dirname "$0")/lib.sh"

require_py ipykernel
require_py dill
require_binaries
setup_tmp
PORT=$(free_port)
CFG_CHECKPOINT='  max_bytes: 300000
  max_seconds: 3'
write_config
# A full disk: a 64 kB tmpfs the second session's checkpoints go to (root only).
TINY=$TMPD/tiny
mkdir "$TINY"
if mount -t tmpfs -o size=64k,mode=1777 tmpfs "$TINY" 2>/dev/null; then
	cleanup_extra() { umount -l "$TINY"; }
else
	TINY=
fi
start_daemon
wait_ready

run_py "$URL" "$TINY" <<'EOF2'
import sys
from mcp import Client, check, ok, text_of, value_of
from calls import tool, sc

c = Client(sys.argv[1])
c.initialize()


def run(code):
    r = c.execute(code)
    s = r.get("structuredContent") or {}
    check(s.get("success") is True, "the cell ran: %s" % code[:60], s)
    return s


def value(expr):
    return run("print(repr(%s), end='')" % expr)["stdout"]


run("import numpy as np, pandas as pd, itertools\n"
    "x = 41\n"
    "def f(n):\n    return n + x\n"
    "class K:\n    def __init__(self, v):\n        self.v = v\n"
    "k = K([1, 2])\n"
    "df = pd.DataFrame({'a': [1, 2, 3]})\n"
    "arr = np.arange(10)\n"
    "fh = open('/dev/null')\n"
    "g = (i for i in range(3))\n"
    "'last value'")
count = value("get_ipython().execution_count")
ins = value("len(In)")
had_dill = value("__import__('sys').modules.get('dill') is not None")

r = tool(c, "py_checkpoint", {"label": "first"})
s = sc(r)
check(s.get("success") is True and isinstance(s.get("checkpoint"), str), "a checkpoint is taken", r)
first = s["checkpoint"]
check(s.get("label") == "first" and s.get("size_bytes", 0) > 0, "it has its label and size", s)
check(set(s.get("names", [])) == {"K", "arr", "df", "f", "itertools", "k", "np", "pd", "x"},
      "every name that can be saved is saved", s.get("names"))
check(s.get("skipped") == [{"name": "fh", "reason": "an open file"},
                           {"name": "g", "reason": "a generator"}],
      "an open file and a generator are skipped, each with its reason", s.get("skipped"))
check(text_of(r) == "checkpoint %s: 9 names saved (%d bytes); skipped: fh (an open file), "
      "g (a generator)" % (first, s["size_bytes"]), "its text line says so", text_of(r))
ok("py_checkpoint saves 9 names and skips fh and g with their reasons")

check(value("get_ipython().execution_count") == str(int(count) + 3),
      "the checkpoint took no execution count (three probes did)")
check(value("len(In)") == str(int(ins) + 3), "and left nothing in In")
check(value("__import__('sys').modules.get('dill') is not None") == had_dill,
      "and did not leave dill imported")
mode = value("oct(__import__('os').stat('.codeexecd-checkpoints/%s.pkl').st_mode & 0o777)" % first)
check(mode == "'0o600'", "the checkpoint file is mode 0600 in the session directory", mode)
ok("no trace in the execution count, In or sys.modules; the file is 0600")

run("x = 0\ndel f\ny = 'new'\nk.v.append(3)")
r = tool(c, "py_restore", {})
s = sc(r)
check(s.get("success") is True and s.get("checkpoint") == first, "restore takes the latest", r)
check(text_of(r) == "restored checkpoint %s, taken at %s: 9 names; skipped: fh (an open "
      "file), g (a generator)" % (first, s.get("taken_at")), "its text line", text_of(r))
check(value("(x, f(1), k.v, df['a'].sum(), int(arr.sum()), np.__name__)") ==
      "(41, 42, [1, 2], 6, 45, 'numpy')", "the variables, function and class come back")
check(value("('y' in globals(), 'fh' in globals())") == "(False, False)",
      "what was defined since, and what was skipped, are gone")
ok("py_restore brings back x, f, k, df, arr and np and drops y")

# A second checkpoint, then back to the first by its id.
run("x = 7")
second = sc(tool(c, "py_checkpoint", {}))["checkpoint"]
check(second != first, "a second checkpoint has an id of its own")
run("x = 8")
check(sc(tool(c, "py_restore", {"checkpoint_id": first})).get("checkpoint") == first,
      "restore by id")
check(value("x") == "41", "restore by id gives that checkpoint's x")
check(sc(tool(c, "py_restore", {})).get("checkpoint") == second, "the latest is the second")
check(value("x") == "7", "whose x is 7")
ok("restore by id and of the latest")

# Limits: over max_bytes, over max_seconds; the earlier checkpoints stay.
run("big = b'x' * 400000")
s = sc(tool(c, "py_checkpoint", {}))
check(s.get("success") is False and (s.get("error") or {}).get("type") == "CheckpointTooLarge",
      "over checkpoint.max_bytes: CheckpointTooLarge", s)
run("del big\nimport time\nclass Slow:\n    def __reduce__(self):\n        time.sleep(10)\n"
    "        return (Slow, ())\nslow = Slow()")
s = sc(tool(c, "py_checkpoint", {}))
check(s.get("success") is False and (s.get("error") or {}).get("type") == "CheckpointTimeout",
      "over checkpoint.max_seconds: CheckpointTimeout", s)
check(value("len([n for n in __import__('os').listdir('.codeexecd-checkpoints')])") == "4",
      "only the two checkpoints' files remain (no partial file)")
check(sc(tool(c, "py_restore", {})).get("checkpoint") == second,
      "the latest checkpoint is still the second")
ok("over either limit nothing is taken and the earlier checkpoints stay")

s = sc(tool(c, "py_inspect_session", {}))
cps = s.get("checkpoints") or []
check([(p.get("checkpoint"), p.get("label")) for p in cps] == [(first, "first"), (second, None)],
      "py_inspect_session lists the two checkpoints, oldest first, with their labels", cps)
check("x" in (s.get("variables") or {}), "and still the variables", s.get("variables"))
ok("py_inspect_session lists the session's checkpoints")

# Bad ids.
rs = c.request("tools/call", {"name": "py_restore", "arguments": {"checkpoint_id": "../etc"}}).json
check((rs.get("error") or {}).get("code") == -32602, "a path as checkpoint_id: invalid params", rs)
s = sc(tool(c, "py_restore", {"checkpoint_id": "20260101T000000Z-abcdef"}))
check((s.get("error") or {}).get("type") == "NoCheckpoint", "an unknown id: NoCheckpoint", s)
ok("a path is refused as an id, an unknown id is NoCheckpoint")

# A full disk during a checkpoint: CheckpointFailed, and the earlier one stays.
tiny = sys.argv[2]
if not tiny:
    print("# skipped the full-disk case: no tmpfs could be mounted (not root)")
else:
    d = Client(sys.argv[1])
    d.initialize()
    d.execute("import os\nos.symlink(%r, '.codeexecd-checkpoints')\nsmall = 1" % tiny)
    one = sc(tool(d, "py_checkpoint", {}))
    check(one.get("success") is True, "a small checkpoint fits on the small disk", one)
    d.execute("blob = os.urandom(200000)")
    s = sc(tool(d, "py_checkpoint", {}))
    check(s.get("success") is False and (s.get("error") or {}).get("type") == "CheckpointFailed"
          and "No space left on device" in (s.get("error") or {}).get("message", ""),
          "a full disk: CheckpointFailed, saying so", s)
    import os
    check(sorted(os.listdir(tiny)) == sorted([one["checkpoint"] + ".json", one["checkpoint"] + ".pkl"]),
          "no partial file is left beside the earlier checkpoint", os.listdir(tiny))
    check(sc(tool(d, "py_restore", {})).get("checkpoint") == one["checkpoint"],
          "the earlier checkpoint is still the latest")
    ok("a full disk during a checkpoint: CheckpointFailed, the earlier one stays")
EOF2
