"""scale.py - many concurrent sessions: codeexecd against jupyter_client.

Issue 18 goal 4. Started by `bench/run.sh -s`, which owns the daemon
(start, config with room for 64 sessions from one address, cleanup).
This script owns the jupyter_client kernels it starts and shuts them down
before it returns, also when a measurement fails.

For each N in --sessions, both sides run in turn (codeexecd first for the
1st, 3rd, ... N, jupyter_client first for the others), each with N threads
of this one process, one session or kernel per thread:

  phase 1  every thread at once: open its session (MCP initialize +
           tools/call) or start its kernel (KernelManager.start_kernel,
           wait_for_ready, execute) and get its first result. The time to
           that first result is "first call": it includes waiting for a
           kernel (the daemon's pool and its start-up queue; for
           jupyter_client, the kernel's own start-up, all N at once).
  phase 2  when every thread has its first result, each makes --calls
           calls of `sum(range(1000)) + i`, checking every answer.
           Throughput = N * calls / the wall time from the start of
           phase 2 to the end of its last call; latencies are per call.

Sessions are closed (DELETE) and kernels shut down only after phase 2 has
ended for every thread, so that no teardown runs beside a measured call.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import mcpclient  # noqa: E402

now = time.perf_counter
BASE = sum(range(1000))
CODE = "sum(range(1000)) + %d"
# The kernel the daemon runs, as jupyter_client's python3 kernelspec gives it
# (/usr/bin/python3 -m ipykernel_launcher -f ...), with the daemon's default
# kernel_history: memory.
DIRECT_EXTRA = ["--HistoryManager.hist_file=:memory:"]


def log(*a):
    print("scale:", *a, file=sys.stderr, flush=True)


def pct(sorted_ms, p):
    """Nearest-rank percentile p (0-100) of a sorted list."""
    if not sorted_ms:
        return None
    k = max(0, min(len(sorted_ms) - 1, int(-(-p * len(sorted_ms) // 100)) - 1))
    return sorted_ms[k]


class Side:
    """One side's run at one N: threads, barriers, samples."""

    def __init__(self, n, calls):
        self.n, self.calls = n, calls
        self.first_ms = [None] * n
        self.lat_ms = [[] for _ in range(n)]
        self.end = [None] * n
        self.errors = []
        self.first_retries = 0
        self.t_phase2 = None
        self.lock = threading.Lock()
        self.ready = threading.Barrier(n)
        self.warm = threading.Barrier(n, action=self._mark)
        self.done = threading.Barrier(n)

    def _mark(self):
        self.t_phase2 = now()

    def error(self, i, what):
        with self.lock:
            self.errors.append("thread %d: %s" % (i, what))

    def summary(self):
        lat = sorted(x for per in self.lat_ms for x in per)
        first = sorted(x for x in self.first_ms if x is not None)
        ends = [e for e in self.end if e is not None]
        wall = (max(ends) - self.t_phase2) if ends and self.t_phase2 else None
        ok = len(lat)
        return {
            "n": self.n, "calls_per_session": self.calls, "calls_ok": ok,
            "errors": len(self.errors), "error_samples": self.errors[:5],
            "first_retries": self.first_retries,
            "wall_s": wall,
            "throughput": ok / wall if wall else None,
            "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99),
            "max_ms": lat[-1] if lat else None,
            "first_p50_ms": pct(first, 50), "first_max_ms": first[-1] if first else None,
            "first_min_ms": first[0] if first else None,
        }


def check(value, i):
    return value == str(BASE + i)


def value_of(result):
    for o in result.get("structuredContent", {}).get("rich_outputs", []):
        if o.get("mime_type") == "text/plain":
            return o.get("data")
    return None


# --- codeexecd ---------------------------------------------------------------------------

def codeexecd_thread(args, side, i):
    c = mcpclient.Client(args.host, args.port, timeout=300)
    opened = False
    try:
        side.ready.wait()
        t0 = now()
        c.initialize()
        opened = True
        # A first call that found no kernel in time (NoKernel) is resent,
        # as a client would, and counted; its wait stays in "first call".
        for attempt in range(5):
            res = c.execute(CODE % 0, check=False)
            if not res.get("isError"):
                break
            with side.lock:
                side.first_retries += 1
        if not check(value_of(res), 0):
            side.error(i, "first call: %r" % res)
        else:
            side.first_ms[i] = (now() - t0) * 1e3
        side.warm.wait()
        lat = side.lat_ms[i]
        for k in range(1, side.calls + 1):
            t = now()
            res = c.execute(CODE % k, check=False)
            dt = (now() - t) * 1e3
            if res.get("isError") or not check(value_of(res), k):
                side.error(i, "call %d: %r" % (k, res))
            else:
                lat.append(dt)
        side.end[i] = now()
    except threading.BrokenBarrierError:
        pass
    except Exception as e:  # noqa: BLE001 - recorded, the run goes on
        side.error(i, repr(e))
        side.warm.abort()
    finally:
        try:
            side.done.wait()
        except threading.BrokenBarrierError:
            pass
        if opened:
            try:
                c.delete()
            except Exception:  # noqa: BLE001
                pass
        c.close()


