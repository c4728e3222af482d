"""cluster.py - HAProxy's cost in front of codeexecd nodes (cluster.sh).

1. Warm-call latency: one session on node a directly, one through HAProxy,
   the same small call alternating between them; medians and their ratio.
2. Throughput: SESSIONS sessions at once, each making CALLS calls that
   carry a variable, against node a alone (directly) and against the three
   nodes through HAProxy; calls per second and their ratio. Sessions are
   opened and their first call made before the clock starts, so kernel
   start-up is not counted.
"""

import argparse
import os
import statistics
import threading
import time

from mcpclient import Client, health


def wait_ready(ports, timeout=300):
    end = time.time() + timeout
    for p in ports:
        while health("127.0.0.1", p)[0] != 200:
            if time.time() > end:
                raise SystemExit("node on port %d not ready" % p)
            time.sleep(0.2)


def latency(direct_port, via_port, n):
    a, h = Client("127.0.0.1", direct_port), Client("127.0.0.1", via_port)
    a.initialize()
    h.initialize()
    for c in (a, h):
        for _ in range(20):
            c.execute("1 + 1")
    ta, th = [], []
    for _ in range(n):
        for c, out in ((a, ta), (h, th)):
            t = time.perf_counter()
            c.execute("1 + 1")
            out.append((time.perf_counter() - t) * 1e3)
    a.delete()
    h.delete()
    return statistics.median(ta), statistics.median(th), sorted(ta)[n * 9 // 10], \
        sorted(th)[n * 9 // 10]


def throughput(port, sessions, calls):
    clients = [Client("127.0.0.1", port) for _ in range(sessions)]
    ready = threading.Barrier(sessions + 1)
    done = []
    errors = []

    def run(i, c):
        try:
            c.initialize()
            c.execute("x = 0")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))
        ready.wait()
        try:
            for k in range(calls):
                r = c.execute("x = x + 1\nprint(x)")
                if r["structuredContent"]["stdout"].strip() != str(k + 1):
                    errors.append("session %d: wrong x" % i)
            done.append(i)
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(clients)]
    for t in threads:
        t.start()
    ready.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    nodes = {}
    for c in clients:
        nodes[c.session_id.split(".")[0]] = nodes.get(c.session_id.split(".")[0], 0) + 1
        try:
            c.delete()
        except Exception:  # noqa: BLE001 - the numbers are taken
            pass
    if errors:
        raise SystemExit("throughput: %d errors, first: %s" % (len(errors), errors[0]))
    return sessions * calls / elapsed, nodes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--haproxy", type=int, required=True)
    ap.add_argument("--nodes", required=True)
    ap.add_argument("--sessions", type=int, default=64)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--latency-calls", type=int, default=300)
    a = ap.parse_args()
    nodes = [int(p) for p in a.nodes.split(",")]
    wait_ready(nodes)
    time.sleep(3)  # HAProxy's checks: rise 2 at 1 s
    print("machine: %d CPUs, %s" % (os.cpu_count(), open("/proc/loadavg").read().strip()))
    da, ha, d90, h90 = latency(nodes[0], a.haproxy, a.latency_calls)
    print("warm call, %d each, alternating: direct median %.2f ms (p90 %.2f), via haproxy "
          "median %.2f ms (p90 %.2f): ratio %.2f, +%.2f ms"
          % (a.latency_calls, da, d90, ha, h90, ha / da, ha - da))
    one, n1 = throughput(nodes[0], a.sessions, a.calls)
    three, n3 = throughput(a.haproxy, a.sessions, a.calls)
    print("throughput, %d sessions x %d calls: 1 node direct %.0f calls/s %s; 3 nodes via "
          "haproxy %.0f calls/s %s: ratio %.2f (the nodes share this machine's %d CPUs)"
          % (a.sessions, a.calls, one, n1, three, n3, three / one, os.cpu_count()))


if __name__ == "__main__":
    main()
