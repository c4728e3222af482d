#!/bin/sh
# 030-lifecycle: /health goes 503 -> 200 with its JSON shape; the pool
# refills; a kernel killed from outside fails only its own session, which
# gets a fresh kernel in the same directory; SIGTERM and SIGINT exit 0 and
# leave no worker, kernel or socket behind.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_WARM=2
write_config
start_daemon

# --- /health: 503 while the pool starts, then 200 ------------------------------
seen_503=no
deadline=$(($(date +%s) + HEALTH_TIMEOUT))
while :; do
	st=$(health_status)
	case $st in
	503) seen_503=yes ;;
	200) break ;;
	000) ;;
	*) fail "/health answered $st while starting: $(cat "$TMPD/health.body")" ;;
	esac
	kill -0 "$DAEMON_PID" 2>/dev/null || fail "daemon died while starting"
	[ "$(date +%s)" -lt "$deadline" ] || fail "/health not 200 after ${HEALTH_TIMEOUT}s"
	sleep 0.02
done
[ $seen_503 = yes ] || fail "/health never answered 503 before the pool was ready"
ok "/health: 503 while starting, then 200"

run_py "$BASE" "$TMPD" "$DAEMON_PID" <<'EOF'
import json, os, signal, sys, threading, time, urllib.request
from mcp import Client, check, ok, text_of, value_of
from calls import proc_alive, wait_busy, wait_for

base, tmpd, daemon_pid = sys.argv[1], sys.argv[2], int(sys.argv[3])

def health():
    with urllib.request.urlopen(base + "/health", timeout=5) as r:
        check(r.status == 200, "/health 200")
        check(r.headers.get("Content-Type", "").startswith("application/json"),
              "/health is JSON")
        return json.loads(r.read())

def wait_idle(n, what):
    deadline = time.time() + 60
    while True:
        h = health()
        if h["idle_kernels"] == n:
            return h
        check(time.time() < deadline, "%s: idle_kernels %d after 60 s, want %d"
              % (what, h["idle_kernels"], n), h)
        time.sleep(0.1)

h = health()
check(set(h) >= {"status", "name", "sessions", "idle_kernels"}, "/health keys", h)
check(h["name"] == "py" and h["sessions"] == 0, "/health name and sessions", h)
check(isinstance(h["status"], str) and isinstance(h["idle_kernels"], int), "/health types", h)
h = wait_idle(2, "start-up")
ok("/health: %s" % json.dumps(h))

# A session takes a warm kernel; the pool refills.
a = Client(base + "/mcp")
a.initialize()
t0 = time.time()
r = a.execute("import os; os.getpid()")
first = time.time() - t0
pid_a = int(value_of(r))
check(pid_a != os.getpid(), "kernel pid")
h = health()
check(h["sessions"] == 1, "/health counts one session", h)
wait_idle(2, "refill")
ok("a session took a warm kernel (first call %.0f ms); the pool refilled to 2" % (first * 1000))

def cmdline(pid):
    try:
        return open("/proc/%d/cmdline" % pid, "rb").read().replace(b"\0", b" ").decode()
    except OSError:
        return ""

check("ipykernel" in cmdline(pid_a), "pid %d is a kernel" % pid_a, cmdline(pid_a))
b = Client(base + "/mcp")
b.initialize()
b.execute("y = 5")
pid_b = int(value_of(b.execute("import os; os.getpid()")))
check(pid_b != pid_a, "two sessions, two kernels")

# Kill session a's kernel while it is idle.
a.execute("open('kept.txt', 'w').write('files stay'); a_var = 1")
cwd_a = value_of(a.execute("os.getcwd()"))
os.kill(pid_a, signal.SIGKILL)
check(wait_for(lambda: not proc_alive(pid_a), 10), "the killed kernel %d has exited" % pid_a)
r = a.execute("1 + 1", http_timeout=60)
said = text_of(r)
if r.get("isError"):
    check(any(w in said.lower() for w in ("kernel", "died", "killed", "signal", "restart")),
          "after kill -9: the error says what happened", r)
    ok("after kill -9 of an idle kernel: next call says %r" % said[:200])
    r = a.execute("1 + 1", http_timeout=60)
check(r.get("isError") is not True and "2" in text_of(r),
      "session a works again on a fresh kernel", r)
