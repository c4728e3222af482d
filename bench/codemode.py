"""codemode.py - code mode (issue 35) against one MCP tool call per step.

Run by `bench/run.sh -C` (which starts bench/upstream_records.mjs, an SDK
McpServer, and a daemon with it as upstream `shop`). One task, done both
ways by a scripted agent in one run: read 20 pages of the upstream's
order book (list_orders, 50 orders a page), keep the refunded orders over
500 and summarise them per region (count and total), keeping the summary.

1. per-tool-call: the agent is the upstream's MCP client, as an agent
   with the server in its own client is: initialize, tools/list, then 20
   tools/call, each result (its text and structuredContent) read by the
   agent, which filters and sums.
2. code mode: the agent talks to codeexecd only: initialize, tools/list,
   one search_py_tools (how it learns the function's signature), and one
   execute_py_code whose code makes the 20 calls through
   codeexec_upstreams, filters, keeps the summary in a variable and
   prints only the summary.

Counted: the bytes of every MCP message to and from the agent (request
and response bodies, plain JSON answers; HTTP headers not counted), the
requests the agent made, and wall time from the agent's first request to
the summary in its hands. A model would think once per tools/call of way
1 and once for the execute of way 2: that time is not here. --rounds runs
the two ways alternately and reports medians. Both summaries must agree.
Results and what they show: bench/README.md, "Issue 35".
"""
import argparse
import http.client
import json
import statistics
import time

from benchlib import cpu_model

PAGES = 20
PROTOCOL = "2025-11-25"
CODE = """import json
from codeexec_upstreams import shop
summary = {}
for page in range(1, %d):
    for o in shop.list_orders(page=page)["orders"]:
        if o["status"] == "refunded" and o["amount"] > 500:
            s = summary.setdefault(o["region"], [0, 0.0])
            s[0] += 1
            s[1] = round(s[1] + o["amount"], 2)
print(json.dumps(summary, sort_keys=True))
""" % (PAGES + 1)


