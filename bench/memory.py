"""memory.py - what codeexecd's processes hold in memory (issue 18 goal 5).

Run by `bench/run.sh -m`, which starts the daemon (with
output_truncation_threshold raised so that 20 MB prints come back whole)
and passes its port and pid. Measures, on the real daemon:

1. worker PSS: the private share (Pss, Private_Clean + Private_Dirty from
   /proc/PID/smaps_rollup) of each codeexec-worker (the daemon's children)
   beside its kernel's, with several sessions open;
2. the supervisor's RSS (its front's, codeexecd-front, which serves HTTP
   and holds the results) before, during and after N calls of mixed sizes
   (mostly `1+1`, some 100 kB prints, some 5 MB prints, an image);
3. the supervisor's RSS after a burst of large payloads (calls printing
   10 MB each, returned whole: the worker keeps at most 12 MiB of a stream), at once and a few seconds later: is memory given back?

Reading /proc of the workers and kernels needs the same user or root.
Standard library only; mcpclient.py is the MCP client.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import mcpclient  # noqa: E402

BEGIN = "<!-- memory-results:begin (written by bench/memory.py) -->"
END = "<!-- memory-results:end -->"

# An image: a PNG of random pixels (~190 kB, incompressible) shown with
# IPython.display, made in the kernel so nothing beyond the stdlib is needed.
IMAGE = r"""
import os, struct, zlib
from IPython.display import Image, display
w, h = 256, 256
raw = b"".join(b"\x00" + os.urandom(w * 3) for _ in range(h))
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
display(Image(data=png))
"""


def log(*a):
    print("memory:", *a, file=sys.stderr, flush=True)


def kb_fields(path, names):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in names:
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def rss_kb(pid):
    return kb_fields("/proc/%d/status" % pid, ("VmRSS",)).get("VmRSS", 0)


def pss(pid):
    """(Pss, private = Private_Clean + Private_Dirty, Rss) in kB."""
    f = kb_fields("/proc/%d/smaps_rollup" % pid,
                  ("Pss", "Private_Clean", "Private_Dirty", "Rss"))
    return f.get("Pss", 0), f.get("Private_Clean", 0) + f.get("Private_Dirty", 0), f.get("Rss", 0)


def children(pid):
    kids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        rest = st[st.rfind(")") + 2:].split()
        if int(rest[1]) == pid:
            kids.append(int(d))
    return kids


def http_process(pid):
    """The process that serves HTTP: the daemon's front (codeexecd-front)
    since the privilege split, or the daemon itself before it."""
    fronts = [k for k in children(pid) if comm(k) == "codeexecd-front"]
    return fronts[0] if fronts else pid


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return ""


def workers(daemon):
    """{worker pid: [kernel pids]} of the daemon's codeexec-worker children."""
    out = {}
    for w in children(daemon):
        if comm(w).startswith("codeexec-work"):
            out[w] = children(w)
    return out


def mb(kb):
    return kb / 1024.0


# --- measurements -------------------------------------------------------------------------

def measure_workers(args):
    """Open --sessions sessions, run one call in each, and read the PSS of
    every worker that holds a session, and of its kernel."""
    clients = []
    for _ in range(args.sessions):
        c = mcpclient.Client(args.host, args.port)
        c.initialize()
        c.execute("1+1")
        clients.append(c)
    time.sleep(0.5)
    rows = []
    for w, kernels in sorted(workers(args.daemon_pid).items()):
        wp = pss(w)
        kp = [pss(k) for k in kernels]
        rows.append({"worker": w, "worker_pss_kb": wp[0], "worker_private_kb": wp[1],
                     "worker_rss_kb": wp[2],
                     "kernel_pss_kb": sum(k[0] for k in kp),
                     "kernel_private_kb": sum(k[1] for k in kp)})
    return clients, rows


def mixed_code(i):
    """The i-th call of the mixed run: of every 100 calls, 1 prints 5 MB,
    1 shows an image, 8 print 100 kB, 90 are `1+1`."""
    r = i % 100
    if r == 50:
        return "print('y' * (5 << 20))", "5 MB print"
    if r == 75:
        return IMAGE, "image"
    if r % 12 == 6:
        return "print('x' * 100000)", "100 kB print"
    return "1+1", "1+1"


