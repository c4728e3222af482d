#!/bin/sh
# 417-metrics: observability. /metrics speaks the Prometheus text
# format (promtool accepts it) and its counters move by exactly what a few
# calls did: one that succeeds, one whose stdout spills to a file, one that
# raises, one whose kernel dies, one that times out, one the client cancels,
# one of an unknown tool. Each execute result carries structuredContent.timings
# {queued_ms, kernel_ms, total_ms}, sane and consistent, and the request's
# log line says them. /metrics refuses a foreign Origin or Host like /mcp;
# with metrics_listen it is served there, and only there.
. "$(dirname "$0")/lib.sh"

require_cmd curl
# CI installs it (.ci/run's test_packages): this skip is for other machines.
require_cmd promtool
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
# Past 100 characters, stdout goes whole to a spill file.
CFG_EXTRA='output_truncation_threshold: 100'
write_config
start_daemon
wait_ready

# metrics FILE [curl args]: GET /metrics into FILE; prints the HTTP status.
metrics() {
	f=$1
	shift
	curl -s -o "$f" -D "$TMPD/headers" -w '%{http_code}' --max-time 10 "$@" "$BASE/metrics" ||
		echo "curl-error-$?"
}

# promtool_ok FILE: the text passes `promtool check metrics` (format and lint).
promtool_ok() {
	promtool check metrics <"$1" >"$TMPD/promtool.out" 2>&1 ||
		{ cat "$TMPD/promtool.out" >&2; fail "promtool check metrics refused $1"; }
	ok "promtool check metrics accepts $(basename "$1")"
}

st=$(metrics "$TMPD/before.txt")
expect_status 200 "$st" "GET /metrics"
case $(header Content-Type) in
text/plain*version=0.0.4*) ok "Content-Type is the text format 0.0.4" ;;
*) fail "Content-Type $(header Content-Type), want text/plain; version=0.0.4" ;;
esac
promtool_ok "$TMPD/before.txt"

run_py "$URL" "$TMPD/timings.json" <<'EOF'
import json, sys
from mcp import Client, check, ok

a = Client(sys.argv[1])
a.initialize()
tools = {t["name"]: t for t in a.result("tools/list")["tools"]}
props = tools["execute_py_code"]["outputSchema"]["properties"]
check(set(props.get("timings", {}).get("required", [])) == {"queued_ms", "kernel_ms", "total_ms"},
      "the outputSchema describes timings", props.get("timings"))
