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
Prints a Markdown table. Stops the daemon it started at the end.
"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import time

from hibernate import descendants, front_pid, rss_kb, timed
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
    a = ap.parse_args()

    code = "import numpy as np\na = np.random.rand(%d)" % (a.mb * 131072)
    clients = []
    for _ in range(a.sessions):
        c = Client("127.0.0.1", a.port, timeout=600)
        c.initialize()
        timed(c, code)
        clients.append(c)
    live = statistics.median(timed(c, "a.sum() > 0")[0] for c in clients)
    before_procs = processes(a.daemon_pid)
    before_rss = rss_kb(front_pid(a.daemon_pid))

    t0 = time.perf_counter()
    os.kill(a.daemon_pid, signal.SIGTERM)
    wait_exit(a.daemon_pid)
    stop = time.perf_counter() - t0

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

    print("%d sessions of %d MB each:" % (a.sessions, a.mb))
    print()
    print("| | |")
    print("|---|---:|")
    print("| a live session's call before the stop (median) | %.0f ms |" % live)
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


if __name__ == "__main__":
    main()
