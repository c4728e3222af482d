#!/bin/sh
# 407-sessions: sessions as agents need them.
# py_list_sessions, py_inspect_session (variables by name and type, files,
# state) and py_close_session; execute with execution_session_id resumes
# another MCP session's kernel, and an unknown id fails without creating a
# kernel. Then, with session_idle_timeout 2 and pool.max_sessions 2: a
# third initialize closes the caller's least recently used idle session
# to make room (refusals: 455), a session busy longer than the idle timeout is not closed, an idle one is
# (later use: 404, its kernel ends) and its slot is free again; with
# parallel_max_concurrency 0 a batch is bounded by the pool.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
start_ready_daemon

run_py "$URL" "$TMPD/run" <<'EOF2'
import os, sys, time
from mcp import Client, check, ok, text_of, value_of
from calls import tool, sc, control, wait_for, proc_alive, Stream, call_msg, wait_busy, wait_file

url, rundir = sys.argv[1], sys.argv[2]
a = Client(url)
a.initialize()
b = Client(url)
b.initialize()
names = [t["name"] for t in a.result("tools/list")["tools"]]
check({"py_list_sessions", "py_inspect_session", "py_close_session"} <= set(names),
      "tools/list has the session tools", names)

r = a.execute("import os\nalpha = 1\nbeta = 'two'\ngamma = [3]\n"
              "open('notes.txt', 'w').write('hello')\nos.mkdir('sub')\n(os.getpid(), os.getcwd())")
kpid, cwd = eval(value_of(r))

r = tool(a, "py_list_sessions", {})
check(r.get("isError") is not True, "list_sessions answers", r)
lst = sc(r).get("sessions")
check(isinstance(lst, list), "list_sessions: structuredContent.sessions is a list", r)
mine = [x for x in lst if x.get("session_id") == a.session_id]
check(len(mine) == 1, "list_sessions lists the caller's session", r)
m = mine[0]
now = time.time()
check(isinstance(m.get("created"), int) and abs(m["created"] - now) < 60, "created is a time", m)
check(isinstance(m.get("last_used"), int) and m["last_used"] >= m["created"], "last_used", m)
check(m.get("state") == "idle", "state idle", m)
check(m.get("working_directory") == cwd, "working_directory is the kernel's cwd", [m, cwd])
check(isinstance(m.get("working_directory_bytes"), int) and m["working_directory_bytes"] >= 5,
      "working_directory_bytes counts the files", m)
ok("list_sessions: %s" % m)

r = tool(a, "py_inspect_session", {})
s = sc(r)
check(r.get("isError") is not True and s.get("session_id") == a.session_id, "inspect_session answers", r)
v = s.get("variables") or {}
check(v.get("alpha") == "int" and v.get("beta") == "str" and v.get("gamma") == "list",
      "variables by name and type", s)
check(v.get("os") == "module", "imported modules are listed as modules", s)
check(not any(k.startswith("_") for k in v) and "In" not in v, "no private or IPython names", v)
f = {x["name"]: x for x in s.get("files") or []}
check(f.get("notes.txt", {}).get("bytes") == 5 and f["notes.txt"].get("directory") is False,
      "files lists notes.txt with its size", s)
check(f.get("sub", {}).get("directory") is True, "files marks directories", s)
check(s.get("state") == "idle", "inspect_session gives the kernel's state", s)
r = a.execute("sorted(k for k in globals() if not k.startswith('_') and k not in "
              "('In', 'Out', 'exit', 'quit', 'get_ipython'))")
check(value_of(r) == "['alpha', 'beta', 'gamma', 'os']",
      "inspecting left no name behind in the kernel", r)
ok("inspect_session: variables %s, files %s" % (v, sorted(f)))

# b resumes a's kernel with execution_session_id.
r = b.result("tools/call", {"name": "execute_py_code", "arguments": {
    "code": "alpha += 1\nimport os\n(alpha, os.getpid(), os.getcwd())",
    "execution_session_id": a.session_id}})
check(r.get("isError") is not True, "resume: the call runs", r)
check(eval(value_of(r)) == (2, kpid, cwd), "resume: a's kernel, variables and directory", r)
check(sc(r).get("session_id") == a.session_id, "resume: the result names a's session", r)
r = a.execute("alpha")
check(value_of(r) == "2", "a sees what b did in its kernel", r)
r = tool(b, "py_inspect_session", {"session_id": a.session_id})
check((sc(r).get("variables") or {}).get("alpha") == "int", "b can inspect a by id", r)
ok("execution_session_id resumes a's kernel from another MCP session")

