#!/bin/sh
# 403-progress: live progress. A tools/call with
# _meta.progressToken from a client that accepts text/event-stream is
# answered as an SSE stream: notifications/progress carrying the new
# output arrive while the code runs (not bundled at the end), at least
# every progress_interval_s even when the code prints nothing, then the
# result. Without a token, or without text/event-stream in Accept, the
# answer is plain JSON. GET /mcp opens the session's server-to-client stream.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_EXTRA='progress_interval_s: 1'
write_config
start_daemon
wait_ready

run_py "$URL" <<'EOF2'
import http.client, sys, time, urllib.parse
from mcp import Client, check, ok, text_of, value_of
from calls import Stream, call_msg, sc

a = Client(sys.argv[1])
a.initialize()
a.execute("warm = 1")

code = "import time\nfor i in range(5):\n    print('line', i, flush=True)\n    time.sleep(0.8)\n'done'"
st = Stream(a, call_msg(a, "execute_py_code", {"code": code}, 7, token="tok-403")).run()
check(st.error is None and st.status == 200, "SSE call: HTTP 200", st.evidence())
check(st.content_type.startswith("text/event-stream"), "the answer is text/event-stream",
      st.evidence())
prog, resp = st.progress(), st.responses()
check(len(resp) == 1 and resp[0][1].get("id") == 7, "exactly one response, with the request's id",
      st.evidence())
check(st.events[-1] == resp[0], "the response is the last event", st.evidence())
check(len(prog) >= 3, "several progress notifications (%d)" % len(prog), st.evidence())
t_resp = resp[0][0]
check(prog[0][0] < t_resp - 1.5,
      "the first progress arrived while the code ran (%.2f s, result at %.2f s)"
      % (prog[0][0], t_resp), st.evidence())
last = -1
for t, e in prog:
    p = e.get("params", {})
    check(e.get("jsonrpc") == "2.0" and "id" not in e, "progress is a notification", e)
    check(p.get("progressToken") == "tok-403", "progress carries the request's token", e)
    check(isinstance(p.get("progress"), (int, float)) and p["progress"] > last,
          "progress values increase", [x[1] for x in prog])
    last = p["progress"]
said = "".join(e["params"].get("message", "") for _, e in prog)
check(all("line %d\n" % i in said for i in range(4)),
      "the progress messages carry the output as it was printed", said)
early = "".join(e["params"].get("message", "") for t, e in prog if t < t_resp - 1.0)
check("line 0" in early, "output arrived in progress before the end", [(t, e["params"]) for t, e in prog])
r = resp[0][1]["result"]
check(r["structuredContent"]["success"] is True and value_of(r) == "'done'" and
      r["structuredContent"]["stdout"] == "".join("line %d\n" % i for i in range(5)),
      "the result holds the whole output and value", r)
ok("SSE: %d progress notifications (first at %.2f s), result at %.2f s"
   % (len(prog), prog[0][0], t_resp))

# stderr comes in progress too, marked as such.
st = Stream(a, call_msg(a, "execute_py_code", {"code": "import sys, time\n"
                        "print('to stderr', file=sys.stderr, flush=True)\ntime.sleep(1.5)"}, 11,
                        token="err")).run()
said = "".join(e["params"].get("message", "") for _, e in st.progress())
check(st.status == 200 and "to stderr" in said and "stderr" in said.replace("to stderr", ""),
      "stderr output arrives in progress, labelled stderr", st.evidence())
ok("stderr in progress: %r" % said)

# A silent call still gets progress at least every progress_interval_s (1).
st = Stream(a, call_msg(a, "execute_py_code", {"code": "import time; time.sleep(3.5)"}, 8,
                        token=8)).run()
prog, resp = st.progress(), st.responses()
check(st.status == 200 and len(resp) == 1, "silent SSE call answered", st.evidence())
check(len(prog) >= 2, "silent code: keep-alive progress (%d notifications)" % len(prog),
      st.evidence())
times = [0] + [t for t, _ in prog] + [resp[0][0]]
gap = max(b - a for a, b in zip(times, times[1:]))
check(gap < 2.0, "no gap over 2 s without a notification (largest %.2f s)" % gap, st.evidence())
check(all(e["params"].get("progressToken") == 8 for _, e in prog),
      "an integer progressToken comes back as an integer", st.evidence())
ok("silent call: %d keep-alive notifications, largest gap %.2f s" % (len(prog), gap))

# Without a token: plain JSON, even though text/event-stream is accepted.
st = Stream(a, call_msg(a, "execute_py_code", {"code": "print('plain'); 3"}, 9)).run()
check(st.status == 200 and st.content_type.startswith("application/json"),
      "no progressToken: application/json", st.evidence())
check(st.json and st.json.get("id") == 9 and st.json["result"]["structuredContent"]["stdout"] == "plain\n",
      "no progressToken: the JSON-RPC response", st.evidence())
# A token, but a client that does not accept SSE: plain JSON too.
st = Stream(a, call_msg(a, "execute_py_code", {"code": "import time; time.sleep(1.5); 4"}, 10,
                        token="t"), accept="application/json").run()
check(st.status == 200 and st.content_type.startswith("application/json") and
      st.json and st.json.get("id") == 10 and value_of(st.json["result"]) == "4",
      "token but Accept application/json only: plain JSON", st.evidence())
ok("without a token, or without SSE in Accept: plain JSON")

# GET /mcp: the session's server-to-client stream.
u = urllib.parse.urlsplit(a.url)
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=5)
conn.request("GET", u.path, headers={"Accept": "text/event-stream",
                                     "Mcp-Session-Id": a.session_id,
                                     "MCP-Protocol-Version": "2025-11-25"})
g = conn.getresponse()
check(g.status == 200 and g.getheader("Content-Type", "").startswith("text/event-stream"),
      "GET /mcp opens an event stream (HTTP %d, %s)" % (g.status, g.getheader("Content-Type")))
conn.close()
r = a.execute("warm")
check(value_of(r) == "1", "the session works after its GET stream closed", r)
ok("GET /mcp: 200 text/event-stream")
EOF2