new_pid = int(value_of(a.execute("import os; os.getpid()")))
check(new_pid != pid_a, "session a has a new kernel", new_pid)
check(value_of(a.execute("os.getcwd()")) == cwd_a, "same working directory after restart")
r = a.execute("open('kept.txt').read()")
check("files stay" in text_of(r), "files stay after the restart", r)
r = a.execute("a_var")
check(r["structuredContent"]["error"] is not None
      and r["structuredContent"]["error"]["type"] == "NameError",
      "memory does not stay after the restart", r)
ok("kill -9 of an idle kernel: session a restarted (files stay, memory not)")

# Kill it again, this time during an execution: the call fails promptly
# and says how the kernel died.
pid_a = new_pid
def killer():
    wait_busy(a)  # during the execution
    os.kill(pid_a, signal.SIGKILL)
threading.Thread(target=killer, daemon=True).start()
t0 = time.time()
resp = a.request("tools/call", {"name": "execute_py_code",
                                "arguments": {"code": "import time; time.sleep(60)"}},
                 timeout=60)
took = time.time() - t0
check(took < 15, "the in-flight call failed promptly (%.1f s)" % took)
check(resp.status == 200 and resp.json is not None, "in-flight call: a JSON answer")
j = resp.json
if "error" in j:
    said = j["error"].get("message", "") + json.dumps(j["error"].get("data", ""))
else:
    check(j["result"].get("isError") is True, "in-flight call: isError", j)
    said = text_of(j["result"]) + json.dumps(j["result"].get("structuredContent", {}).get("error"))
check(any(w in said for w in ("signal 9", "SIGKILL", "Killed", "killed")),
      "in-flight call: the error names the signal", j)
ok("kill -9 during a call: failed in %.1f s saying %r" % (took, said[:200]))
r = a.execute("1 + 1", http_timeout=60)
if r.get("isError"):
    r = a.execute("1 + 1", http_timeout=60)
check("2" in text_of(r), "session a usable after the in-flight kill", r)

# Session b never noticed.
r = b.execute("y")
check("5" in text_of(r), "session b unaffected", r)
check(int(value_of(b.execute("os.getpid()"))) == pid_b, "session b kept its kernel")
ok("session b unaffected by session a's kernel deaths")
EOF

# --- SIGTERM: exit 0, nothing left ---------------------------------------------
# all_gone PID...: every one has exited (gone, or a zombie not yet reaped).
all_gone() {
	for p in "$@"; do
		case $(proc_state "$p") in
		gone | Z) ;;
		*) return 1 ;;
		esac
	done
}
kids=$(descendants "$DAEMON_PID")
[ -n "$kids" ] || fail "the daemon has no child processes"
echo "children before SIGTERM:"
describe_pids $kids
stop_daemon TERM
[ "$DAEMON_RC" = 0 ] || fail "SIGTERM: exit status $DAEMON_RC, want 0"
poll_until 5 all_gone $kids || true # the loop below names what is left
for p in $kids; do
	case $(proc_state "$p") in
	gone | Z) ;;
	*) fail "SIGTERM: process left behind: $(describe_pids "$p")" ;;
	esac
done
left=$(leftovers)
[ -z "$left" ] || fail "SIGTERM: processes left behind: $(describe_pids $left)"
# A daemon that dropped root cannot remove its control socket from the
# root-owned control/ directory; the next start replaces it.
socks=$(find "$TMPD/run" -path "$TMPD/run/control" -prune -o -type s -print 2>/dev/null)
[ -z "$socks" ] || fail "SIGTERM: sockets left in runtime_dir: $socks"
ok "SIGTERM: exit 0, no worker, kernel or socket left"

# --- SIGINT, on a second start over the same directories ------------------------
PORT=$(free_port)
write_config
start_daemon
wait_ready
kids=$(descendants "$DAEMON_PID")
stop_daemon INT
[ "$DAEMON_RC" = 0 ] || fail "SIGINT: exit status $DAEMON_RC, want 0"
poll_until 5 all_gone $kids || true # the loop below names what is left
for p in $kids; do
	case $(proc_state "$p") in
	gone | Z) ;;
	*) fail "SIGINT: process left behind: $(describe_pids "$p")" ;;
	esac
done
[ -z "$(leftovers)" ] || fail "SIGINT: processes left behind"
ok "restart over the same state and runtime directories; SIGINT: exit 0, nothing left"
