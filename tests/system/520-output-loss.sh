#!/bin/sh
# 520-output-loss: output is never lost without the result saying so.
# 4000 flushed lines of 50 kB, and one 70 MB write
# followed by print('after'): the file under codeexecd-output/ that the
# result names holds every byte the code printed, in order, compared byte
# for byte; first in one session, then in three sessions at once. A result
# that cannot keep that promise carries output_lost {messages, reason} and
# says so in its text. On a host too busy for the kernel to send its output,
# the kernel's own iopub socket may drop messages (ZeroMQ's high-water
# mark); the result must then say how many, and the test accepts that.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_WARM=3
write_config
start_daemon
wait_ready

run_py "$URL" <<'EOF2'
import hashlib, os, re, sys, threading, time
from mcp import Client, check, ok, text_of, value_of
from calls import sc

url = sys.argv[1]
LINES = "for i in range(4000):\n    print(('%04d' % i) + 'y' * 49996, flush=True)"
BIG = "import sys\nsys.stdout.write('q' * (70 << 20))\nprint('after')"


def expected(case):
    h = hashlib.sha256()
    if case == "lines":
        for i in range(4000):
            h.update((("%04d" % i) + "y" * 49996 + "\n").encode())
        return h.hexdigest(), 4000 * 50001
    h.update(b"q" * (70 << 20) + b"after\n")
    return h.hexdigest(), (70 << 20) + 6


def run(c, case, tag):
    """Run one case in client c; return a problem or None."""
    r = c.execute(LINES if case == "lines" else BIG, timeout=110, http_timeout=300)
    s = sc(r)
    if "output_lost" in s:
        lost = s["output_lost"]
        if not (lost.get("messages", 0) > 0 and lost.get("reason")):
            return "%s: output_lost without a count and a reason: %r" % (tag, lost)
        if "output was lost: at least %d message" % lost["messages"] not in text_of(r):
            return "%s: output_lost %r but the text does not say so" % (tag, lost)
        print("# %s: the kernel dropped %d messages (%s); the result says so"
              % (tag, lost["messages"], lost["reason"]))
        return None  # said, not silent: allowed (see the top of this file)
    if not s.get("success"):
        return "%s: the call failed: %r" % (tag, s.get("error"))
    m = re.search(r"the whole stdout is in (codeexecd-output/\S+)", s["stdout"])
    if m is None:
        return "%s: no file named in stdout %r" % (tag, s["stdout"][-300:])
    # Hash it in the session's own kernel: its working directory holds the file.
    code = ("import hashlib, os\nd = open(%r, 'rb').read()\n(hashlib.sha256(d).hexdigest(), "
            "len(d), d.count(b'\\n'))" % m.group(1))
    got = value_of(c.execute(code, http_timeout=120))
    want_hash, want_len = expected(case)
    digest, size, lines = eval(got)
    if (digest, size) != (want_hash, want_len):
        return "%s: %s holds %d bytes in %d lines, want %d bytes (sha256 %s, want %s)" % (
            tag, m.group(1), size, lines, want_len, digest[:12], want_hash[:12])
    return None


clients = [Client(url) for _ in range(3)]
for c in clients:
    c.initialize()
for case in ("lines", "big"):
    t0 = time.time()
    p = run(clients[0], case, case + " alone")
    check(p is None, p or "")
    ok("%s alone: the saved file holds every byte in order, or the result says what was "
       "lost (%.1f s)" % (case, time.time() - t0))

    problems = []
    def one(i):
        try:
            problems.append(run(clients[i], case, "%s, session %d of 3" % (case, i + 1)))
        except Exception as e:
            problems.append("%s, session %d of 3: %r" % (case, i + 1, e))
    t0 = time.time()
    th = [threading.Thread(target=one, args=(i,)) for i in range(3)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    bad = [p for p in problems if p]
    check(not bad, "; ".join(bad))
    ok("%s in three sessions at once: every file complete or its loss reported (%.1f s)"
       % (case, time.time() - t0))
EOF2