# An unknown id fails without creating a kernel.
before = control(rundir)
nw = len([w for w in before["workers"] if w["state"] != "dead"])
resp = b.request("tools/call", {"name": "execute_py_code", "arguments": {
    "code": "open('should-not-exist.txt', 'w')", "execution_session_id": "f" * 32}})
j = resp.json or {}
refused = ("error" in j and "execution_session_id" in j["error"].get("message", "")) or \
          (j.get("result", {}).get("isError") is True and
           "execution_session_id" in text_of(j["result"]))
check(resp.status == 200 and refused, "an unknown execution_session_id is refused, saying so", j)
time.sleep(1.5)
after = control(rundir)
check(after["sessions"] == before["sessions"] == 2, "no session was created", [before, after])
check(len([w for w in after["workers"] if w.get("session")]) == 1,
      "only a's kernel belongs to a session", after["workers"])
r = tool(b, "py_list_sessions", {})
bs = [x for x in sc(r).get("sessions", []) if x.get("session_id") == b.session_id]
check(len(bs) == 1 and bs[0].get("state") == "no kernel yet", "b itself still has no kernel", r)
check(not os.path.exists(os.path.join(cwd, "should-not-exist.txt")), "the code did not run in a's kernel")
resp = b.request("tools/call", {"name": "py_inspect_session", "arguments": {"session_id": "0" * 32}})
j = resp.json or {}
check("error" in j or j.get("result", {}).get("isError") is True,
      "inspect_session of an unknown id fails", j)
ok("unknown execution_session_id refused, no kernel started (%d workers before, %d after)"
   % (nw, len([w for w in after["workers"] if w["state"] != "dead"])))

# close_session: b closes a by id while a's call runs, then itself.
st = Stream(a, call_msg(a, "execute_py_code", {"code": "import time\nopen('running', 'w').close()\ntime.sleep(30)"},
                        99)).start()
wait_file(a, "running")
t0 = time.time()
r = tool(b, "py_close_session", {"session_id": a.session_id})
check(sc(r).get("closed") is True and sc(r).get("session_id") == a.session_id,
      "close_session(a) answers closed", r)
check(st.wait(5), "the running call of the closed session ends promptly", st.evidence())
took = time.time() - t0
check(st.json is not None and "result" in st.json and
      st.json["result"]["structuredContent"].get("success") is False,
      "the running call fails (it was stopped)", st.evidence())
ok("close_session stopped a's running call in %.1f s: %r"
   % (took, text_of(st.json["result"])[-120:]))
resp = a.request("tools/call", {"name": "execute_py_code", "arguments": {"code": "1"}})
check(resp.status == 404, "a closed session answers 404 (HTTP %d)" % resp.status, resp.raw)
check(wait_for(lambda: not proc_alive(kpid), 10), "a's kernel %d ends" % kpid)
resp = b.request("tools/call", {"name": "execute_py_code", "arguments": {
    "code": "1", "execution_session_id": a.session_id}})
j = resp.json or {}
check("error" in j or j.get("result", {}).get("isError") is True,
      "execution_session_id of a closed session is refused", j)
check(wait_for(lambda: control(rundir)["sessions"] == 1, 5), "one session left", control(rundir))
b.execute("mine = 1")
r = tool(b, "py_close_session", {})
check(sc(r).get("closed") is True and sc(r).get("session_id") == b.session_id,
      "close_session() closes the caller's own session", r)
resp = b.request("ping")
check(resp.status == 404, "b's next request: 404 (HTTP %d)" % resp.status, resp.raw)
check(wait_for(lambda: control(rundir)["sessions"] == 0, 5), "no sessions left", control(rundir))
ok("close_session: by id and self; closed sessions answer 404, kernels end")
EOF2

stop_daemon TERM
[ "$DAEMON_RC" = 0 ] || fail "first daemon: exit status $DAEMON_RC"

# --- idle expiry and max_sessions ------------------------------------------------
PORT=$(free_port)
CFG_EXTRA='session_idle_timeout: 2'
write_config
config_set pool.max_sessions 2
start_daemon
wait_ready

run_py "$URL" "$TMPD/run" <<'EOF2'
import sys, threading, time
from mcp import Client, check, ok, text_of, value_of
from calls import control, wait_for, proc_alive, Stream, call_msg, tool, sc, wait_busy

url, rundir = sys.argv[1], sys.argv[2]
# A full pool refuses no one whose identity holds an idle session: its
# least recently used one makes room (pool.max_sessions_per_identity).
x = Client(url)
x.initialize()
y = Client(url)
y.initialize()
z = Client(url)
resp = z.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "third", "version": "0"}})
check(resp.status == 200 and resp.header("Mcp-Session-Id"),
      "a third initialize at max_sessions 2, the two others idle: HTTP 200 (got %d)"
      % resp.status, resp.raw)
