"""bench.py - measure a running codeexecd against jupyter_client, in one run.

Started by bench/run.sh, which owns the daemon (start, config, cleanup).
This script owns the jupyter_client kernels it starts, and shuts them down
before it returns, even when a measurement fails. It writes every sample
and its summary to a JSON file that report.py turns into the table and
the "Last results" section of bench/README.md.

Every comparison runs both sides in the same loop, alternating, so that
the noise of a shared machine falls on both alike; what is reported is
the ratio of their medians.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import mcpclient  # noqa: E402

now = time.perf_counter


def ms(seconds):
    return seconds * 1e3


def summary(samples):
    """Median, p90, min, max, mean and n of a list of milliseconds."""
    s = sorted(samples)
    n = len(s)
    if n == 0:
        return {"n": 0}
    p90 = s[min(n - 1, int(round(0.9 * (n - 1))))]
    return {"n": n, "median": statistics.median(s), "p90": p90, "min": s[0],
            "max": s[-1], "mean": statistics.fmean(s)}


def log(*a):
    print("bench:", *a, file=sys.stderr, flush=True)


# --- jupyter_client baseline ------------------------------------------------

class DirectKernel:
    """A kernel (ipykernel unless kernel_name names another kernelspec)
    started by KernelManager, driven by BlockingKernelClient."""

    def __init__(self, tmpdir, tag, transport, kernel_name="python3"):
        from jupyter_client.manager import KernelManager
        conn = os.path.join(tmpdir, "jc-%s.json" % tag)
        kw = {"kernel_name": kernel_name, "connection_file": conn, "transport": transport}
        if transport == "ipc":
            kw["ip"] = os.path.join(tmpdir, "jc-%s-ipc" % tag)
        self.km = KernelManager(**kw)
        self.kc = None

    def start(self):
        self.km.start_kernel()
        self.kc = self.km.client()
        self.kc.allow_stdin = False
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def execute(self, code):
        """Execute and wait for the shell reply AND iopub idle, as the daemon
        does; return the text/plain value of the last expression, if any."""
        reply, value = self.wait(self.kc.execute(code, allow_stdin=False))
        if reply["content"]["status"] != "ok":
            raise RuntimeError("jupyter_client execute %r: %r" % (code, reply["content"]))
        return value

    def wait(self, msg_id):
        """Wait for the execute_reply and the iopub idle of msg_id; return
        (reply, text/plain value or None)."""
        return benchlib.wait_executed(self.kc, msg_id, 60)

    def cancel_to_idle(self, after_s):
        """Run time.sleep(60), interrupt it after after_s the way the
        kernelspec says (SIGINT), and return the seconds from the interrupt
        to the result of the next 1+1."""
        msg_id = self.kc.execute("import time; time.sleep(60)", allow_stdin=False)
        time.sleep(after_s)
        t0 = now()
        self.km.interrupt_kernel()
        reply, _ = self.wait(msg_id)
        # ipykernel aborts requests that reach it while it is still aborting
        # its queue after an error: the next call may come back "aborted";
        # then it is sent again (and counted), as a client must.
        aborted = 0
        while True:
            r, value = self.wait(self.kc.execute("1+1", allow_stdin=False))
            if r["content"]["status"] != "aborted" or aborted >= 5:
                break
            aborted += 1
        t = now() - t0
        if value != "2":
            raise RuntimeError("jupyter_client: 1+1 after an interrupt gave %r" % r["content"])
        if reply["content"].get("ename") != "KeyboardInterrupt":
            raise RuntimeError("jupyter_client: the interrupt gave %r" % reply["content"])
        return t, aborted

    def stop(self):
        try:
            if self.kc is not None:
                self.kc.stop_channels()
        finally:
            if self.km.has_kernel:
                self.km.shutdown_kernel(now=True)
            self.km.cleanup_resources()


# --- the daemon ---------------------------------------------------------------

class Daemon:
    def __init__(self, host, port, warm):
        self.host, self.port, self.warm = host, port, warm

    def client(self, session_id=None):
        return mcpclient.Client(self.host, self.port, session_id)

    def wait_pool_full(self, timeout=120, settle=0.3):
        """Wait until /health shows every warm kernel idle; return seconds waited."""
        t0 = now()
        while True:
            st, body = mcpclient.health(self.host, self.port)
            if st == 200 and body and body.get("idle_kernels", 0) >= self.warm:
                break
            if now() - t0 > timeout:
                raise RuntimeError("pool not refilled after %d s: /health %s %r"
                                   % (timeout, st, body))
            time.sleep(0.02)
        waited = now() - t0
        time.sleep(settle)  # let the new kernel's start-up work finish
        return waited


def value_of(result):
    for o in result.get("structuredContent", {}).get("rich_outputs", []):
        if o.get("mime_type") == "text/plain":
            return o.get("data")
    return None


# --- 1. warm round trip ---------------------------------------------------------

def bench_roundtrip(d, cx, jc, n, warmup):
    """tools/call `1+1` on a warm session vs jupyter_client execute, interleaved."""
    for _ in range(warmup):
        cx.execute("1+1")
        jc.execute("1+1")
    if value_of(cx.execute("1+1")) != "2" or jc.execute("1+1") != "2":
        raise RuntimeError("1+1 did not give 2")
    a, b = [], []
    connects = cx.connects
    for i in range(n):
        # Alternate who goes first, so neither always follows the other.
        if i % 2 == 0:
            t0 = now(); cx.execute("1+1"); t1 = now(); jc.execute("1+1"); t2 = now()
            a.append(ms(t1 - t0)); b.append(ms(t2 - t1))
        else:
            t0 = now(); jc.execute("1+1"); t1 = now(); cx.execute("1+1"); t2 = now()
            b.append(ms(t1 - t0)); a.append(ms(t2 - t1))
    # The floor under a tools/call: HTTP + JSON-RPC + session lookup, no kernel.
    p = []
    for i in range(n // 3):
        t0 = now(); cx.request("ping"); p.append(ms(now() - t0))
    return {"codeexecd_ms": a, "jupyter_client_ms": b, "ping_ms": p,
            "reconnects": cx.connects - connects}


# --- 3. progress-streamed vs plain ----------------------------------------------

PRINT5 = "import time\nfor i in range(5):\n    print('line', i, flush=True)\n    time.sleep(%g)\n"


def bench_progress(d, sid, code, n, warmup):
    """The same code as a plain call (keep-alive connection) and as a
    progress-streamed call (progressToken + SSE, on its own connection,
    which the daemon closes after each stream), interleaved."""
    plain = d.client(sid)
    sse = d.client(sid)
    events = []

    def streamed(i):
        got = []
        res = sse.execute(code, progress_token="bench-%d" % i,
                          on_event=got.append)
        events.append(sum(1 for e in got if e.get("method") == "notifications/progress"))
        return res

    for i in range(warmup):
        plain.execute(code)
        streamed(-1 - i)
    events.clear()
    a, a_end, b = [], [], []
    c_plain, c_sse = plain.connects, sse.connects
    for i in range(n):
        # The streamed call is timed to its result event (what an MCP client
        # waits for) and to the end of the stream (what frees the connection).
        if i % 2 == 0:
            t0 = now(); streamed(i); t1 = now(); plain.execute(code); t2 = now()
            a.append(ms(sse.t_response - t0)); a_end.append(ms(t1 - t0)); b.append(ms(t2 - t1))
        else:
            t0 = now(); plain.execute(code); t1 = now(); streamed(i); t2 = now()
            b.append(ms(t1 - t0)); a.append(ms(sse.t_response - t1)); a_end.append(ms(t2 - t1))
    out = {"sse_result_ms": a, "sse_end_ms": a_end, "plain_ms": b, "progress_events": events,
           "sse_connects": sse.connects - c_sse, "plain_connects": plain.connects - c_plain}
    plain.close()
    sse.close()
    return out


# --- 5. a 10 MB print ----------------------------------------------------------------

BIG_PRINT = "print('x' * %d)"


def bench_big_print(d, sid, jc, n, size):
    """`print('x' * size)` as a plain call, as a progress-streamed call
    (progressToken + SSE) and through jupyter_client, interleaved, the
    order turning each round. Every answer must hold the whole stdout
    (run.sh raises output_truncation_threshold above it)."""
    plain = d.client(sid)
    sse = d.client(sid)
    code = BIG_PRINT % size
    want = size + 1  # and the newline

    def check(res, how):
        got = len((res.get("structuredContent") or {}).get("stdout", ""))
        if got != want:
            raise RuntimeError("%s 10 MB print gave %d characters of stdout, not %d"
                               % (how, got, want))

    def run_plain():
        check(plain.execute(code), "plain")

    def run_sse():
        check(sse.execute(code, progress_token="bench-big", on_event=lambda e: None),
              "streamed")

    def run_jc():
        jc.execute(code)

    sides = [("plain_ms", run_plain), ("sse_ms", run_sse), ("jupyter_client_ms", run_jc)]
    out = {k: [] for k, _ in sides}
    for _, fn in sides:  # one of each first: the first big answer sizes buffers
        fn()
    for i in range(n):
        for k, fn in sides[i % 3:] + sides[:i % 3]:
            t0 = now()
            fn()
            out[k].append(ms(now() - t0))
    plain.close()
    sse.close()
    return out


# --- 4. cancel to idle -------------------------------------------------------------

def bench_cancel(d, sid, jc, n, after_s):
    """tools/call `time.sleep(60)` on one connection; after `after_s`, POST
    notifications/cancelled on another and then `1+1`: the time from the
    cancel POST to the `1+1` result is the time the kernel took to be idle
    again (a session runs one execution at a time). Baseline, alternating:
    the same through jupyter_client, KernelManager.interrupt_kernel()."""
    runner = d.client(sid)
    ctl = d.client(sid)
    ctl.execute("1+1")
    to_idle, post, to_answer, statuses, direct = [], [], [], [], []

    def daemon_cancel(rid):
        box = {}

        def run():
            try:
                st, _, obj = runner.post({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                          "params": {"name": "execute_py_code",
                                                     "arguments": {"code": "import time; time.sleep(60)"}}})
                box["status"], box["body"] = st, obj
            except Exception as e:  # noqa: BLE001 - reported below
                box["error"] = repr(e)
            box["t"] = now()

        th = threading.Thread(target=run, daemon=True)
        th.start()
        time.sleep(after_s)
        t0 = now()
        ctl.notify("notifications/cancelled", {"requestId": rid, "reason": "bench"})
        t1 = now()
        aborted = 0
        while True:  # see DirectKernel.cancel_to_idle on "aborted"
            res = ctl.execute("1+1", check=False)
            err = (res.get("structuredContent") or {}).get("error") or {}
            if err.get("type") != "Aborted" or aborted >= 5:
                break
            aborted += 1
        t2 = now()
        th.join(30)
        if th.is_alive():
            raise RuntimeError("the cancelled call had not returned 30 s after its cancel")
        if value_of(res) != "2":
            raise RuntimeError("1+1 after a cancel gave %r" % res)
        return (t2 - t0, t1 - t0, box["t"] - t0, box.get("status", box.get("error")),
                aborted)

    # One of each first: a kernel's first KeyboardInterrupt costs more.
    daemon_cancel("bench-sleep-warmup")
    jc.cancel_to_idle(after_s)
    aborts = {"codeexecd": 0, "jupyter_client": 0}
    for i in range(n):
        if i % 2:
            t, ab = jc.cancel_to_idle(after_s)
            direct.append(ms(t))
            aborts["jupyter_client"] += ab
        idle, p, ans, st, ab = daemon_cancel("bench-sleep-%d" % i)
        aborts["codeexecd"] += ab
        if i % 2 == 0:
            t, ab = jc.cancel_to_idle(after_s)
            direct.append(ms(t))
            aborts["jupyter_client"] += ab
        to_idle.append(ms(idle))
        post.append(ms(p))
        to_answer.append(ms(ans))
        statuses.append(st)
    runner.close()
    ctl.close()
    return {"cancel_to_idle_ms": to_idle, "jupyter_client_ms": direct,
            "cancel_post_ms": post, "cancel_to_answer_ms": to_answer,
            "cancelled_call_status": statuses, "next_call_aborted": aborts}


# --- 2. new session's first result ----------------------------------------------------

def bench_new_session(d, tmpdir, transport, n, cold_every):
    """initialize (+ notifications/initialized) + tools/call `1+1` on a new
    connection and session, with the warm pool full; every `cold_every`-th
    round, a kernel's cold start through jupyter_client as baseline."""
    first, init, call, delete, refill = [], [], [], [], []
    cold, cold_first = [], []
    for i in range(n):
        refill.append(ms(d.wait_pool_full()))
        c = d.client()
        t0 = now()
        c.initialize()
        t1 = now()
        res = c.execute("1+1")
        t2 = now()
        if value_of(res) != "2":
            raise RuntimeError("1+1 on a new session gave %r" % res)
        c.delete()
        t3 = now()
        c.close()
        first.append(ms(t2 - t0)); init.append(ms(t1 - t0)); call.append(ms(t2 - t1))
        delete.append(ms(t3 - t2))
        if cold_every and i % cold_every == cold_every - 1:
            d.wait_pool_full()
            k = DirectKernel(tmpdir, "cold%d" % i, transport)
            try:
                t0 = now()
                k.start()
                t1 = now()
                if k.execute("1+1") != "2":
                    raise RuntimeError("cold kernel: 1+1 did not give 2")
                t2 = now()
                cold.append(ms(t2 - t0))
                cold_first.append(ms(t2 - t1))
            finally:
                k.stop()
    return {"first_result_ms": first, "initialize_ms": init, "first_call_ms": call,
            "delete_ms": delete, "pool_refill_wait_ms": refill[1:],
            "cold_kernel_ms": cold, "cold_first_execute_ms": cold_first}


