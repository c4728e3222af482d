#!/bin/sh
# 414-arguments: honest arguments. Every tool's
# inputSchema says additionalProperties false, and a call with an unknown
# argument fails with -32602 naming it and listing the accepted ones
# (execute, list_sessions, check_job), without running anything. Seed 003's
# names are aliases: timeout_s=1 interrupts time.sleep(3) with TimeoutError;
# timeout_s and timeout both given must agree; code_str runs as code.
# timeout null or 0 (seed 003's "unbounded") is refused naming max_timeout.
# Then what a kernel listens on, read from inside it (/proc/net/tcp{,6}
# LISTEN rows whose inodes are the kernel's own descriptors): in inherit
# mode ipykernel's IOPub pipe for forked subprocesses, on 127.0.0.1 in the
# host's network namespace; in isolated mode the same pipe, inside the
# kernel's own namespace; in seccomp mode nothing. The pipe is what brings a
# forked child's print (seccomp mode, without it, loses it). Isolated and
# seccomp need root and namespaces, and are skipped (said so) without them.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
write_config
# max_timeout 7 (lib.sh writes 120): the refusals must name it with its value.
config_set default_timeout 5
config_set max_timeout 7
start_daemon
wait_ready

run_py "$URL" <<'EOF2'
import sys, time
from mcp import Client, check, ok, value_of

a = Client(sys.argv[1])
a.initialize()

tools = a.result("tools/list")["tools"]
for t in tools:
    check(t["inputSchema"].get("additionalProperties") is False,
          "%s: inputSchema says additionalProperties false" % t["name"], t)
ex = next(t for t in tools if t["name"] == "execute_py_code")
props = ex["inputSchema"]["properties"]
for alias, name in (("timeout_s", "timeout"), ("code_str", "code")):
    check(alias in props and props[alias].get("type") == props[name].get("type")
          and name in props[alias].get("description", ""),
          "execute lists %s as an alias of %s, of the same type" % (alias, name), props)
ok("every tool's inputSchema is closed; execute lists timeout_s and code_str")


def refused(tool, args, *words):
    """tools/call tool(args) must fail with -32602 whose message has words."""
    r = a.request("tools/call", {"name": tool, "arguments": args})
    check(r.status == 200 and r.json and "error" in r.json,
          "%s %s: a JSON-RPC error" % (tool, args), r.json)
    e = r.json["error"]
    check(e.get("code") == -32602, "%s %s: error -32602" % (tool, args), e)
    for w in words:
        check(w in e.get("message", ""), "%s %s: the message names %r" % (tool, args, w), e)
    return e["message"]


m = refused("execute_py_code", {"code": "ran = 1", "timeout_ms": 500},
            "'timeout_ms'", "execute_py_code", "accepts:")
accepted = m.split("accepts:", 1)[1]
for name in ("code", "timeout", "description", "execution_session_id", "timeout_s", "code_str"):
    check(name in accepted, "the refusal lists %r among the accepted arguments" % name, m)
ok("execute with timeout_ms: -32602: %s" % m)
m = refused("execute_py_code", {"code": "ran = 1", "use_subprocess": True, "xyz": 1},
            "'use_subprocess'", "'xyz'", "arguments")
ok("two unknown arguments are both named: %s" % m)
r = a.execute("'ran' in globals()")
check(value_of(r) == "False", "a refused call ran nothing", r)
ok("the refused calls ran nothing")

m = refused("py_list_sessions", {"verbose": True}, "'verbose'", "no arguments")
ok("list_sessions with verbose: %s" % m)
m = refused("py_check_job", {"job_id": "x", "jobid": "y"}, "'jobid'", "job_id")
ok("check_job with jobid: %s" % m)

# timeout_s is honoured, as seed 003's run_cell honours it.
t0 = time.time()
r = a.result("tools/call", {"name": "execute_py_code", "arguments": {
    "code": "import time\ntime.sleep(3)\nprint('woke')", "timeout_s": 1}})
took = time.time() - t0
s = r["structuredContent"]
check((s.get("error") or {}).get("type") == "TimeoutError",
      "sleep(3) with timeout_s 1: TimeoutError", r)
check(took < 2.8 and "woke" not in s["stdout"],
      "timeout_s 1 stopped sleep(3) early (took %.2f s)" % took, r)
ok("timeout_s=1: TimeoutError after %.2f s" % took)

m = refused("execute_py_code", {"code": "1", "timeout_s": 1, "timeout": 2},
            "'timeout'", "'timeout_s'", "differ")
ok("timeout_s 1 and timeout 2: %s" % m)
for args in ({"code": "6 * 7", "timeout_s": 2, "timeout": 2},
             {"code": "6 * 7", "timeout_s": 2.0, "timeout": 2},
             {"code_str": "6 * 7"}):
    r = a.result("tools/call", {"name": "execute_py_code", "arguments": args})
    check(value_of(r) == "42", "%s runs" % args, r)
