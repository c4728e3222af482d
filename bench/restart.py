"""restart.py - what keeping sessions across a restart costs (persist_sessions).

Run by `bench/run.sh -R`, which starts the daemon with persist_sessions
and hands this script the daemon's command line. Makes N sessions (default
20), each holding M MB of numpy (default 10), then in one run:

1. SIGTERM: how long the daemon takes to stop (each session checkpointed
   for the next start, the journal written);
2. the start: until it listens, and until /health answers 200;
3. the daemon's processes and the front's RSS after the start, with every
   session back hibernated, against before the stop;
4. each session's first call after the start (a new worker in its
   directory, the restore of M MB, the call): median and slowest, against
   a call of a live session before the stop.
With --clone K, the stopped daemon's journal and session directories are
copied until they hold K sessions before the start (the copies are
hibernated sessions like the others, each with its own directory and
checkpoint): then 3. is what K hibernated sessions hold, and the table adds
the control socket's session list, a list_sessions call and /health with
K sessions in the table. With --front-crash, first of all the front is
SIGKILLed: until the new one listens and /health answers, and each
session's first call after it (its kernel taken over, nothing restored).
Prints a Markdown table. Stops the daemon it started at the end.
"""
import argparse
import json
import os
import secrets
import shutil
import re
import signal
import statistics
import subprocess
import time

from hibernate import control, descendants, front_pid, rss_kb, timed
from mcpclient import Client, health


def wait_exit(pid, limit=600):
    end = time.time() + limit
    while time.time() < end:
        try:
            os.kill(pid, 0)
        except OSError:
            return
        try:
            if open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0] == "Z":
                os.waitpid(pid, 0)
                return
        except (OSError, ChildProcessError):
            return
        time.sleep(0.05)
    raise RuntimeError("the daemon did not stop within %d s" % limit)


def wait_port(log, seen, limit=600):
    end = time.time() + limit
    while time.time() < end:
        ports = re.findall(r"listening on 127\.0\.0\.1:(\d+)", open(log).read())
        if len(ports) > seen:
            return int(ports[-1])
        time.sleep(0.02)
    raise RuntimeError("the daemon did not listen within %d s" % limit)


def wait_health(port, limit=600):
    end = time.time() + limit
    while time.time() < end:
        try:
            if health("127.0.0.1", port)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.02)
    raise RuntimeError("/health not 200 within %d s" % limit)


def processes(pid):
    return len(descendants(pid))


def state_dir(config):
    return re.search(r"^state_dir: *(\S+)", open(config).read(), re.M).group(1)


def clone(config, total):
    """Copy the journal's sessions (entries and directories) until it holds
    `total`. Returns how many there are."""
    state = state_dir(config)
    path = state + "/journal/sessions.json"
    j = json.load(open(path))
    sessions = j["sessions"]
    seeds = [e for e in sessions if "dir" in e]
    i = 0
    while len(sessions) < total:
        e = dict(seeds[i % len(seeds)])
        e["id"] = secrets.token_hex(16)
        src = state + "/sessions/" + e["dir"]
        e["dir"] = secrets.token_hex(8)
        dst = state + "/sessions/" + e["dir"]
        shutil.copytree(src, dst, symlinks=True)
        st = os.stat(src)
        for root, dirs, files in os.walk(dst):
            for n in [root] + [os.path.join(root, f) for f in dirs + files]:
                os.lchown(n, st.st_uid, st.st_gid)
        os.chmod(dst, st.st_mode & 0o7777)
        sessions.append(e)
        i += 1
    tmp = path + ".clone"
    with open(tmp, "w") as f:
        json.dump(j, f)
    st = os.stat(path)
    os.chown(tmp, st.st_uid, st.st_gid)
    os.chmod(tmp, 0o600)
    os.rename(tmp, path)
    return len(sessions)


def table_ms(port, rundir, sid):
    t0 = time.perf_counter()
    listed = len(control(rundir, "sessions")["sessions"])
    ctl = (time.perf_counter() - t0) * 1000
    h = []
    for _ in range(20):
        t0 = time.perf_counter()
        health("127.0.0.1", port)
        h.append((time.perf_counter() - t0) * 1000)
    c = Client("127.0.0.1", port, session_id=sid, timeout=600)
    t0 = time.perf_counter()
    c.request("tools/call", {"name": "py_list_sessions", "arguments": {}})
    tool = (time.perf_counter() - t0) * 1000
    return listed, ctl, statistics.median(h), tool


