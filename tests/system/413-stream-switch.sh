#!/bin/sh
# 413-stream-switch: a call's output crosses the worker socket as OUTPUT
# chunks only while someone watches it. A job nobody
# polls streams nothing: the supervisor ends a worker that sends OUTPUT for
# a call that does not stream, so its result would be WorkerDied. A job
# polled after it printed gets, through check_job, what it printed before
# the first poll (STREAMING) and then every later chunk (OUTPUT): each byte
# exactly once, in order, in every poll and in the result. A job polled
# while it still waits its turn streams from its start.
. "$(dirname "$0")/lib.sh"

require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_EXTRA='execution_mode: async_only'
write_config
start_daemon
wait_ready
# Markers: the test and the kernel (another uid, maybe) tell each other
# where they are, so nothing depends on timing.
mkdir -p "$TMPD/marks"
chmod 1777 "$TMPD/marks"

run_py "$URL" "$TMPD/marks" <<'EOF2'
import os, sys
from mcp import Client, check, ok
from calls import tool, sc, wait_for

marks = sys.argv[2]
c = Client(sys.argv[1])
c.initialize()

def start(code):
    s = sc(tool(c, "execute_py_code", {"code": code}))
    check(isinstance(s.get("job_id"), str), "async_only answers with a job", s)
    return s["job_id"]

def poll(jid):
    return sc(tool(c, "py_check_job", {"job_id": jid}))

def mark(name):
    open(os.path.join(marks, name), "w").close()

def seen(name):
    return wait_for(lambda: os.path.exists(os.path.join(marks, name)), 60, 0.05)

# Kernel side: print, say so, wait for the test's go.
prelude = """
import os, sys, time
def say(name):
    open(os.path.join(%r, name), 'w').close()
def wait(name):
    end = time.time() + 120
    while not os.path.exists(os.path.join(%r, name)) and time.time() < end:
        time.sleep(0.02)
""" % (marks, marks)

# 1. Nobody watches job A while it prints: no OUTPUT. Job B waits its turn
# behind A and is polled meanwhile, so B streams from its start.
lines_a = "".join("a%03d\n" % i for i in range(300))
a = start(prelude + "for i in range(300):\n    print('a%03d' % i, flush=True)\n"
          "say('a-printed')\nwait('a-go')\nprint('a-end')\n")
b = start("for i in range(3):\n    print('b', i, flush=True)\n")
check(seen("a-printed"), "job A printed its 300 lines")
s = poll(b)
check(s.get("status") == "running" and s.get("stdout") == "",
      "job B, polled while it waits its turn, is running and has printed nothing", s)
mark("a-go")
s = wait_for(lambda: (lambda s: s if s.get("status") != "running" else None)(poll(b)), 60, 0.1)
check(s and s.get("status") == "completed" and s.get("stdout") == "b 0\nb 1\nb 2\n",
      "job B completes with its output once", s)
s = poll(a)
check(s.get("status") == "completed" and s.get("success") is True,
      "job A, never polled while it ran, completed: its worker sent no OUTPUT for it", s)
check(s.get("stdout") == lines_a + "a-end\n", "job A's result has all its output, once",
      (s.get("stdout") or "")[-200:])
ok("an unwatched job streams nothing; a job polled in line streams from its start")

# 2. Job C prints (stdout and stderr), is polled only then, prints more.
out1 = "".join("c%03d\n" % i for i in range(200))
c_code = (prelude + "for i in range(200):\n    print('c%03d' % i, flush=True)\n"
          "print('e-first', file=sys.stderr, flush=True)\nsay('c-printed')\n"
          "wait('c-go1')\nprint('beta', flush=True)\nsay('c-beta')\n"
          "wait('c-go2')\nprint('gamma', flush=True)\n"
          "print('e-last', file=sys.stderr, flush=True)\n")
want_out = out1 + "beta\ngamma\n"
want_err = "e-first\ne-last\n"
jid = start(c_code)
check(seen("c-printed"), "job C printed before its first poll")
observed = []

def prefix_poll():
    s = poll(jid)
    o, e = s.get("stdout", ""), s.get("stderr", "")
    observed.append((s.get("status"), len(o), len(e)))
    check(want_out.startswith(o), "every poll's stdout is a prefix of the whole, "
          "nothing twice or out of order", (s.get("status"), o[-120:]))
    check(want_err.startswith(e), "every poll's stderr is a prefix of the whole", e)
    return s

s = wait_for(lambda: (lambda s: s if s.get("stdout") == out1 and s.get("stderr") else None)(
    prefix_poll()), 30, 0.1)
check(s and s.get("status") == "running" and s.get("stderr") == "e-first\n",
      "polls show what C printed before the first poll, once", observed[-3:])
mark("c-go1")
check(seen("c-beta"), "job C went on")
s = wait_for(lambda: (lambda s: s if "beta" in s.get("stdout", "") else None)(prefix_poll()),
             30, 0.1)
check(s and s.get("stdout") == out1 + "beta\n", "then what it printed after, once", s)
mark("c-go2")
s = wait_for(lambda: (lambda s: s if s.get("status") != "running" else None)(prefix_poll()),
             60, 0.1)
check(s and s.get("status") == "completed", "job C completes", s)
check(s.get("stdout") == want_out and s.get("stderr") == want_err,
      "its result has every byte once, in order", (s.get("stdout", "")[-80:], s.get("stderr")))
ok("a job polled after it printed: every byte exactly once, in order (%d polls)" % len(observed))
EOF2
grep -q "does not stream\|not asked to stream" "$LOG" &&
	fail "the supervisor ended a worker for unrequested output: $(grep 'stream' "$LOG" | head -3)"
ok "no worker was ended for unrequested output"