ok("equal timeout_s and timeout run; code_str runs as code")

for args in ({"timeout": None}, {"timeout": 0}, {"timeout_s": None}, {"timeout_s": 0},
             {"timeout": -1}):
    args["code"] = "ran = 2"
    m = refused("execute_py_code", args, "max_timeout", "7 seconds", "default_timeout, 5 seconds", "unbounded")
ok("timeout null, 0 or below: refused naming max_timeout: %s" % m)
r = a.execute("'ran' in globals()")
check(value_of(r) == "False", "the refused timeouts ran nothing", r)
m = refused("py_parallel_execute", {"code": "result = 1", "inputs": [{}], "timeout": 0},
            "max_timeout")
ok("parallel_execute timeout 0 refused too")
EOF2
stop_daemon

# What the kernel listens on, from inside it; the mode's expectation is
# checked against the test's own network namespace.
probe_listeners() {
	run_py "$URL" "$1" "$(readlink /proc/self/ns/net)" <<'EOF2'
import json, sys
from mcp import Client, check, ok

url, mode, host_ns = sys.argv[1:4]
a = Client(url)
a.initialize()
code = r'''
import json, os
mine = set()
for fd in os.listdir('/proc/self/fd'):
    try:
        t = os.readlink('/proc/self/fd/' + fd)
    except OSError:
        continue
    if t.startswith('socket:['):
        mine.add(t[8:-1])
found = []
for f in ('/proc/net/tcp', '/proc/net/tcp6'):
    try:
        rows = open(f).read().splitlines()[1:]
    except OSError:
        continue
    for row in rows:
        c = row.split()
        if c[3] == '0A' and c[9] in mine:
            addr, port = c[1].split(':')
            found.append([f, addr, int(port, 16)])
pipe = None
try:
    from ipykernel.kernelapp import IPKernelApp
    t = IPKernelApp.instance().iopub_thread
    pipe = getattr(t, '_pipe_port', None) if t._pipe_flag else None
except Exception as e:
    pipe = repr(e)
print(json.dumps({'listen': found, 'ns': os.readlink('/proc/self/ns/net'), 'pipe': pipe}))
'''
r = a.execute(code)["structuredContent"]
check(r["success"], "%s: the probe runs" % mode, r)
got = json.loads(r["stdout"])
print("# %s: %s" % (mode, got))
# What the pipe is for: output of a forked child (multiprocessing's fork).
fork = a.execute("import os, sys, time\npid = os.fork()\nif pid == 0:\n"
                 "    print('from the child', flush=True)\n    os._exit(0)\n"
                 "os.waitpid(pid, 0)\ntime.sleep(0.5)\nprint('parent done')")["structuredContent"]
check("parent done" in fork["stdout"], "%s: the fork probe runs" % mode, fork)
if mode == "seccomp":
    check("from the child" not in fork["stdout"],
          "seccomp: without the pipe a forked child's print is lost, as documented", fork)
else:
    check("from the child" in fork["stdout"],
          "%s: the pipe brings a forked child's print" % mode, fork)
ok("%s: a forked child's print %s" % (mode, "is lost" if mode == "seccomp" else "arrives"))
if mode == "seccomp":
    check(got["listen"] == [], "seccomp: the kernel listens on no TCP port", got)
    check(got["pipe"] is None, "seccomp: IOPub's fork pipe is off", got)
    ok("seccomp: no TCP listener in the kernel")
else:
    check(len(got["listen"]) == 1, "%s: the kernel holds exactly one TCP listener" % mode, got)
    f, addr, port = got["listen"][0]
    check(f == "/proc/net/tcp" and addr == "0100007F",
          "%s: it is on 127.0.0.1 (IPv4), nowhere else" % mode, got)
    check(got["pipe"] == port, "%s: it is ipykernel's IOPub pipe (port %s)" % (mode, port), got)
    if mode == "inherit":
        check(got["ns"] == host_ns, "inherit: in the host's network namespace", got)
    else:
        check(got["ns"] != host_ns, "isolated: in the kernel's own network namespace", got)
    ok("%s: one listener, ipykernel's IOPub pipe on 127.0.0.1:%d, %s network namespace"
       % (mode, port, "the host's" if mode == "inherit" else "its own"))
EOF2
}

CFG_WARM=1
write_config
start_daemon
wait_ready
probe_listeners inherit
stop_daemon

if [ "$(id -u)" != 0 ]; then
	echo "# isolated and seccomp not probed: they need root (kernel_uid_range)"
elif ! unshare -U -n true 2>/dev/null; then
	echo "# isolated and seccomp not probed: this host refuses user and network namespaces"
else
	worker_for_other_uids
	chmod 711 "$TMPD"
	for mode in isolated seccomp; do
		CFG_EXTRA="kernel_network_mode: $mode
kernel_uid_range: \"63600-63699\""
		write_config
		start_daemon
		wait_ready
		probe_listeners $mode
		stop_daemon
	done
fi
ok "arguments and listeners as documented"