def wait_pool(args, timeout=600):
    """Wait until /health shows the warm pool full again."""
    t0 = now()
    while now() - t0 < timeout:
        st, body = mcpclient.health(args.host, args.port)
        if st == 200 and body and body.get("idle_kernels", 0) >= args.warm:
            time.sleep(0.5)  # let the last kernel's start-up work end
            return now() - t0
        time.sleep(0.1)
    raise RuntimeError("the pool did not refill within %d s" % timeout)


# --- jupyter_client -----------------------------------------------------------------------

def direct_thread(args, side, i, tag):
    from jupyter_client.manager import KernelManager
    km = kc = None
    try:
        side.ready.wait()
        t0 = now()
        conn = os.path.join(args.tmpdir, "sc-%s-%d.json" % (tag, i))
        km = KernelManager(kernel_name="python3", connection_file=conn, transport="ipc",
                           ip=os.path.join(args.tmpdir, "sc-%s-%d-ipc" % (tag, i)))
        km.start_kernel(extra_arguments=DIRECT_EXTRA)
        kc = km.client()
        kc.allow_stdin = False
        kc.start_channels()
        kc.wait_for_ready(timeout=300)
        if not check(direct_execute(kc, CODE % 0), 0):
            side.error(i, "first call: wrong answer")
        else:
            side.first_ms[i] = (now() - t0) * 1e3
        side.warm.wait()
        lat = side.lat_ms[i]
        for k in range(1, side.calls + 1):
            t = now()
            v = direct_execute(kc, CODE % k)
            dt = (now() - t) * 1e3
            if not check(v, k):
                side.error(i, "call %d: %r" % (k, v))
            else:
                lat.append(dt)
        side.end[i] = now()
    except threading.BrokenBarrierError:
        pass
    except Exception as e:  # noqa: BLE001
        side.error(i, repr(e))
        side.warm.abort()
    finally:
        try:
            side.done.wait()
        except threading.BrokenBarrierError:
            pass
        try:
            if kc is not None:
                kc.stop_channels()
        finally:
            if km is not None:
                if km.has_kernel:
                    km.shutdown_kernel(now=True)
                km.cleanup_resources()


def direct_execute(kc, code):
    """Execute; wait for the execute_reply and iopub idle, as the daemon
    does; return the text/plain value, or None if the reply is not ok."""
    reply, value = benchlib.wait_executed(kc, kc.execute(code, allow_stdin=False), 300)
    return value if reply["content"]["status"] == "ok" else None


# --- the run ------------------------------------------------------------------------------

def run_side(args, name, n, rnd):
    side = Side(n, args.calls)
    if name == "codeexecd":
        wait_pool(args)
        target, extra = codeexecd_thread, ()
    else:
        target, extra = direct_thread, ("%d-%d" % (n, rnd),)
    load = os.getloadavg()[0]
    log("%s: %d sessions x %d calls (load %.2f)" % (name, n, args.calls, load))
    threads = [threading.Thread(target=target, args=(args, side, i) + extra, daemon=True)
               for i in range(n)]
    t0 = now()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s = side.summary()
    s["load1_start"] = load
    s["total_s"] = now() - t0
    log("  %s: %.1f calls/s, p50 %.1f ms, p99 %.1f ms, first p50 %.0f ms max %.0f ms, "
        "errors %d" % (name, s["throughput"] or 0, s["p50_ms"] or 0, s["p99_ms"] or 0,
                       s["first_p50_ms"] or 0, s["first_max_ms"] or 0, s["errors"]))
    return s


def facts(args):
    import ipykernel
    import jupyter_client
    cpu = benchlib.cpu_model()
    try:
        version = subprocess.run([args.codeexecd, "-V"], capture_output=True, text=True,
                                 timeout=10).stdout.strip()
    except OSError:
        version = "?"
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "nproc": len(os.sched_getaffinity(0)), "cpu": cpu,
        "mem_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "loadavg_start": args.loadavg_start or " ".join("%.2f" % x for x in os.getloadavg()),
        "kernel": platform.release(),
        "python": "%s (%s)" % (platform.python_version(), sys.executable),
        "ipykernel": ipykernel.__version__, "jupyter_client": jupyter_client.__version__,
        "codeexecd": version, "commit": args.commit,
    }


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(x, nd=1):
    return "-" if x is None else ("%.*f" % (nd, x))


