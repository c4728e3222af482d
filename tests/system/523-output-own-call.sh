#!/bin/sh
# 523-output-own-call: every byte a call writes is in that call's result,
# not the next one's (how a kernel flushes after a cell: see
# supervisor/parent/kernel_warm.c). 300 calls, each checked whole, cycling through
# print, an unterminated sys.stdout.write, stderr, os.write to descriptor 1
# (what subprocesses and C code write, read by a thread of the kernel's),
# a subprocess, multi-byte UTF-8 split across the
# reader's chunks, and a bare value; with the stock flush about 1 call in
# 25 of the os.write kind gave its line to the next call, and a character
# split between chunks stopped the kernel's reader for good. 40 prints of
# 5 MB, each ending its cell as IOPub's timed flush encodes it. Then a line
# written to the descriptor while a call runs is streamed as progress
# before the call ends. Once in inherit mode and, as root, once in seccomp
# mode, whose kernels start another way. What a child forked by Python
# prints goes through IOPub's own pipe, as in any Jupyter kernel, and is
# not promised to stay in its call: it is not checked here.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_WARM=1

modes=inherit
if [ "$(id -u)" = 0 ]; then
	worker_for_other_uids
	chmod 711 "$TMPD"
	modes="inherit seccomp"
fi
for mode in $modes; do
	CFG_EXTRA="kernel_network_mode: $mode
output_truncation_threshold: 30000000"
	[ "$mode" = seccomp ] && CFG_EXTRA="$CFG_EXTRA
kernel_uid_range: \"62300-62399\""
	write_config
	start_daemon
	wait_ready
	run_py "$URL" "$mode" <<'EOF2'
import sys
from mcp import Client, check, ok
from calls import Stream, call_msg, sc

url, mode = sys.argv[1], sys.argv[2]
c = Client(url)
c.initialize()
WIDE = "é" * 999 + "\n"  # 1999 bytes: the reader's chunks split characters
KINDS = [
    ("print(%d)", "%d\n", ""),
    ("import sys; sys.stdout.write('w%d')", "w%d", ""),
    ("import sys; sys.stderr.write('e%d')", "", "e%d"),
    ("import os; os.write(1, b'f%d\\n')", "f%d\n", ""),
    ("import os; os.write(2, b'g%d\\n')", "", "g%d\n"),
    ("import subprocess; subprocess.run(['echo', 's%d']); None", "s%d\n", ""),
    ("import os\nfor _ in range(9): os.write(1, %r.encode())  # %d", None, ""),
    ("%d", "", ""),
]
wrong = []
for i in range(300):
    code, out, err = KINDS[i % len(KINDS)]
    if out is None:
        code, out = code % (WIDE, i), WIDE * 9
    else:
        code, out, err = code % i, out.replace("%d", str(i)), err.replace("%d", str(i))
    s = sc(c.execute(code, timeout=20))
    got = (s.get("stdout", ""), s.get("stderr", ""))
    if got != (out, err):
        wrong.append((i, code[:60], got[0][:80], got[1][:80]))
        if len(wrong) == 5:
            break  # a wedged descriptor would make each later call wait its timeout
check(not wrong, "%s: calls whose output was not their own (stopped at 5): %r"
      % (mode, wrong[:3]), wrong)
ok("%s: 300 calls, each with exactly its own stdout and stderr" % mode)
# A print flushed by IOPub's timer 0.2 s later, still being encoded when
# the cell ends: the end of the cell must wait for it, or the idle goes
# first and the print lands in the next call (5 of 40 did so, before).
short = []
for i in range(40):
    code = "import time\nprint('y' * (5 << 20))\ntime.sleep(%g)" % (0.185 + (i % 10) * 0.002)
    s = sc(c.execute(code, timeout=20))
    if len(s.get("stdout", "")) != (5 << 20) + 1:
        short.append((i, len(s.get("stdout", "")), s.get("output_lost")))
check(not short, "%s: 5 MB prints flushed by the timer as the cell ended were cut: %r"
      % (mode, short[:3]), short)
ok("%s: 40 prints of 5 MB flushed as their cell ended, each whole in its call" % mode)
# ipykernel's own reader decodes each 1000-byte chunk alone and stops for
# good at a character split between two: the pipe then fills, and a write
# of more than it holds blocks the kernel (seen with the stock kernel).
r = c.execute("import os; os.write(1, b'x' * 200000)", timeout=20)
check(sc(r).get("success") is True, "%s: 200 kB to descriptor 1 after split characters" % mode, r)
ok("%s: the descriptor's reader survived characters split between chunks" % mode)

code = "import os, time\nos.write(1, b'early\\n')\ntime.sleep(1.5)\nos.write(1, b'late\\n')"
st = Stream(c, call_msg(c, "execute_py_code", {"code": code}, 9, token="tok-523")).run()
prog, resp = st.progress(), st.responses()
check(len(resp) == 1, "%s: one response" % mode, st.evidence())
early = "".join(e["params"].get("message", "") for t, e in prog if t < resp[0][0] - 1.0)
check("early" in early, "%s: the descriptor's first line came as progress while the call ran"
      % mode, st.evidence())
check(sc(resp[0][1]["result"]).get("stdout") == "early\nlate\n",
      "%s: the result holds both lines" % mode, st.evidence())
ok("%s: a descriptor's output is streamed while the call runs" % mode)
EOF2
	stop_daemon
done
