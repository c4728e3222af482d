#!/bin/sh
# 453-modern-tasks: the tasks extension (io.modelcontextprotocol/tasks) on
# the MCP 2026-07-28 path, over real HTTP with two token identities and
# execution_mode adaptive. server/discover declares the extension. A call
# that declares it and is promoted is answered with resultType "task";
# tasks/get says working, then completed with the result inline (one that
# raised too, with isError); tasks/cancel of a time.sleep(60) makes it
# cancelled; tasks/update is acknowledged; another identity's taskId
# answers as an unknown one. Without the extension the same call gets the
# job handle, which {name}_check_job polls with execution_session_id.
. "$(dirname "$0")/lib.sh"

require_cmd curl sha256sum
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)

make_tokens
CFG_WARM=2
CFG_EXTRA="execution_mode: adaptive
promotion_threshold_s: 1
auth:
  mode: tokens
  tokens_file: $TMPD/tokens
  resource: http://127.0.0.1:$PORT/mcp"
write_config
start_daemon
wait_ready

run_py "$URL" "$TOKEN_A" "$TOKEN_B" <<'EOF'
import sys, time
from mcp import Client, ModernClient, TASKS_EXT, TaskClient, check, ok, text_of

url, ta, tb = sys.argv[1:4]
EXT = TASKS_EXT
EXEC = "execute_py_code"


a = TaskClient(url, token=ta)
b = TaskClient(url, token=tb)
plain = ModernClient(url, token=ta)

d = a.result("server/discover")
check(EXT in d["capabilities"].get("extensions", {}), "discover declares the extension", d)
ok("server/discover declares %s" % EXT)


def wait_task(c, tid, want, seconds=30):
    end = time.monotonic() + seconds
    while True:
        r = c.task("tasks/get", tid)
        check(r.status == 200 and "result" in r.json, "tasks/get: HTTP %d" % r.status)
        t = r.json["result"]
        check(t["taskId"] == tid and t["resultType"] == "complete", "tasks/get fields", t)
        if t["status"] != "working" or time.monotonic() > end:
            check(t["status"] == want, "task %s: %s (want %s)" % (tid[:8], t["status"], want), t)
            return t
        time.sleep(t.get("pollIntervalMs", 1000) / 1000.0)


# A promoted call becomes a task; its result comes inline.
t = a.call(EXEC, {"code": "import time\ntime.sleep(3)\nprint('slept')"})
check(t.get("resultType") == "task" and t.get("status") == "working" and t.get("taskId"),
      "a promoted call is answered with a task", t)
check(all(k in t for k in ("createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs")),
      "the task's fields", t)
ok("a promoted call: resultType task, %s" % t["taskId"][:8])
first = a.task("tasks/get", t["taskId"]).json["result"]
check(first["status"] == "working", "tasks/get at once: working", first)
done = wait_task(a, t["taskId"], "completed")
res = done["result"]
check("slept" in text_of(res) and res["isError"] is False, "the result inline", done)
sid = res["structuredContent"]["execution_session_id"]
ok("tasks/get: working, then completed with the result inline")

t = a.call(EXEC, {"code": "import time\ntime.sleep(2)\n1 / 0", "execution_session_id": sid})
check(t.get("resultType") == "task", "the raising call is a task", t)
done = wait_task(a, t["taskId"], "completed")
check(done["result"]["isError"] is True and
      done["result"]["structuredContent"]["error"]["type"] == "ZeroDivisionError",
      "a result with isError counts as completed", done)
ok("a call that raised: completed, its result with isError")

# Another identity: the same answer as an unknown task; Mcp-Name is checked.
unknown = b.task("tasks/get", "f" * 32).json
foreign = b.task("tasks/get", t["taskId"]).json
unknown.pop("id"); foreign.pop("id")
check(unknown == foreign and foreign["error"]["code"] == -32602,
      "B's tasks/get of A's task answers as an unknown one", [unknown, foreign])
r = a.task("tasks/get", t["taskId"], headers={"Mcp-Name": "other"})
check(r.status == 400 and r.json["error"]["code"] == -32020, "tasks/get Mcp-Name mismatch")
ok("another identity's taskId answers as unknown; Mcp-Name must be the taskId")

t = a.call(EXEC, {"code": "import time\ntime.sleep(60)", "execution_session_id": sid})
check(t.get("resultType") == "task", "sleep(60) is a task", t)
u = a.task("tasks/update", t["taskId"])
check(u.status == 200 and u.json["result"].get("resultType") == "complete",
      "tasks/update acknowledged", u.json)
c = a.task("tasks/cancel", t["taskId"])
check(c.status == 200 and "error" not in c.json, "tasks/cancel acknowledged", c.json)
start = time.monotonic()
wait_task(a, t["taskId"], "cancelled", seconds=10)
check("x" in text_of(a.call(EXEC, {"code": "print('x')", "execution_session_id": sid})),
      "the session runs again")
ok("tasks/cancel: cancelled after %.1f s; tasks/update acknowledged"
   % (time.monotonic() - start))

# Without the extension: the job handle and check_job, as on 2025-11-25.
j = plain.call(EXEC, {"code": "import time\ntime.sleep(2)\nprint('job')",
                      "execution_session_id": sid})
check(j.get("resultType") == "complete" and j["structuredContent"].get("job_id"),
      "without the extension: a job handle", j)
end = time.monotonic() + 30
while True:
    r = plain.call("py_check_job", {"job_id": j["structuredContent"]["job_id"],
                                    "execution_session_id": sid})
    if r["structuredContent"].get("status") != "running" or time.monotonic() > end:
        break
    time.sleep(0.5)
check("job" in text_of(r) and r["structuredContent"]["status"] == "completed",
      "check_job with execution_session_id gives the result", r)
ok("without the extension the call is a job, polled by py_check_job")
EOF
