#!/bin/sh
# 422-stream-once: a streamed call's output crosses the worker socket once.
# The front already holds what it was streamed, so the RESULT leaves that
# part out and the front puts it back (stdout_streamed, ipc_msg.h). The
# result must be what the same code gives unstreamed, byte for byte, also
# where the output is cut at its limit (inside a multi-byte character), on
# stderr, and after a clear_output (which makes the result differ from
# what was streamed). And the worker writes a streamed print's bytes once:
# its write count (/proc/PID/io wchar) grows by about the print, not twice it.
. "$(dirname "$0")/lib.sh"

require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_EXTRA='output_truncation_threshold: 200000'
write_config
start_daemon
wait_ready

run_py "$URL" "$DAEMON_PID" <<'EOF2'
import os, re, sys
from mcp import Client, check, ok
from calls import Stream, call_msg, sc

daemon = int(sys.argv[2])
c = Client(sys.argv[1])
c.initialize()
c.execute("warm = 1")
rid = [100]


def streamed(code):
    rid[0] += 1
    st = Stream(c, call_msg(c, "execute_py_code", {"code": code}, rid[0], token="t%d" % rid[0])).run()
    # A call done before the first tick may answer with plain JSON.
    resp = [e for _, e in st.responses()] if st.json is None else [st.json]
    check(st.error is None and len(resp) == 1 and "result" in resp[0],
          "a streamed call answers once", st.evidence())
    return resp[0]["result"]


def shown(result):
    """What must be equal: stdout, stderr, success and the error's type. The
    spill file a marker names is per request: its name is not compared."""
    s = result.get("structuredContent") or {}
    name = lambda t: re.sub(r"codeexecd-output/\S+", "FILE", t or "")
    return (name(s.get("stdout")), name(s.get("stderr")), s.get("success"),
            (s.get("error") or {}).get("type"))


cases = {
    "one line each": "import sys\nprint('hello')\nprint('oops', file=sys.stderr)",
    "many chunks": "for i in range(3000):\n    print(i, flush=True)",
    "cut at the limit, inside a character":
        "import sys\nprint('\u00e9' * 150000 + 'x' * 100000, flush=True)\n"
        "print('\u20ac' * 250000, file=sys.stderr, flush=True)\nprint('after the cut')",
    "clear_output": "from IPython.display import clear_output\nprint('before', flush=True)\n"
                    "clear_output()\nprint('after')",
    "clear_output(wait=True)": "from IPython.display import clear_output\n"
                               "print('before', flush=True)\nclear_output(wait=True)\n"
                               "print('after')",
    "clear_output after the cut": "from IPython.display import clear_output\n"
                                  "print('y' * 300000, flush=True)\nclear_output()\nprint('z')",
    "an exception": "print('partial', flush=True)\n1/0",
}
for what, code in cases.items():
    plain = shown(c.execute(code))
    live = shown(streamed(code))
    check(live == plain, "%s: the streamed result is the plain one" % what,
          {"plain": [str(x)[:300] for x in plain], "streamed": [str(x)[:300] for x in live]})
    ok("%s: the streamed result equals the plain one" % what)
check("more characters were cut" in shown(c.execute(cases["cut at the limit, inside a character"]))[0],
      "the cut case is cut")


def workers_wchar():
    total = 0
    for t in os.listdir("/proc/%d/task" % daemon):
        for pid in open("/proc/%d/task/%s/children" % (daemon, t)).read().split():
            if open("/proc/%s/comm" % pid).read().strip() == "codeexecd-front":
                continue
            for line in open("/proc/%s/io" % pid):
                if line.startswith("wchar:"):
                    total += int(line.split()[1])
    return total


size = 190000  # under the limit: kept whole, and streamed whole
code = "for i in range(%d):\n    print('x' * 999, flush=(i %% 10 == 0))" % (size // 1000)
before = workers_wchar()
r = streamed(code)
grew = workers_wchar() - before
out = (r.get("structuredContent") or {}).get("stdout", "")
check(len(out) == size, "the streamed print's result holds all %d characters" % size, len(out))
check(grew < size * 1.5, "the workers wrote the %d bytes once: %d bytes written" % (size, grew))
ok("a streamed %d-byte print: the workers wrote %d bytes (%.2f per byte)" % (size, grew, grew / size))
EOF2
