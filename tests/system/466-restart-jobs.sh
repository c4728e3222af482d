#!/bin/sh
# 466-restart-jobs: with persist_sessions, background jobs outlive a
# restart of the daemon. A job that ended before the stop answers
# py_check_job afterwards with its whole result; one that still ran at the
# stop (past shutdown_grace_s) ends as failed with error Aborted; a
# 2026-07-28 task's tasks/get answers as before; a job is
# still visible only to the MCP session that started it; a job past
# job_retention_s is gone with its file.
. "$(dirname "$0")/lib.sh"

require_py ipykernel
require_py dill
require_binaries
setup_tmp
PORT=$(free_port)
CFG_PERSIST=true
CFG_EXTRA='execution_mode: async_only
job_retention_s: 600
shutdown_grace_s: 1'
write_config
start_daemon
wait_ready

run_py "$URL" "$TMPD" <<'EOF2'
import json, sys
from mcp import Client, TaskClient, check, ok
from calls import sc, tool, wait_for

url, tmpd = sys.argv[1], sys.argv[2]
a = Client(url)
a.initialize()
done = sc(tool(a, "execute_py_code", {"code": "print('out')\nx = 6 * 7\nx"}))["job_id"]
check(wait_for(lambda: sc(tool(a, "py_check_job", {"job_id": done}))["status"] == "completed",
               30, 0.2), "the first job completes")
running = sc(tool(a, "execute_py_code", {"code": "import time\ntime.sleep(120)"}))["job_id"]
check(wait_for(lambda: sc(tool(a, "py_check_job", {"job_id": running}))["status"] == "running",
               10, 0.2), "the second runs")
b = Client(url)
b.initialize()
t = TaskClient(url)
task = t.call("execute_py_code", {"code": "y = 5\ny"})
check(task.get("resultType") == "task" and task.get("taskId"), "a 2026-07-28 call is a task", task)
tid = task["taskId"]
check(wait_for(lambda: t.task("tasks/get", tid).json["result"]["status"] == "completed", 30, 0.2),
      "the task completes")
json.dump({"a": a.session_id, "b": b.session_id, "done": done, "running": running, "task": tid},
          open(tmpd + "/ids.json", "w"))
ok("one job ended, one running, before the stop")
EOF2
stop_daemon TERM
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC after SIGTERM"
ls "$TMPD/state/journal/jobs/"*.json >/dev/null 2>&1 || fail "no job result in the journal"
start_daemon
wait_ready
run_py "$URL" "$TMPD" <<'EOF2'
import json, sys
from mcp import Client, TaskClient, check, ok
from calls import sc, tool

url, tmpd = sys.argv[1], sys.argv[2]
ids = json.load(open(tmpd + "/ids.json"))
a = Client(url)
a.session_id = ids["a"]
s = sc(tool(a, "py_check_job", {"job_id": ids["done"]}))
check(s.get("status") == "completed" and s.get("stdout") == "out\n" and
      s.get("rich_outputs") == [{"mime_type": "text/plain", "data": "42"}] and
      s.get("job_id") == ids["done"], "the ended job's whole result after the restart", s)
ok("a job that ended before the stop answers with its result")
s = sc(tool(a, "py_check_job", {"job_id": ids["running"]}))
check(s.get("status") == "failed" and (s.get("error") or {}).get("type") == "Aborted" and
      "the daemon stopped while this job ran" in s["error"].get("message", ""),
      "the job that ran at the stop: failed, Aborted", s)
ok("a job running at the stop ended as Aborted")
b = Client(url)
b.session_id = ids["b"]
r = tool(b, "py_check_job", {"job_id": ids["done"]})
check(r.get("isError") is True or sc(r).get("status") not in ("completed", "failed"),
      "another session does not see the job", r)
ok("another MCP session still cannot see the job")
t = TaskClient(url)
r = t.task("tasks/get", ids["task"]).json["result"]
check(r.get("status") == "completed" and r.get("taskId") == ids["task"], "tasks/get after the "
      "restart: the task completed", r)
ok("a task's status and result are answered after the restart")
EOF2
# job_retention_s, live: the ended jobs go, and their files.
config_set job_retention_s 1
kill -HUP "$DAEMON_PID"
poll_until 20 sh -c "! ls '$TMPD/state/journal/jobs/'*.json >/dev/null 2>&1" ||
	fail "a job's file outlived job_retention_s"
ok "past job_retention_s the jobs' files are removed"
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