seen = {}
for what, code, timeout, want in [
        ("ok", "print('m' * 10)", None, None),
        ("spill", "print('s' * 500)", None, None),
        ("error", "1/0", None, "ZeroDivisionError"),
        ("crash", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", None, "KernelDied"),
        ("timeout", "import time\ntime.sleep(30)", 1, "TimeoutError")]:
    r = a.execute(code, timeout=timeout)
    s = r["structuredContent"]
    check((s.get("error") or {}).get("type") == want, "%s: error type %s" % (what, want), r)
    check("spill_files" not in s, "%s: the worker's spill_files stays the daemon's" % what, s)
    t = s.get("timings")
    check(isinstance(t, dict) and set(t) == {"queued_ms", "kernel_ms", "total_ms"},
          "%s: timings has queued_ms, kernel_ms, total_ms" % what, r)
    check(all(isinstance(v, (int, float)) and v >= 0 for v in t.values()),
          "%s: timings are non-negative numbers" % what, t)
    check(t["total_ms"] >= t["kernel_ms"] and t["total_ms"] >= t["queued_ms"],
          "%s: total_ms is at least kernel_ms and queued_ms" % what, t)
    check(t["kernel_ms"] > 0, "%s: the kernel took some time" % what, t)
    seen[what] = t
    ok("%s: timings %s" % (what, t))
check(seen["timeout"]["kernel_ms"] >= 900,
      "the timed-out call spent its timeout (1 s) in the kernel", seen["timeout"])
# One more, cancelled by the client while it runs: no answer, but counted.
from calls import Stream, call_msg, notify, wait_busy
st = Stream(a, call_msg(a, "execute_py_code", {"code": "import time\ntime.sleep(30)"}, 77)).start()
wait_busy(a)
notify(a, "notifications/cancelled", {"requestId": 77, "reason": "417-metrics"})
check(st.wait(20), "the cancelled call's exchange ends", st.evidence())
r = a.request("tools/call", {"name": "no_such_tool", "arguments": {}})
check("error" in r.json, "an unknown tool is a JSON-RPC error", r.json)
json.dump(seen, open(sys.argv[2], "w"))
EOF

st=$(metrics "$TMPD/after.txt")
expect_status 200 "$st" "GET /metrics after the calls"
promtool_ok "$TMPD/after.txt"

# What moved, and by how much: each sample of before.txt against after.txt.
"$PY" - "$TMPD/before.txt" "$TMPD/after.txt" <<'EOF' || fail "the counters did not move as the calls did"
import re, sys

def parse(path):
    d = {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        name, value = line.rsplit(" ", 1)
        d[name] = float(value)
    return d

before, after = parse(sys.argv[1]), parse(sys.argv[2])
bad = []

def delta(name):
    return after.get(name, 0) - before.get(name, 0)

def want(name, cond, what):
    if not cond(delta(name)):
        bad.append("%s moved by %g, want %s (before %s, after %s)"
                   % (name, delta(name), what, before.get(name), after.get(name)))

t = 'codeexecd_calls_total{tool="execute_py_code",outcome="%s"}'
want(t % "ok", lambda d: d == 2, "2")
want(t % "error", lambda d: d == 2, "2 (the raise and the crash)")
want(t % "timeout", lambda d: d == 1, "1")
want(t % "cancelled", lambda d: d == 1, "1")
want('codeexecd_calls_total{tool="unknown",outcome="rejected"}', lambda d: d == 1, "1")
want("codeexecd_timeouts_total", lambda d: d == 1, "1")
want("codeexecd_cancels_total", lambda d: d == 1, "1")
for h in ("call_queued_seconds", "call_kernel_seconds", "call_seconds"):
    want("codeexecd_%s_count" % h, lambda d: d == 6, "6")
    want('codeexecd_%s_bucket{le="+Inf"}' % h, lambda d: d == 6, "6")
want("codeexecd_call_kernel_seconds_sum", lambda d: d >= 0.9, ">= 0.9 (the timeout)")
want("codeexecd_call_seconds_sum", lambda d: d >= 0.9, ">= 0.9")
want('codeexecd_call_seconds_bucket{le="0.5"}', lambda d: d <= 5, "<= 5 (the timeout is slower)")
want('codeexecd_kernel_deaths_total{cause="crash"}', lambda d: d == 1, "1 (the SIGKILL)")
want('codeexecd_kernel_deaths_total{cause="oom"}', lambda d: d == 0, "0")
want("codeexecd_oom_kills_total", lambda d: d == 0, "0")
want("codeexecd_kernel_restarts_total", lambda d: d == 1, "1 (after the crash)")
want("codeexecd_kernel_starts_total", lambda d: d >= 1, ">= 1 (the restart, and maybe a pool refill)")
want('codeexecd_output_bytes_total{stream="stdout"}', lambda d: d >= 110, ">= 110 (10, and 100 kept)")
want("codeexecd_spill_files_total", lambda d: d == 1, "1 (the 500 characters)")
# initialize, 6 tools/call and this daemon's /health and /metrics: all 200.
want('codeexecd_http_responses_total{code="200"}', lambda d: d >= 5, ">= 5")
if after.get("codeexecd_kernel_starts_total", 0) < 1:
    bad.append("codeexecd_kernel_starts_total is %s, want >= 1"
               % after.get("codeexecd_kernel_starts_total"))
if after.get('codeexecd_sessions{state="idle"}') != 1 or after.get('codeexecd_sessions{state="busy"}') != 0:
    bad.append("sessions: want 1 idle and 0 busy")
if after.get("codeexecd_pool_queue_length") != 0:
    bad.append("codeexecd_pool_queue_length: want 0 with nobody waiting for a kernel, got %s"
               % after.get("codeexecd_pool_queue_length"))
if after.get("codeexecd_pool_max_sessions") != 10 or after.get("codeexecd_pool_warm") != 1:
    bad.append("pool_max_sessions 10 and pool_warm 1 (the config's), got %s and %s"
               % (after.get("codeexecd_pool_max_sessions"), after.get("codeexecd_pool_warm")))
for name in ('codeexecd_pool_kernels{state="idle"}', 'codeexecd_pool_kernels{state="starting"}',
             'codeexecd_kernel_deaths_total{cause="crash"}', "codeexecd_oom_kills_total",
             'codeexecd_worker_deaths_total{cause="killed"}'):
    if name not in after:
        bad.append("%s is missing" % name)
for b in bad:
    print("FAIL:", b, file=sys.stderr)
if not bad:
    print("ok - counters moved by what the calls did")
sys.exit(1 if bad else 0)
EOF

# The info line of each call says its timings, as its result does.
grep -E 'POST tools/call execute_py_code session [0-9a-f]{8}: 200 ok in [0-9.]+ ms \(queued [0-9.]+, kernel [0-9.]+ ms\)' \
	"$LOG" >/dev/null || fail "no log line 'POST tools/call ... 200 ok in N ms (queued N, kernel N ms)'"
ok "the request's log line says its queued and kernel times"

# A foreign Host (DNS rebinding) or Origin gets 403 at /metrics, as at /mcp;
# loopback ones are served.
for h in "Host: evil.com:$PORT" "Host: 127.0.0.1.evil.com:$PORT" "Origin: http://evil.com"; do
	st=$(metrics "$TMPD/refused.txt" -H "$h")
	expect_status 403 "$st" "GET /metrics with $h"
	! grep -q codeexecd_ "$TMPD/refused.txt" || fail "$h: the 403 carried metrics"
	st=$(mcp_post '{"jsonrpc":"2.0","id":1,"method":"ping"}' -H "$h")
	expect_status 403 "$st" "POST /mcp with $h (the same rule)"
done
for h in "Host: localhost:$PORT" "Host: [::1]:$PORT" "Origin: http://127.0.0.1:$PORT"; do
	st=$(metrics "$TMPD/allowed.txt" -H "$h")
	expect_status 200 "$st" "GET /metrics with $h"
done
st=$(metrics "$TMPD/post.txt" -X POST)
expect_status 405 "$st" "POST /metrics"
curl -s -o /dev/null --max-time 10 "$BASE/no-such-page" || true
st=$(metrics "$TMPD/codes.txt")
expect_status 200 "$st" "GET /metrics after the refusals"
for want in '403"} 6' '405"} 1' '404"} 1'; do
	grep -q "^codeexecd_http_responses_total{code=\"$want\$" "$TMPD/codes.txt" ||
		fail "no codeexecd_http_responses_total{code=\"$want: responses not counted by status"
done
ok "HTTP responses are counted by status, civetweb's own 404 too"
stop_daemon

# metrics_listen: /metrics on its own address, and not on the MCP one.
MPORT=$(free_port)
CFG_WARM=0
CFG_EXTRA="metrics_listen: 127.0.0.1:$MPORT"
write_config
start_daemon
wait_ready
st=$(metrics "$TMPD/main.txt")
expect_status 404 "$st" "GET /metrics on the listen address when metrics_listen is set"
st=$(curl -s -o "$TMPD/m.txt" -w '%{http_code}' --max-time 10 "http://127.0.0.1:$MPORT/metrics")
expect_status 200 "$st" "GET /metrics on metrics_listen"
promtool_ok "$TMPD/m.txt"
grep -q '^codeexecd_pool_warm 0$' "$TMPD/m.txt" || fail "metrics_listen serves another daemon's numbers"
st=$(curl -s -o "$TMPD/m.txt" -w '%{http_code}' --max-time 10 "http://127.0.0.1:$MPORT/health")
expect_status 404 "$st" "GET /health on metrics_listen (it serves /metrics only)"
st=$(curl -s -o "$TMPD/m.txt" -w '%{http_code}' --max-time 10 -H "Host: evil.com:$MPORT" \
	"http://127.0.0.1:$MPORT/metrics")
expect_status 403 "$st" "GET /metrics on metrics_listen with a foreign Host"