def run_mixed(args, c):
    sup = http_process(args.daemon_pid)
    for i in range(args.warmup):  # the allocator's arenas settle first
        c.execute(mixed_code(i)[0])
    before = rss_kb(sup)
    samples = [(0, before)]
    counts = {}
    t0 = time.monotonic()
    for i in range(args.calls):
        code, kind = mixed_code(i)
        res = c.execute(code)
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "5 MB print":
            text = "".join(x.get("text", "") for x in res.get("content", []))
            if len(text) < 5 << 20:
                raise SystemExit("memory: the 5 MB print of call %d came back as %d characters "
                                 "(output_truncation_threshold too low?): %r"
                                 % (i, len(text), text[:300]))
        if (i + 1) % args.sample_every == 0:
            samples.append((i + 1, rss_kb(sup)))
            log("%d calls, supervisor RSS %.1f MB" % (i + 1, mb(samples[-1][1])))
    took = time.monotonic() - t0
    time.sleep(2)
    after = rss_kb(sup)
    return {"calls": args.calls, "counts": counts, "seconds": round(took, 1),
            "rss_before_kb": before, "rss_max_kb": max(s[1] for s in samples),
            "rss_min_kb": min(s[1] for s in samples), "rss_after_kb": after,
            "samples": samples}


def max_worker_pss(args):
    return max([pss(w)[0] for w in workers(args.daemon_pid)] or [0])


def run_big(args, c):
    sup = http_process(args.daemon_pid)
    wbefore = max_worker_pss(args)
    before = rss_kb(sup)
    peak = before
    n = args.big_mb << 20
    for _ in range(args.big_calls):
        res = c.execute("print('z' * %d)" % n)
        got = sum(len(x.get("text", "")) for x in res.get("content", []))
        if got < n:
            raise SystemExit("memory: a %d MB print came back as %d characters" %
                             (args.big_mb, got))
        del res
        peak = max(peak, rss_kb(sup))
    right_after = rss_kb(sup)
    time.sleep(args.settle)
    later = rss_kb(sup)
    wlater = max_worker_pss(args)
    return {"worker_pss_before_kb": wbefore, "worker_pss_later_kb": wlater, "calls": args.big_calls, "mb_each": args.big_mb, "rss_before_kb": before,
            "rss_peak_kb": peak, "rss_right_after_kb": right_after,
            "rss_later_kb": later, "settle_s": args.settle}


# --- report -------------------------------------------------------------------------------

def facts(args):
    try:
        version = subprocess.run([args.codeexecd, "-V"], capture_output=True, text=True,
                                 timeout=10).stdout.strip()
    except OSError:
        version = "?"
    cpu = benchlib.cpu_model()
    libc = " ".join(platform.libc_ver())
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "nproc": os.cpu_count(), "cpu": cpu, "kernel": platform.release(),
            "libc": libc, "codeexecd": version, "commit": args.commit,
            "loadavg_start": args.loadavg_start,
            "loadavg_end": " ".join("%.2f" % x for x in os.getloadavg())}


