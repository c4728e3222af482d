#!/usr/bin/python3
"""kernel_start.py - kernel start to ready: exec against a fork of a template.

Issue 33. Measures, idle, N times each, alternating:

  exec      what pool.start: exec does for the Python part: a new
            /usr/bin/python3 -m ipykernel_launcher -f CONN (jupyter_client's
            KernelManager), until the client's wait_for_ready (a
            kernel_info_reply).
  template  a prototype of pool.start: template's Python part: one process
            that imported ipykernel.kernelapp, IPython, zmq and tornado (and
            --preload modules) forks per kernel, and the child starts
            IPKernelApp with -f CONN; the same wait_for_ready.

Neither includes the daemon's isolation steps (cgroup, identity,
namespaces: a few ms in C either way) or its warm-up. The template here is
a prototype, not the daemon's (not built yet): it shows what forking
saves, the bound the built template can reach.

Usage: bench/kernel_start.py [-n 20] [--preload numpy,pandas]

Results, one run, this machine (2 shared cores, Debian python3 3.11,
ipykernel 6.17, jupyter_client 7.4.9), 2026-12-04, -n 20, no preload:
  see bench/README.md "Kernel start: exec against a template fork".
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from jupyter_client import BlockingKernelClient, KernelManager
from jupyter_client.connect import write_connection_file

TEMPLATE = r'''
import os, signal, sys
for m in sys.argv[1:]:
    __import__(m)
import ipykernel.kernelapp, IPython, zmq, tornado
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reaped by the kernel
print("ready", flush=True)
for line in sys.stdin:
    conn = line.strip()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        # Its own stdio, as the daemon gives a kernel (not the template's pipes).
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        ipykernel.kernelapp.IPKernelApp.launch_instance(argv=["-f", conn])
        os._exit(0)
    print(pid, flush=True)
'''


def wait_ready(conn):
    kc = BlockingKernelClient(connection_file=conn)
    kc.load_connection_file()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    kc.stop_channels()


def start_exec():
    t0 = time.monotonic()
    km = KernelManager(kernel_cmd=[sys.executable, "-m", "ipykernel_launcher", "-f",
                                   "{connection_file}"])
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    dt = time.monotonic() - t0
    kc.stop_channels()
    km.shutdown_kernel(now=True)
    return dt


def start_template(tpl, tmp, i):
    conn = os.path.join(tmp, "k%d.json" % i)
    write_connection_file(conn, ip="127.0.0.1")
    t0 = time.monotonic()
    tpl.stdin.write(conn + "\n")
    tpl.stdin.flush()
    pid = int(tpl.stdout.readline())
    wait_ready(conn)
    dt = time.monotonic() - t0
    os.kill(pid, 9)
    return dt


def summary(name, xs):
    xs = sorted(xs)
    p99 = xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))]
    print("%-9s n=%d median %7.1f ms  p99 %7.1f ms  min %7.1f ms" %
          (name, len(xs), statistics.median(xs) * 1000, p99 * 1000, xs[0] * 1000))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--preload", default="")
    a = ap.parse_args()
    mods = [m for m in a.preload.split(",") if m]
    tpl = subprocess.Popen([sys.executable, "-c", TEMPLATE] + mods, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)
    assert tpl.stdout.readline().strip() == "ready"
    ex, tp = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.n):
            # Who goes first alternates, so drift falls on both.
            if i % 2:
                tp.append(start_template(tpl, tmp, i))
                ex.append(start_exec())
            else:
                ex.append(start_exec())
                tp.append(start_template(tpl, tmp, i))
    tpl.stdin.close()
    tpl.wait()
    summary("exec", ex)
    summary("template", tp)


if __name__ == "__main__":
    main()
