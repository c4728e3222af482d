"""hibernate.py - what hibernation and automatic checkpoints cost (issue 29).

Run by `bench/run.sh -H`, which starts the daemon with
session_hibernate_after 1 and pool.max_sessions 20. Measures, in one run:

1. the answer of a call that triggers an automatic checkpoint (the first
   call of a session with a 100 MB namespace) against the same call once
   no checkpoint is due, and the next call, which waits for it;
2. a hibernated session's first result with a namespace of 100 MB of
   numpy, against a live session's call;
3. N sessions made and left to hibernate: the daemon's processes and the
   front's RSS before and after, then list_sessions (the control socket's
   session list, and one session's list_sessions tool) and /health with N
   sessions in the table.
Prints Markdown tables.
"""
import argparse
import json
import os
import socket
import time

from mcpclient import Client, health


def ms(t0):
    return (time.perf_counter() - t0) * 1000


def timed(c, code):
    t0 = time.perf_counter()
    r = c.execute(code)
    took = ms(t0)
    s = r.get("structuredContent") or {}
    if not s.get("success"):
        raise RuntimeError("call failed: %r" % s)
    return took, s


def control(rundir, cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(rundir + "/control/codeexecd.sock")
    s.sendall((json.dumps({"cmd": cmd}) + "\n").encode())
    buf = b""
    while not buf.endswith(b"\n"):
        b = s.recv(1 << 20)
        if not b:
            break
        buf += b
    return json.loads(buf)


def hibernated(rundir, sid):
    for x in control(rundir, "sessions")["sessions"]:
        if x["id"] == sid:
            return x["hibernated"]
    return None


def wait_hibernated(rundir, sids, limit=600):
    end = time.time() + limit
    while time.time() < end:
        states = {x["id"]: x["hibernated"] for x in control(rundir, "sessions")["sessions"]}
        if all(states.get(s) for s in sids):
            return
        time.sleep(0.2)
    raise RuntimeError("sessions did not hibernate within %d s" % limit)


def descendants(pid):
    kids = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                ppid = int(open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(p))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def rss_kb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def front_pid(daemon):
    for p in descendants(daemon):
        try:
            if open("/proc/%d/comm" % p).read().strip().startswith("codeexecd"):
                return p
        except OSError:
            pass
    return None


BIG = "import numpy as np\na = np.random.rand(13107200)"  # 100 MB


def autosave(port):
    c = Client("127.0.0.1", port, timeout=600)
    c.initialize()
    first, _ = timed(c, BIG)          # an automatic checkpoint follows this answer
    nxt, _ = timed(c, "1")           # waits for that checkpoint
    again, _ = timed(c, "a[0] = 1")  # none is due (checkpoint.interval_s)
    after, _ = timed(c, "1")
    c.delete()
    print("| call | ms |")
    print("|---|---:|")
    print("| 100 MB namespace built, automatic checkpoint due after it | %.0f |" % first)
    print("| the next call (waits for the checkpoint) | %.0f |" % nxt)
    print("| a call with no checkpoint due | %.0f |" % again)
    print("| the next call | %.1f |" % after, flush=True)


def wake(port, rundir):
    c = Client("127.0.0.1", port, timeout=600)
    c.initialize()
    timed(c, BIG)
    timed(c, "1")  # waits for the automatic checkpoint
    live, _ = timed(c, "a.sum() > 0")
    wait_hibernated(rundir, [c.session_id])
    woke, s = timed(c, "a.sum() > 0")
    if not s.get("restored"):
        raise RuntimeError("no restore: %r" % s)
    c.delete()
    print("| 100 MB namespace | ms |")
    print("|---|---:|")
    print("| a live session's call | %.0f |" % live)
    print("| a hibernated session's first call (new worker, restore, run) | %.0f |" % woke,
          flush=True)


def many(port, rundir, daemon, n):
    front = front_pid(daemon)
    procs0, rss0 = len(descendants(daemon)), rss_kb(front)
    sids, t0 = [], time.perf_counter()
    for i in range(n):
        c = Client("127.0.0.1", port, timeout=600)
        c.initialize()
        c.execute("x = %d" % i)
        sids.append(c.session_id)
        c.close()
    made = ms(t0) / 1000
    wait_hibernated(rundir, sids[:-1])
    time.sleep(3)  # the last workers' exits
    procs1, rss1 = len(descendants(daemon)), rss_kb(front)
    t0 = time.perf_counter()
    listed = len(control(rundir, "sessions")["sessions"])
    ctl_ms = ms(t0)
    h = []
    for _ in range(20):
        t0 = time.perf_counter()
        health("127.0.0.1", port)
        h.append(ms(t0))
    c = Client("127.0.0.1", port, session_id=sids[-1], timeout=600)
    t0 = time.perf_counter()
    c.request("tools/call", {"name": "py_list_sessions", "arguments": {}})
    tool_ms = ms(t0)
    print("| %d sessions, made in %.0f s, then hibernated | |" % (n, made))
    print("|---|---:|")
    print("| daemon processes before / after | %d / %d |" % (procs0, procs1))
    print("| front RSS before / after | %d / %d kB (%.1f kB a session) |"
          % (rss0, rss1, (rss1 - rss0) / n))
    print("| sessions listed by the control socket | %d in %.1f ms |" % (listed, ctl_ms))
    print("| /health, median of 20 | %.2f ms |" % sorted(h)[10])
    print("| one session's list_sessions (sees its own) | %.1f ms |" % tool_ms, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--rundir", required=True)
    ap.add_argument("--daemon-pid", type=int, required=True)
    ap.add_argument("--sessions", type=int, default=1000)
    a, _ = ap.parse_known_args()
    autosave(a.port)
    wake(a.port, a.rundir)
    many(a.port, a.rundir, a.daemon_pid, a.sessions)


if __name__ == "__main__":
    main()