# --- machine facts ----------------------------------------------------------------------

def facts(args):
    import ipykernel
    import jupyter_client
    import zmq
    cpu = benchlib.cpu_model()
    try:
        version = subprocess.run([args.codeexecd, "-V"], capture_output=True, text=True,
                                 timeout=10).stdout.strip()
    except OSError:
        version = "?"
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": cpu,
        "loadavg_start": args.loadavg_start or " ".join(
            "%.2f" % x for x in os.getloadavg()),
        "kernel": platform.release(),
        "python": "%s (%s)" % (platform.python_version(), sys.executable),
        "ipykernel": ipykernel.__version__,
        "jupyter_client": jupyter_client.__version__,
        "pyzmq": zmq.__version__,
        "libzmq": zmq.zmq_version(),
        "codeexecd": version,
        "commit": args.commit,
        "transport_baseline": args.transport,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--warm", type=int, default=2, help="the daemon's pool.warm")
    ap.add_argument("--tmpdir", required=True)
    ap.add_argument("--out", required=True, help="JSON file for the results")
    ap.add_argument("--codeexecd", default="codeexecd")
    ap.add_argument("--commit", default="")
    ap.add_argument("--loadavg-start", default="")
    ap.add_argument("--transport", choices=("ipc", "tcp"), default="ipc",
                    help="ZeroMQ transport of the jupyter_client kernels (the daemon uses ipc)")
    ap.add_argument("-n", "--roundtrips", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--cold-every", type=int, default=4)
    ap.add_argument("--progress-n", type=int, default=60, help="rounds of 1+1, plain and SSE")
    ap.add_argument("--print-n", type=int, default=12, help="rounds of the 5-line print")
    ap.add_argument("--print-sleep", type=float, default=0.1)
    ap.add_argument("--cancels", type=int, default=10)
    ap.add_argument("--cancel-after", type=float, default=0.5)
    ap.add_argument("--big-n", type=int, default=10, help="rounds of the 10 MB print")
    ap.add_argument("--big-bytes", type=int, default=10_000_000)
    ap.add_argument("--only", default="12345", help="which measurements to run (digits)")
    args = ap.parse_args()

    d = Daemon(args.host, args.port, args.warm)
    out = {"facts": facts(args), "params": {
        "roundtrips": args.roundtrips, "warmup": args.warmup, "sessions": args.sessions,
        "cold_every": args.cold_every, "progress_n": args.progress_n,
        "print_n": args.print_n, "print_sleep": args.print_sleep,
        "cancels": args.cancels, "cancel_after": args.cancel_after,
        "big_n": args.big_n, "big_bytes": args.big_bytes}}
    t_start = now()
    jc = DirectKernel(args.tmpdir, "warm", args.transport)
    cx = d.client()
    try:
        jc.start()
        cx.initialize()
        cx.execute("x = 1")
        d.wait_pool_full()
        if "1" in args.only:
            log("1: %d round trips of 1+1, codeexecd and jupyter_client interleaved"
                % args.roundtrips)
            out["roundtrip"] = bench_roundtrip(d, cx, jc, args.roundtrips, args.warmup)
        if "3" in args.only:
            log("3: progress-streamed vs plain calls")
            out["progress_1p1"] = bench_progress(d, cx.session_id, "1+1", args.progress_n, 5)
            out["progress_print"] = bench_progress(d, cx.session_id,
                                                   PRINT5 % args.print_sleep, args.print_n, 1)
        if "4" in args.only:
            log("4: %d cancels of time.sleep(60)" % args.cancels)
            out["cancel"] = bench_cancel(d, cx.session_id, jc, args.cancels, args.cancel_after)
        if "5" in args.only:
            log("5: %d rounds of a %d-byte print, plain, streamed and jupyter_client"
                % (args.big_n, args.big_bytes))
            out["big_print"] = bench_big_print(d, cx.session_id, jc, args.big_n,
                                               args.big_bytes)
        jc.stop()
        jc = None
        cx.delete()
        cx.close()
        if "2" in args.only:
            log("2: %d new sessions (cold kernel baseline every %d)"
                % (args.sessions, args.cold_every))
            out["new_session"] = bench_new_session(d, args.tmpdir, args.transport,
                                                   args.sessions, args.cold_every)
    finally:
        if jc is not None:
            jc.stop()
    out["facts"]["loadavg_end"] = " ".join("%.2f" % x for x in os.getloadavg())
    out["facts"]["duration_s"] = round(now() - t_start, 1)

    summ = {}
    for key, val in out.items():
        if key in ("facts", "params"):
            continue
        summ[key] = {k: summary(v) for k, v in val.items()
                     if k.endswith("_ms") or k == "progress_events"}
    out["summary"] = summ
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    log("done in %.0f s" % out["facts"]["duration_s"])


if __name__ == "__main__":
    main()
