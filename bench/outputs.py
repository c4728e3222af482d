"""outputs.py - rich outputs inline and by reference (issue 34, item 3).

Run by `bench/run.sh -o`. One daemon, three settings in turn, each put in
place by rewriting the configuration and sending SIGHUP (both keys apply
live): the defaults (inline_output_max_bytes 1 MiB, structured_binary
inline: seed 003's shape, the baseline), structured_binary: reference, and
inline_output_max_bytes 1024 (every plot by reference). Under each, in one
session, a call that draws 1, 5 and 20 matplotlib plots (about 33 kB of
PNG each, 44 kB in base64) is timed and weighed: the answer's bytes on the
wire (a plain JSON answer), the bytes of its structuredContent (what a client that shows
structured content to its model passes on), the call's latency, and what
a client that then reads every resource_link with resources/read pays on
top. Medians of --rounds calls; ratios against the defaults' row of the
same plot count. Prints a Markdown table.
"""
import argparse
import json
import os
import signal
import time

from benchlib import cpu_model
from mcpclient import JSON, Client, McpError

SETTINGS = [
    ("defaults (inline)", ""),
    ("structured_binary: reference", "structured_binary: reference\n"),
    ("inline_output_max_bytes: 1024", "inline_output_max_bytes: 1024\n"),
]
PLOTS = (1, 5, 20)

CODE = """import matplotlib.pyplot as plt, numpy as np
rng = np.random.default_rng(34)
for i in range(%d):
    plt.figure()
    plt.plot(rng.standard_normal(200).cumsum())
    plt.title('plot %%d' %% i)
    plt.show()
"""


def post_raw(c, method, params):
    """POST one request for a plain JSON answer: (result, bytes, seconds)."""
    msg = {"jsonrpc": "2.0", "id": c.next_id, "method": method, "params": params}
    c.next_id += 1
    body = json.dumps(msg, separators=(",", ":")).encode()
    t0 = time.perf_counter()
    r = c._send("POST", body, c._headers(JSON))
    raw = r.read()
    took = time.perf_counter() - t0
    c._done(r)
    obj = json.loads(raw)
    if r.status != 200 or "result" not in obj:
        raise McpError("%s: HTTP %d: %r" % (method, r.status, raw[:300]))
    return obj["result"], len(raw), took


def reload(config, base, extra, pid, log):
    """Write the configuration with `extra` and SIGHUP the daemon; wait for its reload."""
    with open(log) as f:
        before = f.read().count(" reloaded")
    with open(config, "w") as f:
        f.write(base + extra)
    os.kill(pid, signal.SIGHUP)
    deadline = time.time() + 30
    while time.time() < deadline:
        with open(log) as f:
            if f.read().count(" reloaded") > before:
                return
        time.sleep(0.05)
    raise RuntimeError("no reload logged after SIGHUP")


def measure(c, n, rounds):
    """Medians over `rounds` calls drawing n plots."""
    code = CODE % n
    post_raw(c, "tools/call", {"name": "execute_py_code", "arguments": {"code": code}})
    wire, sc_bytes, lat, read_bytes, read_s = [], [], [], [], []
    for _ in range(rounds):
        res, nbytes, took = post_raw(c, "tools/call",
                                     {"name": "execute_py_code", "arguments": {"code": code}})
        if res.get("isError"):
            raise McpError("the plots failed: %r" % res)
        wire.append(nbytes)
        sc_bytes.append(len(json.dumps(res["structuredContent"], separators=(",", ":"))))
        lat.append(took)
        links = [x["uri"] for x in res["content"] if x.get("type") == "resource_link"]
        links += [o["uri"] for o in res["structuredContent"]["rich_outputs"]
                  if "uri" in o and o["uri"] not in links]
        rb, rs = 0, 0.0
        for uri in links:
            _, b, t = post_raw(c, "resources/read", {"uri": uri})
            rb, rs = rb + b, rs + t
        read_bytes.append(rb)
        read_s.append(rs)
        # Each call's plots under outputs/rich/ would pile up: not what is measured.
        post_raw(c, "tools/call", {"name": "execute_py_code", "arguments": {
            "code": "import shutil; shutil.rmtree('outputs/rich', ignore_errors=True)"}})
    med = lambda v: sorted(v)[len(v) // 2]
    return med(wire), med(sc_bytes), med(lat), med(read_bytes), med(read_s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--daemon-pid", type=int, required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    a, _ = ap.parse_known_args()
    with open(a.config) as f:
        base = f.read()
    rows = {}
    try:
        for label, extra in SETTINGS:
            reload(a.config, base, extra, a.daemon_pid, a.log)
            c = Client("127.0.0.1", a.port)
            c.initialize()
            for n in PLOTS:
                rows[(label, n)] = measure(c, n, a.rounds)
            c.delete()
    finally:
        with open(a.config, "w") as f:
            f.write(base)
    print("CPU: %s; %d rounds, medians; ratios against the defaults' row of the same "
          "plot count\n" % (cpu_model() or "unknown", a.rounds))
    print("| setting | plots | answer bytes | structuredContent bytes | latency | "
          "+ resources/read of every link (bytes, time) |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, _ in SETTINGS:
        for n in PLOTS:
            w, s, t, rb, rs = rows[(label, n)]
            bw, bs, bt = rows[(SETTINGS[0][0], n)][:3]
            extra = "%d B, %.1f ms" % (rb, rs * 1000) if rb else "-"
            print("| %s | %d | %d (%.2f) | %d (%.2f) | %.1f ms (%.2f) | %s |"
                  % (label, n, w, w / bw, s, s / bs, t * 1000, t / bt, extra), flush=True)


if __name__ == "__main__":
    main()