z.session_id = resp.header("Mcp-Session-Id")
check(x.request("ping").status == 404, "the least recently used idle session made room")
check(y.request("ping").status == 200, "the other one is kept")
ok("third initialize at a full pool: the oldest idle session of the caller made room")
for cl in (y, z):
    check(cl.delete().status in (200, 202, 204), "closed")
a = Client(url)
a.initialize()
b = Client(url)
b.initialize()

# Each first call starts a kernel (seconds under load): ping both sessions
# meanwhile, through clients of their own, so neither idles out yet.
def twin(cl):
    t = Client(url)
    t.session_id = cl.session_id
    return t


setup_done = threading.Event()


def keep_open(ta, tb):
    while not setup_done.wait(0.5):
        ta.request("ping")
        tb.request("ping")


threading.Thread(target=keep_open, args=(twin(a), twin(b)), daemon=True).start()
kpid = int(value_of(a.execute("import os; os.getpid()")))
b.execute("kept = 'b'")
setup_done.set()

# b runs a call longer than the idle timeout: busy is not idle. Meanwhile
# a inspects b: answered at once, state busy, no variables asked of the kernel.
st = Stream(b, call_msg(b, "execute_py_code", {"code": "import time; time.sleep(3); kept"}, 77)).start()
wait_busy(b)
t0 = time.time()
r = tool(a, "py_inspect_session", {"session_id": b.session_id})
took = time.time() - t0
check(sc(r).get("state") == "busy" and "variables" not in sc(r) and took < 1,
      "inspect_session of a busy session: state busy, answered at once (%.2f s)" % took, r)
check(st.wait(30) and st.json and value_of(st.json["result"]) == "'b'",
      "a call longer than session_idle_timeout completes", st.evidence())
r = b.execute("kept")
check(value_of(r) == "'b'", "the session that was busy is still open", r)
ok("busy for 3 s with session_idle_timeout 2: not closed")

# a has been idle since; keep b active, leave a alone.
end = time.time() + 4
while time.time() < end:
    check(b.request("ping").status == 200, "b stays open while active")
    time.sleep(0.5)
resp = a.request("tools/call", {"name": "execute_py_code", "arguments": {"code": "1"}})
check(resp.status == 404, "a, idle past session_idle_timeout, answers 404 (got %d)" % resp.status,
      resp.raw)
check(wait_for(lambda: not proc_alive(kpid), 10), "a's kernel %d ended" % kpid)
check(value_of(b.execute("kept")) == "'b'", "b, active, kept its session")
ok("idle session expired: 404, kernel ended; the active one kept")

c = Client(url)
c.initialize()
check(value_of(c.execute("1 + 1")) == "2", "the expired session's slot is free again")
ok("a new session fits after the expiry")

# parallel_max_concurrency 0 (the default): unlimited, bounded by the pool
# (pool.max_sessions 2); batch kernels count against it with the sessions,
# so with b closed and c open, one batch kernel runs at a time.
check(b.delete().status in (200, 202, 204, 404), "b is closed (or expired already)")
samples, stop = [], threading.Event()
def watch():
    while not stop.is_set():
        ws = control(rundir)["workers"]
        samples.append(sum(1 for w in ws if w["state"] == "assigned" and not w.get("session")))
        time.sleep(0.05)
watcher = threading.Thread(target=watch, daemon=True)
watcher.start()
r = tool(c, "py_parallel_execute", {"code": "import time; time.sleep(1); result = i",
                                    "inputs": [{"i": k} for k in range(4)]})
check(sc(r).get("concurrency") == 2, "concurrency 0 is bounded by pool.max_sessions (2)", r)
bid = sc(r)["batch_id"]
r = wait_for(lambda: (lambda r: r if sc(r).get("status") == "completed" else None)(
    tool(c, "py_check_batch", {"batch_id": bid})), 60, 0.3)
stop.set()
watcher.join()
check(r is not None and [x.get("result") for x in sorted(sc(r)["items"], key=lambda x: x["index"])]
      == [0, 1, 2, 3], "the batch returns every result", r)
check(max(samples) <= 1, "sessions and batch kernels stay within pool.max_sessions "
      "(peak %d batch kernels beside one session)" % max(samples))
check(value_of(c.execute("1 + 1")) == "2", "the session works meanwhile")
ok("parallel_max_concurrency 0: bounded by the pool (peak %d batch kernels)" % max(samples))
EOF2
