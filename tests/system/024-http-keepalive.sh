#!/bin/sh
# 024-http-keepalive: an idle keep-alive connection stays usable.
# Agents think for seconds between calls, and a pooled connection
# that the daemon closed after civetweb's 0.5 s default broke their next
# POST. A POST on one TCP connection idle for 2 s and then 4.5 s (past the
# 4 s after which Node's fetch gives up on it) is answered on that same
# connection; one idle past http.keep_alive_s is closed by the daemon. The
# daemon starts the threads the configuration sizes, each with a small stack.
. "$(dirname "$0")/lib.sh"

require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_EXTRA='http:
  keep_alive_s: 6'
write_config
start_daemon
wait_ready

run_py "$PORT" "$(front_pid)" <<'EOF2'
import sys, time
from mcp import check, ok
from rawhttp import Conn, request, rpc, call, mcp_headers, new_session, value_of

port, pid = int(sys.argv[1]), int(sys.argv[2])
sid = new_session(port)

c = Conn(port)
local = c.sock.getsockname()
n = 0
for idle in (0, 2.0, 4.5):
    time.sleep(idle)
    n += 1
    try:
        c.send(request("POST", body=call("%d + 1" % n, rid=n), headers=mcp_headers(sid)))
        r = c.read_reply()
    except OSError as e:
        check(False, "POST after %.1f s idle: %r" % (idle, e))
    check(r.status == 200 and value_of(r) == str(n + 1),
          "POST after %.1f s idle is answered on the same connection" % idle, repr(r))
    check(not r.closed, "the answer keeps the connection open", repr(r))
    check(c.sock.getsockname() == local, "still the same TCP connection")
    ok("POST on a connection idle %.1f s: %s on the same connection" % (idle, value_of(r)))

# Past keep_alive_s (6 here) the daemon closes the idle connection itself.
check(c.closed_by_peer(12), "the daemon closes a connection idle past http.keep_alive_s")
ok("a connection idle past http.keep_alive_s is closed by the daemon")
c.close()

# pool.max_sessions 10, one stream and four calls each, plus 64 spare.
threads = [open("/proc/%d/task/%s/comm" % (pid, t)).read().strip()
           for t in __import__("os").listdir("/proc/%d/task" % pid)]
workers = threads.count("civetweb-worker")
check(workers == 10 * (1 + 4) + 64, "http.threads 0 starts 114 workers, not %d" % workers)
ok("%d HTTP threads for pool.max_sessions 10" % workers)
EOF2
ok "keep-alive connections survive idle pauses"

# Each HTTP thread's stack is small (civetweb's own, or the 256 KiB the
# daemon asks for): no 8 MiB default stacks for hundreds of threads.
big=$("$PY" - "$(front_pid)" <<'EOF2'
import sys
n = 0
for l in open("/proc/%s/maps" % sys.argv[1]):
    f = l.split()
    a, b = (int(x, 16) for x in f[0].split("-"))
    if len(f) == 5 and f[1] == "rw-p" and b - a >= 4 * 1024 * 1024 and b - a <= 9 * 1024 * 1024:
        n += 1
print(n)
EOF2
)
[ "$big" -lt 20 ] || fail "$big anonymous mappings of 4-9 MiB: the HTTP threads have default stacks"
ok "HTTP threads have small stacks ($big large anonymous mappings)"
