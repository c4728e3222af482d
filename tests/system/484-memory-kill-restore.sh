#!/bin/sh
# 484-memory-kill-restore: a memory kill loses only what changed after the
# last checkpoint. A session under limits.memory_mb takes a checkpoint,
# changes a variable, then allocates past its limit: the call fails with
# MemoryLimitExceeded, and the next call runs in a new kernel holding the
# checkpoint, its result saying so exactly (restored, kernel_restarted).
. "$(dirname "$0")/lib.sh"

require_py ipykernel
require_py dill
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root to create the kernels' cgroups"
setup_tmp
worker_for_other_uids
"$WORKER" -p >"$TMPD/layout.json" ||
	skip "not every cgroup controller is usable here: $(cat "$TMPD/layout.json")"
PORT=$(free_port)
CFG_CHECKPOINT_INTERVAL=3600
CFG_EXTRA='limits:
  memory_mb: 256
  required: true
kernel_uid_range: "63520-63523"'
write_config
chmod 711 "$TMPD"
start_daemon
wait_ready
run_py "$URL" <<'EOF2'
import sys
from mcp import Client, check, ok, text_of, value_of
from calls import sc, tool

a = Client(sys.argv[1])
a.initialize()
r = a.execute("import os\nv = [1, 2, 3]\nos.getpid()")
pid = value_of(r)
cp = sc(tool(a, "py_checkpoint", {"label": "before the hog"}))
check(cp.get("names") == ["os", "v"], "a checkpoint of os and v", cp)
r = a.execute("v.append(4)\nx = []\nwhile True:\n    x.append(bytearray(16 << 20))",
              timeout=60)
check((sc(r).get("error") or {}).get("type") == "MemoryLimitExceeded",
      "the memory hog fails with MemoryLimitExceeded", r)
r = a.execute("v, os.getpid() != %s" % pid)
s = sc(r)
check(value_of(r) == "([1, 2, 3], True)" and s.get("kernel_restarted") is True and
      (s.get("restored") or {}).get("checkpoint") == cp["checkpoint"] and
      (s.get("restored") or {}).get("names") == ["os", "v"],
      "after the memory kill: a new kernel with the checkpoint's v", r)
check(text_of(r).startswith("[codeexecd] the kernel was restarted and checkpoint %s"
                            % cp["checkpoint"]), "the text says so", text_of(r))
ok("a memory kill: the next call restored checkpoint %s, losing only v.append(4)"
   % cp["checkpoint"])
EOF2
[ $? -eq 0 ] || fail "the memory-kill checks failed"
stop_daemon
