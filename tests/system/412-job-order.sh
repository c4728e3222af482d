#!/bin/sh
# 412-job-order: a session runs one execution at a time,
# and calls that wait their turn run in the order they were made. With
# execution_mode async_only an agent fires several jobs into one session
# (define, then use) and polls later: ten jobs queued behind a running one
# must run 0, 1, ..., 9, and a last job must see all ten; eight rounds
# (the order a condition variable wakes waiters in is not FIFO, so a
# broken queue shows only some of the time).
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_EXTRA='execution_mode: async_only'
write_config
start_daemon
wait_ready

run_py "$URL" <<'EOF2'
import sys, time
from mcp import Client, check, ok, value_of
from calls import tool, sc, wait_for

a = Client(sys.argv[1])
a.initialize()
seen = []
for rnd in range(8):
    first = sc(tool(a, "execute_py_code", {"code": "import time\norder = []\ntime.sleep(1)"}))
    jobs = [sc(tool(a, "execute_py_code", {"code": "order.append(%d)" % k}))["job_id"]
            for k in range(10)]
    last = sc(tool(a, "execute_py_code", {"code": "order"}))["job_id"]
    def done():
        r = tool(a, "py_check_job", {"job_id": last})
        return r if sc(r).get("status") != "running" else None
    r = wait_for(done, 30, 0.2)
    check(r is not None and sc(r)["status"] == "completed", "round %d: the jobs finish" % rnd, r)
    for j in jobs:
        check(sc(tool(a, "py_check_job", {"job_id": j})).get("status") == "completed",
              "round %d: every queued job completed" % rnd)
    seen.append(value_of(r))
want = str(list(range(10)))
check(all(v == want for v in seen),
      "queued jobs of one session ran in the order they were made: want %s, got %s"
      % (want, " and ".join(seen)))
ok("queued jobs ran in order, eight rounds: %s" % want)
EOF2
