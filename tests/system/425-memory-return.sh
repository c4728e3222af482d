#!/bin/sh
# 425-memory-return: memory is given back after large outputs.
# With output_truncation_threshold raised so that 10 MB prints come
# back whole, 10 such calls are answered; 5 s after the last, the
# supervisor's RSS (VmRSS of the daemon) is within 16 MB of its value
# before them, and the session's worker is back under 16 MB of RSS. Before
# the fix (glibc's dynamic mmap threshold, no malloc_trim) the supervisor
# kept 30 to 40 MB and the worker 40 MB after such a burst; after it, both
# come back to within 1 MB. The bounds are generous: no exact figure is
# asserted, and nothing about time.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
# ASan's allocator keeps what is freed in its quarantine and ignores
# malloc_trim: what is measured here is glibc's, so only a plain build says.
if ldd "$CODEEXECD" 2>/dev/null | grep -q libasan; then
	skip "built with AddressSanitizer, whose allocator does not give memory back as glibc's does"
fi
setup_tmp
PORT=$(free_port)
CFG_EXTRA='output_truncation_threshold: 30000000'
write_config
start_daemon
wait_ready

run_py "$URL" "$(front_pid)" "$DAEMON_PID" <<'EOF2'
import os, sys, time
from mcp import Client, check, ok, text_of

# The front serves (its RSS is judged); the parent starts the workers.
daemon, parent = int(sys.argv[2]), int(sys.argv[3])

def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0

def workers():
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
            with open("/proc/%s/comm" % d) as f:
                comm = f.read().strip()
        except OSError:
            continue
        if int(st[st.rfind(")") + 2:].split()[1]) == parent and comm.startswith("codeexec-work"):
            out.append(int(d))
    return out

a = Client(sys.argv[1])
a.initialize()
for _ in range(20):
    a.execute("1+1")
time.sleep(1)
before = rss_kb(daemon)
check(before > 0, "the daemon's VmRSS is readable (%d kB)" % before)
N = 10_000_000
for i in range(10):
    r = a.execute("print('z' * %d)" % N, http_timeout=120)
    check(len(text_of(r)) >= N, "10 MB print %d comes back whole (%d)" % (i, len(text_of(r))))
    del r
a.execute("1+1")
time.sleep(5)
after = rss_kb(daemon)
check(after < before + 16 * 1024,
      "the supervisor's RSS 5 s after 10 x 10 MB answers is within 16 MB of before "
      "(%.1f MB -> %.1f MB)" % (before / 1024, after / 1024))
ok("supervisor RSS %.1f MB before, %.1f MB after 10 x 10 MB answers" % (before / 1024, after / 1024))
big = max((rss_kb(w) for w in workers()), default=0)
check(0 < big < 16 * 1024, "every worker's RSS is under 16 MB after them (largest %.1f MB)"
      % (big / 1024))
ok("largest worker RSS %.1f MB after them" % (big / 1024))
a.delete()
EOF2