def front_crash(a, clients):
    """SIGKILL the front; the rows of its table."""
    seen = len(re.findall(r"listening on 127\.0\.0\.1:", open(a.log).read()))
    t0 = time.perf_counter()
    os.kill(front_pid(a.daemon_pid), signal.SIGKILL)
    port = wait_port(a.log, seen)
    listening = time.perf_counter() - t0
    wait_health(port)
    ready = time.perf_counter() - t0
    firsts = []
    for c in clients:
        c.port = port
        c.close()
        took, s = timed(c, "a.sum() > 0")
        if s.get("restored") or s.get("success") is not True:
            raise RuntimeError("not taken over: %r" % s)
        firsts.append(took)
    a.port = port
    return [("SIGKILL of the front until the new one listens", "%.2f s" % listening),
            ("SIGKILL of the front until /health is 200", "%.2f s" % ready),
            ("each session's first call after it (kernel taken over), median",
             "%.0f ms" % statistics.median(firsts)),
            ("the slowest first call after it", "%.0f ms" % max(firsts))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--daemon-pid", type=int, required=True)
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--worker", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--mb", type=int, default=10)
    ap.add_argument("--clone", type=int, default=0,
                    help="copy the stopped daemon's sessions until there are this many")
    ap.add_argument("--front-crash", action="store_true",
                    help="SIGKILL the front first, and time its sessions' return")
    a = ap.parse_args()

    code = "import numpy as np\na = np.random.rand(%d)" % (a.mb * 131072)
    clients = []
    for _ in range(a.sessions):
        c = Client("127.0.0.1", a.port, timeout=600)
        c.initialize()
        timed(c, code)
        clients.append(c)
    live = statistics.median(timed(c, "a.sum() > 0")[0] for c in clients)
    crash = []
    if a.front_crash:
        time.sleep(1.5)  # the journal is written each second it changed
        crash = front_crash(a, clients)
    before_procs = processes(a.daemon_pid)
    before_rss = rss_kb(front_pid(a.daemon_pid))

    t0 = time.perf_counter()
    os.kill(a.daemon_pid, signal.SIGTERM)
    wait_exit(a.daemon_pid)
    stop = time.perf_counter() - t0
    total = clone(a.config, a.clone) if a.clone else a.sessions

    seen = len(re.findall(r"listening on 127\.0\.0\.1:", open(a.log).read()))
    t0 = time.perf_counter()
    d = subprocess.Popen([a.daemon, "-d", "-f", a.config, "-W", a.worker],
                         stdout=open(a.log, "a"), stderr=subprocess.STDOUT)
    port = wait_port(a.log, seen)
    listening = time.perf_counter() - t0
    wait_health(port)
    ready = time.perf_counter() - t0
    time.sleep(2)  # the pool's warm kernels start
    after_procs = processes(d.pid)
    after_rss = rss_kb(front_pid(d.pid))
    if a.clone:
        rundir = re.search(r"^runtime_dir: *(\S+)", open(a.config).read(), re.M).group(1)
        listed, ctl, health_ms, tool = table_ms(port, rundir, clients[0].session_id)

    firsts = []
    for c in clients:
        c.port = port
        c.close()
        took, s = timed(c, "a.sum() > 0")
        if not s.get("restored"):
            raise RuntimeError("no restore: %r" % s)
        firsts.append(took)
    d.send_signal(signal.SIGTERM)
    d.wait(timeout=600)

    if a.clone:
        print("%d sessions of %d MB each, copied to %d hibernated ones at the stop:"
              % (a.sessions, a.mb, total))
    else:
        print("%d sessions of %d MB each:" % (a.sessions, a.mb))
    print()
    print("| | |")
    print("|---|---:|")
    print("| a live session's call before the stop (median) | %.0f ms |" % live)
    for row in crash:
        print("| %s | %s |" % row)
    print("| SIGTERM until the daemon exited (every session checkpointed) | %.1f s |" % stop)
    print("| start until it listens | %.2f s |" % listening)
    print("| start until /health is 200 | %.2f s |" % ready)
    print("| processes under the daemon before the stop / after the start | %d / %d |" %
          (before_procs, after_procs))
    print("| the front's RSS before the stop / after the start | %d / %d kB |" %
          (before_rss, after_rss))
    print("| each session's first call after the start, median | %.0f ms |" %
          statistics.median(firsts))
    print("| the slowest first call | %.0f ms |" % max(firsts), flush=True)
    if a.clone:
        print("| the front's RSS after the start less before the stop, per added session "
              "| %.1f kB |" % ((after_rss - before_rss) / (total - a.sessions)))
        print("| sessions listed by the control socket | %d in %.1f ms |" % (listed, ctl))
        print("| /health, median of 20 | %.2f ms |" % health_ms)
        print("| one session's list_sessions | %.1f ms |" % tool, flush=True)


if __name__ == "__main__":
    main()
