#!/bin/sh
# 028-http-abandoned: only a real disconnect cancels a call.
# A client that half-closes its write side after sending its request
# (shutdown(SHUT_WR), which some HTTP clients do) still gets its answer,
# plain JSON or SSE; the daemon used to take that FIN for a hang-up and
# cancel the call. A call whose client closed (or reset) its connection
# before the call started never runs: queued behind a running call, its
# code does not write its file.
. "$(dirname "$0")/lib.sh"

require_py ipykernel
require_binaries
start_ready_daemon

run_py "$PORT" <<'EOF2'
import socket, struct, sys, time
from mcp import Client, check, ok
from calls import wait_busy
from rawhttp import Conn, request, call, mcp_headers, new_session, value_of, compute

port = int(sys.argv[1])
sid = new_session(port)

# 1. Half-closed after the request: the answer still comes, plain JSON
#    (begun early, chunked, to learn whether the client is still there).
c = Conn(port, timeout=30)
c.send(request("POST", body=call("import time\ntime.sleep(1.5)\n6 * 7"),
               headers=dict(mcp_headers(sid), Accept="application/json")))
c.sock.shutdown(socket.SHUT_WR)
r = c.read_reply()
c.close()
check(r.status == 200 and value_of(r) == "42", "a half-closed client gets its JSON answer",
      repr(r))
ok("half-closed client (JSON): answered 42")

# 2. Half-closed, accepting SSE, with progress: the answer still comes.
c = Conn(port, timeout=30)
body = call("import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.5)\n'done'")
body["params"]["_meta"] = {"progressToken": "t1"}
c.send(request("POST", body=body, headers=mcp_headers(sid)))
c.sock.shutdown(socket.SHUT_WR)
r = c.read_reply()
c.close()
check(r.status == 200 and b"'done'" in r.body and b'"result"' in r.body,
      "a half-closed client gets its SSE answer", repr(r))
ok("half-closed client (SSE): answered 'done'")

# 3. Gone before its call started: queued behind a running call, the
#    client closes (FIN) or resets its connection; the code never runs.
def abandon(name, reset):
    blocker = Conn(port, timeout=30)
    blocker.send(request("POST", body=call("import time\ntime.sleep(2)\n1", rid=7),
                         headers=mcp_headers(sid)))
    watcher = Client("http://127.0.0.1:%d/mcp" % port)
    watcher.session_id = sid
    wait_busy(watcher)  # the blocker runs; the next call waits its turn
    c = Conn(port)
    c.send(request("POST", body=call("open(%r, 'w').write('ran')" % name, rid=8),
                   headers=mcp_headers(sid)))
    time.sleep(0.5)  # the daemon has it queued
    if reset:
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
    r = blocker.read_reply()
    blocker.close()
    check(value_of(r) == "1", "the running call is not disturbed", repr(r))

abandon("fin.txt", False)
abandon("rst.txt", True)

time.sleep(3)
v, _, r = compute(port, sid, "import os\nsorted(f for f in ('fin.txt', 'rst.txt') "
                  "if os.path.exists(f))")
check(v == "[]", "no abandoned call ran", repr(r))
ok("calls whose clients closed or reset before they started never ran")
EOF2
ok "half-closed clients are answered; abandoned calls do not run"
