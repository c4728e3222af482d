#!/bin/sh
# 107-descriptors: a kernel inherits no descriptor of the daemon: not its
# listening socket, not the control socket, not another session's worker
# socket. Every socket a kernel holds is its own (its ZeroMQ sockets); none
# is shared with the supervisor or with a sibling kernel.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
CFG_WARM=2
start_ready_daemon

run_py "$URL" "$DAEMON_PID" "$(front_pid)" <<'PY'
import os, sys
from mcp import Client, check, ok, value_of

url, daemons = sys.argv[1], [int(p) for p in sys.argv[2:4]]
FDS = ("import os\nd = {}\nfor f in os.listdir('/proc/self/fd'):\n"
       "    try: d[f] = os.readlink('/proc/self/fd/' + f)\n    except OSError: pass\nd")

def held(pid):
    """What process pid's descriptors point at."""
    out = set()
    for f in os.listdir("/proc/%d/fd" % pid):
        try:
            out.add(os.readlink("/proc/%d/fd/%s" % (pid, f)))
        except OSError:
            pass
    return out

a, b = Client(url), Client(url)
a.initialize()
b.initialize()
ka = eval(value_of(a.execute(FDS)))
kb = eval(value_of(b.execute(FDS)))
sockets_a = {t for t in ka.values() if t.startswith("socket:")}
sockets_b = {t for t in kb.values() if t.startswith("socket:")}
# Both processes: the parent (its protocol socket) and the front (the
# listener, the workers').
sup = {t for d in daemons for t in held(d) if t.startswith("socket:")}
check(sup, "the supervisor holds sockets (the listener, workers)", sup)
check(not (sockets_a & sup), "kernel A shares no socket with the supervisor", (sockets_a & sup))
check(not (sockets_b & sup), "kernel B shares no socket with the supervisor", (sockets_b & sup))
check(not (sockets_a & sockets_b), "two kernels share no socket", (sockets_a & sockets_b))
ok("no kernel holds a descriptor of the supervisor or of another session "
   "(%d and %d sockets, all their own)" % (len(sockets_a), len(sockets_b)))
leaked = [t for t in list(ka.values()) + list(kb.values())
          if "codeexecd.sock" in t or "codeexecd.pid" in t or t.endswith(".yaml")]
check(not leaked, "no kernel holds the control socket, the pid file or the configuration",
      leaked)
ok("no kernel holds the control socket, the pid file or the configuration")
PY
