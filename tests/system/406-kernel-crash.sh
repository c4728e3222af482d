#!/bin/sh
# 406-kernel-crash: a kernel that dies during an execution.
# os.kill(os.getpid(), 9) fails the call promptly (< 2 s) with error.type
# KernelDied naming SIGKILL; the next call gets a fresh kernel in the same
# working directory: files remain, variables are gone, and its result says
# kernel_restarted with a note in stderr (once). os._exit(3) reports exit
# code 3 and a segfault SIGSEGV the same way.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
start_ready_daemon

run_py "$URL" <<'EOF2'
import sys, time
from mcp import Client, check, ok, text_of, value_of
from calls import sc

a = Client(sys.argv[1])
a.initialize()

def setup(tag):
    r = a.execute("import os\nlost = %r\nopen('kept-%s.txt', 'w').write('still here')\n"
                  "(os.getpid(), os.getcwd())" % (tag, tag))
    check(sc(r).get("success") is True, "%s: setup runs" % tag, r)
    return eval(value_of(r))

def crash(code, tag, words):
    pid, cwd = setup(tag)
    t0 = time.time()
    r = a.execute(code, http_timeout=60)
    took = time.time() - t0
    s = sc(r)
    err = s.get("error") or {}
    check(r.get("isError") is True and s.get("success") is False, "%s: the call fails" % tag, r)
    check(err.get("type") == "KernelDied", "%s: error.type is KernelDied" % tag, r)
    said = err.get("message", "") + " " + text_of(r)
    check(any(w in said for w in words), "%s: the error names %s" % (tag, " or ".join(words)), r)
    check(took < 2, "%s: the call failed promptly (%.2f s)" % (tag, took), r)
    ok("%s: KernelDied in %.2f s: %r" % (tag, took, err.get("message")))

    t0 = time.time()
    r = a.execute("import os\n(os.getpid(), os.getcwd(), open('kept-%s.txt').read())" % tag,
                  http_timeout=60)
    s = sc(r)
    check(s.get("success") is True, "%s: the next call works" % tag, r)
    npid, ncwd, content = eval(value_of(r))
    check(npid != pid, "%s: on a new kernel process" % tag, r)
    check(ncwd == cwd, "%s: in the same working directory" % tag, [cwd, ncwd])
    check(content == "still here", "%s: files remain" % tag, r)
    check(s.get("kernel_restarted") is True, "%s: the result says kernel_restarted" % tag, r)
    check("restarted" in s.get("stderr", "") and "lost" in s.get("stderr", ""),
          "%s: a note in stderr says the kernel was restarted and variables lost" % tag, r)
    r = a.execute("lost")
    check((sc(r).get("error") or {}).get("type") == "NameError",
          "%s: variables from before the crash are gone" % tag, r)
    check(sc(r).get("kernel_restarted") is False, "%s: kernel_restarted only once" % tag, r)
    check("restarted" not in sc(r).get("stderr", ""), "%s: the note only once" % tag, r)
    ok("%s: next call restarted the kernel (%.1f s) in the same directory; files kept"
       % (tag, time.time() - t0))

crash("import os\nprint('about to die', flush=True)\nos.kill(os.getpid(), 9)", "sigkill",
      ["SIGKILL"])
crash("import os\nos._exit(3)", "exit3", ["exit code 3", "status 3", "exited with 3", "code 3"])
crash("import ctypes\nctypes.string_at(0)", "segv", ["SIGSEGV"])

r = a.execute("6 * 7")
check(value_of(r) == "42", "the session still works after three crashes", r)
ok("three crashes, one session, still working")
EOF2