class Agent:
    """One MCP session over one HTTP connection, counting body bytes."""

    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.session = None
        self.sent = self.received = self.requests = 0
        self.next_id = 1

    def _post(self, msg):
        body = json.dumps(msg, separators=(",", ":")).encode()
        h = {"Content-Type": "application/json",
             "Accept": "application/json, text/event-stream",
             "MCP-Protocol-Version": PROTOCOL}
        if self.session:
            h["Mcp-Session-Id"] = self.session
        self.conn.request("POST", "/mcp", body, h)
        r = self.conn.getresponse()
        raw = r.read()
        self.sent += len(body)
        self.received += len(raw)
        self.requests += 1
        if r.getheader("Mcp-Session-Id"):
            self.session = r.getheader("Mcp-Session-Id")
        if r.status >= 300:
            raise RuntimeError("HTTP %d: %s" % (r.status, raw[:300]))
        if r.getheader("Content-Type", "").startswith("text/event-stream"):
            # The last data: line is the response.
            data = [l[5:].strip() for l in raw.decode().splitlines() if l.startswith("data:")]
            raw = data[-1].encode()
        return json.loads(raw) if raw else None

    def call(self, method, params=None):
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.next_id += 1
        reply = self._post(msg)
        if "error" in reply:
            raise RuntimeError("%s: %s" % (method, reply["error"]))
        return reply["result"]

    def start(self):
        self.call("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                 "clientInfo": {"name": "bench-codemode", "version": "1"}})
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self.call("tools/list")["tools"]

    def close(self):
        self.conn.close()

    def delete(self):
        """End the session (its kernel goes back): no body, not counted."""
        self.conn.request("DELETE", "/mcp", None, {"Mcp-Session-Id": self.session,
                                                   "MCP-Protocol-Version": PROTOCOL})
        self.conn.getresponse().read()
        self.close()


def per_tool_call(up_port):
    t0 = time.perf_counter()
    a = Agent(up_port)
    tools = a.start()
    assert any(t["name"] == "list_orders" for t in tools), tools
    setup = a.sent + a.received
    summary = {}
    for page in range(1, PAGES + 1):
        r = a.call("tools/call", {"name": "list_orders", "arguments": {"page": page}})
        # What the agent reads is the result; it filters it itself.
        for o in json.loads(r["content"][0]["text"])["orders"]:
            if o["status"] == "refunded" and o["amount"] > 500:
                s = summary.setdefault(o["region"], [0, 0.0])
                s[0] += 1
                s[1] = round(s[1] + o["amount"], 2)
    took = time.perf_counter() - t0
    a.close()
    return {"bytes": a.sent + a.received, "sent": a.sent, "received": a.received,
            "setup": setup, "requests": a.requests, "seconds": took,
            "summary": json.dumps(summary, sort_keys=True)}


def code_mode(port):
    t0 = time.perf_counter()
    a = Agent(port)
    a.start()
    setup = a.sent + a.received
    r = a.call("tools/call", {"name": "search_py_tools",
                              "arguments": {"query": "orders of the order book", "top": 3}})
    hit = r["structuredContent"]["results"][0]
    assert hit.get("kind") == "upstream" and hit["name"] == "list_orders", hit
    search = a.sent + a.received - setup
    t1 = time.perf_counter()
    r = a.call("tools/call", {"name": "execute_py_code", "arguments": {"code": CODE}})
    exec_s = time.perf_counter() - t1
    sc = r.get("structuredContent") or {}
    if not sc.get("success"):
        raise RuntimeError("the code mode execution failed: %s" % json.dumps(r)[:2000])
    took = time.perf_counter() - t0
    a.delete()
    return {"bytes": a.sent + a.received, "sent": a.sent, "received": a.received,
            "setup": setup, "search": search, "requests": a.requests, "seconds": took, "exec": exec_s,
            "summary": sc["stdout"].strip()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--upstream-port", type=int, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    a, _ = ap.parse_known_args()
    runs = {"per-tool-call": [], "code mode": []}
    for i in range(a.rounds):
        ways = [("per-tool-call", lambda: per_tool_call(a.upstream_port)),
                ("code mode", lambda: code_mode(a.port))]
        for name, fn in ways if i % 2 == 0 else ways[::-1]:
            runs[name].append(fn())
    summaries = {r["summary"] for v in runs.values() for r in v}
    if len(summaries) != 1:
        raise SystemExit("the two ways disagree: %s" % summaries)
    base = runs["per-tool-call"]

    def med(v, k):
        return statistics.median(r[k] for r in v)
    print("CPU: %s; %d rounds, the ways alternating, medians; %d pages of 50 orders; "
          "summary %s\n" % (cpu_model() or "unknown", a.rounds, PAGES, summaries.pop()))
    print("| way | agent requests | bytes to the agent | bytes from the agent | total bytes "
          "(ratio) | of which setup (initialize, tools/list) | wall time (ratio) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, v in runs.items():
        print("| %s | %d | %d | %d | %d (%.3f) | %d | %.1f ms (%.2f) |" % (
            name, med(v, "requests"), med(v, "received"), med(v, "sent"), med(v, "bytes"),
            med(v, "bytes") / med(base, "bytes"), med(v, "setup"), med(v, "seconds") * 1000,
            med(v, "seconds") / med(base, "seconds")))
    cm = runs["code mode"]
    print("\nCode mode's search_py_tools call: %d bytes; without tools/list and initialize "
          "the ways take %d and %d bytes. The execute_py_code call alone: %.1f ms "
          "(%.1f ms an upstream call)." % (
              med(cm, "search"), med(base, "bytes") - med(base, "setup"),
              med(cm, "bytes") - med(cm, "setup"), med(cm, "exec") * 1000,
              med(cm, "exec") * 1000 / PAGES))


if __name__ == "__main__":
    main()