def table(res):
    f = res["facts"]
    lines = [
        "- date: %s; machine: %s CPUs (%s), Linux %s, %s" % (
            f["date"], f["nproc"], f["cpu"] or "?", f["kernel"], f["libc"]),
        "- load average %s at the start, %s at the end" % (f["loadavg_start"],
                                                           f["loadavg_end"]),
        "- %s built from commit %s" % (f["codeexecd"], f["commit"] or "?"),
        "",
        "| what | value |",
        "|---|---:|",
    ]
    ws = res["workers"]
    if ws:
        wp = sorted(w["worker_pss_kb"] for w in ws)
        wpriv = sorted(w["worker_private_kb"] for w in ws)
        kp = sorted(w["kernel_pss_kb"] for w in ws if w["kernel_pss_kb"])
        lines += [
            "| worker PSS, median of %d (min - max) | %.2f MB (%.2f - %.2f) |" % (
                len(wp), mb(wp[len(wp) // 2]), mb(wp[0]), mb(wp[-1])),
            "| worker private (Private_Clean + Private_Dirty), median | %.2f MB |" % (
                mb(wpriv[len(wpriv) // 2])),
            "| worker RSS, median | %.2f MB |" % mb(sorted(
                w["worker_rss_kb"] for w in ws)[len(ws) // 2]),
        ]
        if kp:
            lines.append("| its kernel's PSS, median | %.1f MB |" % mb(kp[len(kp) // 2]))
    m = res.get("mixed")
    if m:
        mix = ", ".join("%d %s" % (v, k) for k, v in sorted(m["counts"].items()))
        lines += [
            "| supervisor RSS before %d mixed calls (%s) | %.1f MB |" % (
                m["calls"], mix, mb(m["rss_before_kb"])),
            "| supervisor RSS during them, min - max | %.1f - %.1f MB |" % (
                mb(m["rss_min_kb"]), mb(m["rss_max_kb"])),
            "| supervisor RSS 2 s after them (after - before) | %.1f MB (%+.1f MB) |" % (
                mb(m["rss_after_kb"]), mb(m["rss_after_kb"] - m["rss_before_kb"])),
        ]
    b = res.get("big")
    if b:
        lines += [
            "| supervisor RSS before %d calls printing %d MB each | %.1f MB |" % (
                b["calls"], b["mb_each"], mb(b["rss_before_kb"])),
            "| supervisor RSS, peak between them | %.1f MB |" % mb(b["rss_peak_kb"]),
            "| supervisor RSS right after the last | %.1f MB |" % mb(b["rss_right_after_kb"]),
            "| supervisor RSS %g s later (later - before) | %.1f MB (%+.1f MB) |" % (
                b["settle_s"], mb(b["rss_later_kb"]),
                mb(b["rss_later_kb"] - b["rss_before_kb"])),
            "| largest worker PSS before the burst, and %g s after it | %.2f MB, %.2f MB |" % (
                b["settle_s"], mb(b["worker_pss_before_kb"]), mb(b["worker_pss_later_kb"])),
        ]
    return "\n".join(lines)


def write_readme(path, text):
    with open(path) as fh:
        old = fh.read()
    i, j = old.find(BEGIN), old.find(END)
    if i < 0 or j < i:
        sys.exit("memory.py: %s has no %s ... %s markers" % (path, BEGIN, END))
    with open(path, "w") as fh:
        fh.write(old[:i] + BEGIN + "\n" + text + "\n" + old[j:])
    log("wrote the results into", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--daemon-pid", type=int, required=True)
    ap.add_argument("--out", help="JSON file for the results")
    ap.add_argument("--readme", help="write the table into this README's memory section")
    ap.add_argument("--codeexecd", default="codeexecd")
    ap.add_argument("--commit", default="")
    ap.add_argument("--loadavg-start", default="")
    ap.add_argument("-n", "--calls", type=int, default=10000,
                    help="mixed calls (default 10000, the figure recorded)")
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--sample-every", type=int, default=500)
    ap.add_argument("--sessions", type=int, default=4,
                    help="sessions open while the workers' PSS is read")
    ap.add_argument("--big-calls", type=int, default=20)
    ap.add_argument("--big-mb", type=int, default=10,
                    help="MB printed by each call of the burst; the worker keeps at most "
                    "12 MiB of a stream (EXEC_TEXT_CAP), so up to 12")
    ap.add_argument("--settle", type=float, default=5.0,
                    help="seconds after the burst before RSS is read again")
    ap.add_argument("--only", choices=("workers", "mixed", "big"), action="append")
    args = ap.parse_args()
    res = {"facts": None, "workers": [], "mixed": None, "big": None}
    only = set(args.only or ("workers", "mixed", "big"))
    clients, rows = measure_workers(args)
    if "workers" in only:
        res["workers"] = rows
    c = clients[0]
    if "big" in only:  # first, on a supervisor that has seen only small calls
        log("burst: %d calls printing %d MB" % (args.big_calls, args.big_mb))
        res["big"] = run_big(args, c)
    if "mixed" in only:
        log("%d mixed calls" % args.calls)
        res["mixed"] = run_mixed(args, c)
    for cl in clients:
        try:
            cl.delete()
        except (OSError, mcpclient.McpError):
            pass
    res["facts"] = facts(args)
    text = table(res)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(res, fh, indent=1)
    if args.readme:
        write_readme(args.readme, text)


if __name__ == "__main__":
    main()