def table(out):
    f = out["facts"]
    lines = [
        "- date: %s; the run took %.0f s" % (f["date"], f["duration_s"]),
        "- machine: %d CPUs (%s), %.1f GB; load average %s at the start, %s at the end; "
        "Linux %s" % (f["nproc"], f["cpu"], f["mem_gb"], f["loadavg_start"],
                      f["loadavg_end"], f["kernel"]),
        "- Python %s; ipykernel %s; jupyter_client %s" % (f["python"], f["ipykernel"],
                                                         f["jupyter_client"]),
        "- %s built from commit %s; pool.warm %d, pool.max_starting %s; %d calls of "
        "`sum(range(1000)) + i` per session after the first, every answer checked"
        % (f["codeexecd"] or "codeexecd", f["commit"] or "?", out["params"]["warm"],
           out["params"]["max_starting"], out["params"]["calls"]),
        "",
        "| N | side (order) | load | calls/s | p50 | p99 | first call p50 / max | "
        "errors | throughput ratio | p99 ratio |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in out["rounds"]:
        cx, jc = r["codeexecd"], r["direct"]
        tr = ratio(cx["throughput"], jc["throughput"])
        pr = ratio(cx["p99_ms"], jc["p99_ms"])
        for name, s in (("codeexecd", cx), ("jupyter_client", jc)):
            first = name == "codeexecd"
            pos = "1st" if r["order"][0] == ("codeexecd" if first else "direct") else "2nd"
            err = "%d" % s["errors"]
            if s.get("first_retries"):
                err += " (+%d first-call retries)" % s["first_retries"]
            lines.append("| %s | %s (%s) | %.1f | %s | %s ms | %s ms | %s / %s ms | %s | %s | %s |" % (
                r["n"] if first else "", name, pos, s["load1_start"], fmt(s["throughput"]),
                fmt(s["p50_ms"]), fmt(s["p99_ms"]), fmt(s["first_p50_ms"], 0),
                fmt(s["first_max_ms"], 0), err,
                ("**%s**" % fmt(tr, 2)) if first else "",
                ("**%s**" % fmt(pr, 2)) if first else ""))
    lines.append("")
    lines.append("Aims: throughput ratio (codeexecd / jupyter_client) >= 0.9, "
                 "p99 ratio <= 2. \"load\" is the 1-minute load average as the side began.")
    return "\n".join(lines)


BEGIN = "<!-- scale-results:begin (written by bench/scale.py) -->"
END = "<!-- scale-results:end -->"


def write_readme(path, text):
    with open(path) as f:
        doc = f.read()
    block = BEGIN + "\n" + text + "\n" + END
    if BEGIN in doc and END in doc:
        head, rest = doc.split(BEGIN, 1)
        doc = head + block + rest.split(END, 1)[1]
    else:
        doc = doc.rstrip("\n") + "\n\n## Scale: last results\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(doc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--warm", type=int, default=2, help="the daemon's pool.warm")
    ap.add_argument("--max-starting", default="0", help="the daemon's pool.max_starting, for the record")
    ap.add_argument("--tmpdir", required=True)
    ap.add_argument("--out", required=True, help="JSON file for the results")
    ap.add_argument("--codeexecd", default="codeexecd")
    ap.add_argument("--commit", default="")
    ap.add_argument("--loadavg-start", default="")
    ap.add_argument("--sessions", default="1,8,32,64", help="the Ns, comma-separated")
    ap.add_argument("--calls", type=int, default=100, help="calls per session after the first")
    ap.add_argument("--readme", help="write the table into this README's scale section")
    args = ap.parse_args()

    ns = [int(x) for x in args.sessions.split(",") if x]
    out = {"facts": facts(args), "params": {"sessions": ns, "calls": args.calls,
                                            "warm": args.warm,
                                            "max_starting": args.max_starting},
           "rounds": []}
    t_start = now()
    for rnd, n in enumerate(ns):
        order = ("codeexecd", "direct") if rnd % 2 == 0 else ("direct", "codeexecd")
        r = {"n": n, "order": order}
        for name in order:
            r[name] = run_side(args, name, n, rnd)
        out["rounds"].append(r)
    out["facts"]["loadavg_end"] = " ".join("%.2f" % x for x in os.getloadavg())
    out["facts"]["duration_s"] = round(now() - t_start, 1)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    text = table(out)
    print(text)
    if args.readme:
        write_readme(args.readme, text)
    bad = sum(r[s]["errors"] for r in out["rounds"] for s in ("codeexecd", "direct"))
    if bad:
        log("%d calls failed or gave a wrong answer (see %s)" % (bad, args.out))
        sys.exit(1)


if __name__ == "__main__":
    main()
