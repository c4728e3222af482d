#!/bin/sh
# 530-sidecars: a model loaded once in a sidecar serves every session
# (seed 000's SidecarConfig). The sidecar, written here with
# http.server, "loads a model" by filling 200 MB once; eight sessions call
# its /predict from their kernels through $MODEL_URL, and neither the
# sidecar's memory nor the kernels' grows by 200 MB per session (both are
# reported below). Also: the configuration's checks, --warm starts none,
# the sidecar runs as the unprivileged user with a sanitized environment,
# /health and codeexecctl status list it, a sidecar that exits is restarted
# and kernels reach it again, SIGHUP restarts only the sidecar that
# changed, SIGTERM leaves no sidecar behind, and a
# sidecar that never answers 2xx stops start-up naming it and its output.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CTL=$top_builddir/ctl/codeexecctl

cat >"$TMPD/model_server.py" <<'EOF2'
"""A model sidecar for the test: 200 MB loaded once, served over HTTP."""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MB = int(os.environ.get("MODEL_MB", "200"))
MODEL = bytes(range(256)) * (MB * 1024 * 1024 // 256)  # written: resident
print("model loaded: %d MB, uid %d" % (len(MODEL) >> 20, os.getuid()), flush=True)


class Handler(BaseHTTPRequestHandler):
    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            self.reply(200, {"ok": True})
        elif self.path == "/predict":
            self.reply(200, {"prediction": MODEL[12345], "size": len(MODEL),
                             "pid": os.getpid()})
        elif self.path == "/exit":
            print("asked to exit", flush=True)
            os._exit(3)
        elif self.path == "/env":
            self.reply(200, dict(os.environ))
        else:
            self.reply(404, {"error": "no such path"})

    def log_message(self, fmt, *args):
        sys.stderr.write("request: " + (fmt % args) + "\n")


ThreadingHTTPServer((os.environ["SIDECAR_HOST"], int(os.environ["SIDECAR_PORT"])),
                    Handler).serve_forever()
EOF2
chmod 644 "$TMPD/model_server.py"

# small: a second sidecar, for SIGHUP (only the changed one restarts).
sidecars() {
	cat <<EOF2
sidecars:
  - name: model
    command: [$TMPD/model_server.py]
    url_env_var: MODEL_URL
    readiness_timeout_s: 60
    env: {MODEL_NAME: tiny}
    limits: {memory_mb: 600, pids: 64}
  - name: small
    command: [$TMPD/model_server.py]
    env: {MODEL_MB: '1', VERSION: '${1:-1}'}
EOF2
}
SIDECAR=$(sidecars)

# --- the configuration's checks ----------------------------------------------
CFG_EXTRA="$SIDECAR
kernel_environment: {MODEL_URL: http://elsewhere}"
write_config
if "$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/check.out" 2>&1; then
	fail "codeexecd -n accepted kernel_environment MODEL_URL, a sidecar's url_env_var"
fi
grep -q "MODEL_URL is rejected: it is the url_env_var of sidecar model" "$TMPD/check.out" ||
	fail "the refusal does not say why: $(cat "$TMPD/check.out")"
ok "kernel_environment cannot set a sidecar's url_env_var: $(cat "$TMPD/check.out")"
CFG_EXTRA="kernel_environment: {SIDECAR_PORT: '1'}"
write_config
if "$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/check.out" 2>&1; then
	fail "codeexecd -n accepted kernel_environment SIDECAR_PORT"
fi
grep -q "SIDECAR_PORT is rejected" "$TMPD/check.out" ||
	fail "the refusal does not say why: $(cat "$TMPD/check.out")"
ok "kernel_environment cannot set SIDECAR_PORT"

# --- --warm starts no sidecar --------------------------------------------------
CFG_WARM=1
CFG_EXTRA=$SIDECAR
write_config
"$CODEEXECD" --warm -f "$TMPD/codeexecd.yaml" >"$TMPD/warm.log" 2>&1 ||
	fail "codeexecd --warm failed: $(cat "$TMPD/warm.log")"
if grep -q "sidecar model" "$TMPD/warm.log" || pgrep -f "$TMPD/model_server.py" >/dev/null; then
	fail "--warm started a sidecar: $(cat "$TMPD/warm.log")"
fi
ok "--warm builds the environment and starts no sidecar"

# --- started before the pool, as the unprivileged user, env sanitized ---------
export CODEEXECD_TEST_SECRET=do-not-leak
start_daemon
wait_ready
unset CODEEXECD_TEST_SECRET
grep -q "sidecar model: model loaded: 200 MB" "$LOG" ||
	fail "the sidecar's output is not logged with its name"
SC_PID=$(curl -s "$BASE/health" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["sidecars"][0]["pid"])')
[ "$SC_PID" -gt 1 ] || fail "/health names no sidecar pid"
SC_UID=$(awk '/^Uid:/ {print $2}' /proc/"$SC_PID"/status)
[ "$SC_UID" != 0 ] || fail "the sidecar runs as root"
tr '\0' '\n' </proc/"$SC_PID"/environ >"$TMPD/sc.env"
grep -q CODEEXECD_TEST_SECRET "$TMPD/sc.env" && fail "the sidecar inherited the daemon's environment"
grep -q '^MODEL_NAME=tiny$' "$TMPD/sc.env" || fail "the sidecar lacks its env: $(cat "$TMPD/sc.env")"
grep -q '^SIDECAR_PORT=[0-9]' "$TMPD/sc.env" || fail "the sidecar lacks SIDECAR_PORT"
ok "sidecar $SC_PID runs as uid $SC_UID with a sanitized environment: $(tr '\n' ' ' <"$TMPD/sc.env")"
# Its own control group, with its limits, where this host has control groups.
HAS_GROUP=
if grep -q "sidecar-model" /proc/"$SC_PID"/cgroup; then
	HAS_GROUP=1
	CG=$(grep -E '^[0-9]+:(memory|pids)?:.*sidecar-model' /proc/"$SC_PID"/cgroup | tr '\n' ' ')
	MEM=
	for f in /sys/fs/cgroup/memory$(awk -F: '$2 == "memory" {print $3}' /proc/"$SC_PID"/cgroup)/memory.limit_in_bytes \
		/sys/fs/cgroup$(awk -F: '$1 == "0" {print $3}' /proc/"$SC_PID"/cgroup)/memory.max; do
		[ -r "$f" ] && MEM=$(cat "$f") && break
	done
	[ "$MEM" = $((600 * 1024 * 1024)) ] || fail "the sidecar's memory limit is ${MEM:-unreadable}, not 600 MiB ($CG)"
	ok "the sidecar runs in its own control group, memory limit $MEM: $CG"
elif grep -q "sidecar model runs without" "$LOG"; then
	ok "this host gives the sidecar no control group: $(grep -o 'sidecar model runs without.*' "$LOG" | head -n 1)"
else
	fail "the sidecar is in no group of its own and the log does not say why: $(cat /proc/"$SC_PID"/cgroup)"
fi
grep -n "sidecar model is ready" "$LOG" | head -n 1 >"$TMPD/ready.line"
[ -s "$TMPD/ready.line" ] || fail "no readiness line in the log"

# --- /health lists it -----------------------------------------------------------
curl -s "$BASE/health" >"$TMPD/body"
[ "$(jget 'd["sidecars"][0]["state"]')" = running ] || fail "/health: $(cat "$TMPD/body")"
SC_RSS0=$(jget 'd["sidecars"][0]["rss_kb"]')
[ "$SC_RSS0" -gt 200000 ] || fail "/health: the sidecar's rss_kb $SC_RSS0 is under 200 MB"
ok "/health lists the sidecar: $(jget 'd["sidecars"]')"

# --- eight sessions share the one model -----------------------------------------
run_py "$URL" "$SC_PID" >"$TMPD/sessions.out" <<'EOF2' || fail "sessions: $(cat "$TMPD/sessions.out")"
import json, sys
from mcp import Client, check, ok
from calls import sc
url, sc_pid = sys.argv[1], int(sys.argv[2])

def rss_kb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

code = r'''
import json, os, urllib.request
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
before = rss()
p = json.load(urllib.request.urlopen(os.environ["MODEL_URL"] + "/predict", timeout=30))
print(json.dumps({"p": p, "before": before, "after": rss(), "pid": os.getpid(),
                  "url": os.environ["MODEL_URL"], "host": os.environ["SIDECAR_HOST"],
                  "port": os.environ["SIDECAR_PORT"]}))
'''
clients, results = [], []
for i in range(8):
    c = Client(url)
    c.initialize()
    clients.append(c)
for i, c in enumerate(clients):
    r = c.execute(code)
    out = sc(r).get("stdout", "")
    check(sc(r).get("success") is True, "session %d calls /predict" % i, r)
    results.append(json.loads(out))
pids = {r["p"]["pid"] for r in results}
check(pids == {sc_pid}, "every session reached the one sidecar %d: %s" % (sc_pid, pids))
check(all(r["p"]["size"] == 200 * 1024 * 1024 for r in results), "the model answered")
check(all(r["url"] == "http://%s:%s" % (r["host"], r["port"]) for r in results),
      "MODEL_URL agrees with SIDECAR_HOST and SIDECAR_PORT: %s" % results[0]["url"])
kernel_rss = [rss_kb(r["pid"]) for r in results]
grew = [r["after"] - r["before"] for r in results]
sidecar = rss_kb(sc_pid)
print("sidecar RSS: %d kB (once); kernel RSS: %s kB (each); grew by %s kB" %
      (sidecar, kernel_rss, grew))
check(all(g < 50 * 1024 for g in grew), "no kernel grew by the model's 200 MB: %s" % grew)
check(all(k < 150 * 1024 for k in kernel_rss), "no kernel holds the model: %s" % kernel_rss)
check(sidecar > 200 * 1024 and sidecar < 300 * 1024,
      "the sidecar holds the model once: %d kB" % sidecar)
ok("8 sessions used one 200 MB model: sidecar %d kB, kernels %s kB" % (sidecar, kernel_rss))
EOF2
cat "$TMPD/sessions.out"

# --- codeexecctl status lists it ------------------------------------------------
"$CTL" -f "$TMPD/codeexecd.yaml" status >"$TMPD/status.out" 2>&1 ||
	fail "codeexecctl status: $(cat "$TMPD/status.out")"
grep -Eq "^model +running +$SC_PID +0 +" "$TMPD/status.out" ||
	fail "codeexecctl status does not list the sidecar: $(cat "$TMPD/status.out")"
ok "codeexecctl status lists the sidecar: $(grep '^model' "$TMPD/status.out")"

# --- a sidecar that exits is restarted, and kernels reach it again ------------
run_py "$URL" >"$TMPD/restart.out" <<'EOF2' || fail "restart: $(cat "$TMPD/restart.out")"
import json, sys, time
from mcp import Client, check, ok
from calls import sc
c = Client(sys.argv[1])
c.initialize()
r = c.execute("import os, urllib.request\n"
              "try:\n    urllib.request.urlopen(os.environ['MODEL_URL'] + '/exit', timeout=5)\n"
              "except Exception as e:\n    print('gone:', type(e).__name__)")
check(sc(r).get("success") is True, "ask the sidecar to exit", r)
code = ("import json, os, urllib.request\n"
        "print(json.load(urllib.request.urlopen(os.environ['MODEL_URL'] + '/predict',"
        " timeout=5))['pid'])")
deadline = time.time() + 60
while True:
    r = c.execute(code)
    if sc(r).get("success"):
        break
    check(time.time() < deadline, "the sidecar answers again within 60 s", r)
    time.sleep(0.5)
ok("after the sidecar exited, kernels reach its restart (pid %s)" % sc(r)["stdout"].strip())
EOF2
cat "$TMPD/restart.out"
grep -q "sidecar model exited with status 3; restarting it in 1 s" "$LOG" ||
	fail "the exit and the back-off are not logged: $(grep sidecar "$LOG")"
wait_for 30 "/health says running after the restart" sh -c \
	"curl -s '$BASE/health' | grep -q '\"state\":\"running\",\"pid\":[0-9]*,\"restarts\":1'"
curl -s "$BASE/health" >"$TMPD/body"
NEW_PID=$(jget 'd["sidecars"][0]["pid"]')
[ "$NEW_PID" != "$SC_PID" ] || fail "the restarted sidecar has the old pid"
if [ -n "$HAS_GROUP" ] && ! grep -q "sidecar-model" /proc/"$NEW_PID"/cgroup; then
	fail "the restarted sidecar left its control group: $(cat /proc/"$NEW_PID"/cgroup)"
fi
ok "/health after the restart: $(jget 'd["sidecars"]')"

# --- /metrics counts it (its sidecar states) ----------------------------
curl -s "$BASE/metrics" >"$TMPD/metrics"
grep -qx 'codeexecd_sidecar_up{sidecar="model"} 1' "$TMPD/metrics" ||
	fail "/metrics: no sidecar_up 1: $(grep sidecar "$TMPD/metrics")"
grep -qx 'codeexecd_sidecar_restarts_total{sidecar="model"} 1' "$TMPD/metrics" ||
	fail "/metrics: restarts_total is not 1: $(grep sidecar "$TMPD/metrics")"
RES=$(sed -n 's/^codeexecd_sidecar_resident_bytes{sidecar="model"} //p' "$TMPD/metrics")
[ "${RES:-0}" -gt 209715200 ] || fail "/metrics: resident_bytes ${RES:-none} is under 200 MiB"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMPD/metrics" >"$TMPD/promtool.out" 2>&1 ||
		fail "promtool check metrics: $(cat "$TMPD/promtool.out")"
fi
ok "/metrics: $(grep '^codeexecd_sidecar' "$TMPD/metrics" | tr '\n' ' ')"

# --- SIGHUP restarts only the sidecar whose settings changed --------------------
SMALL_PID=$(jget 'd["sidecars"][1]["pid"]')
SMALL_PORT=$(jget 'd["sidecars"][1]["port"]')
curl -s "http://127.0.0.1:$SMALL_PORT/env" | grep -q '"VERSION": "1"' || fail "small has no VERSION 1"
CFG_EXTRA=$(sidecars 2)
write_config
kill -HUP "$DAEMON_PID"
wait_for 30 "small restarted with its new settings" sh -c \
	"curl -s 'http://127.0.0.1:$SMALL_PORT/env' | grep -q '\"VERSION\": \"2\"'"
wait_for 30 "/health says small runs again" sh -c \
	"curl -s '$BASE/health' | grep -q '\"name\":\"small\",\"state\":\"running\"'"
curl -s "$BASE/health" >"$TMPD/body"
[ "$(jget 'd["sidecars"][1]["pid"]')" != "$SMALL_PID" ] || fail "SIGHUP: small kept its pid"
[ "$(jget 'd["sidecars"][0]["pid"]')" = "$NEW_PID" ] || fail "SIGHUP restarted model too"
grep -q "reload: sidecar small changed; restarting it" "$LOG" || fail "no reload line for small"
if grep -q "reload: sidecar model" "$LOG"; then fail "SIGHUP touched model"; fi
ok "SIGHUP restarted small ($SMALL_PID -> $(jget 'd["sidecars"][1]["pid"]')) and left model ($NEW_PID) running"
# A change kernels hold (url_env_var) waits for a restart, and says so.
CFG_EXTRA=$(sidecars 2 | sed 's/url_env_var: MODEL_URL/url_env_var: OTHER_URL/')
write_config
kill -HUP "$DAEMON_PID"
wait_for 30 "the refusal of a url_env_var change is logged" grep -q \
	"reload: sidecar model: name, url_env_var, host, port or socket changed" "$LOG"
curl -s "$BASE/health" >"$TMPD/body"
[ "$(jget 'd["sidecars"][0]["pid"]')" = "$NEW_PID" ] || fail "a url_env_var change restarted model"
ok "a url_env_var change waits for a restart: $(grep -o 'reload: sidecar model: .*' "$LOG" | head -n 1)"

# --- SIGTERM: the sidecar gets TERM and is gone -----------------------------------
stop_daemon TERM
[ "$DAEMON_RC" = 0 ] || fail "the daemon exited with $DAEMON_RC on SIGTERM"
grep -q "stopping sidecar model" "$LOG" || fail "the sidecar was not stopped: $(tail "$LOG")"
if kill -0 "$NEW_PID" 2>/dev/null || pgrep -f "$TMPD/model_server.py" >/dev/null; then
	fail "a sidecar outlived the daemon: $(pgrep -af model_server.py)"
fi
ok "SIGTERM stopped the sidecar ($(grep -c 'sidecar model' "$LOG") log lines of it); none is left"

# --- a sidecar that stays down: /health and status say which --------------------------
CFG_EXTRA="sidecars:
  - name: once
    command: [$TMPD/model_server.py]
    env: {MODEL_MB: '1'}
    restart: never"
write_config
start_daemon
wait_ready
curl -s "$BASE/health" >"$TMPD/body"
ONCE_PORT=$(jget 'd["sidecars"][0]["port"]')
curl -s --max-time 5 "http://127.0.0.1:$ONCE_PORT/exit" >/dev/null 2>&1 || true
wait_for 30 "/health degraded, naming the sidecar" sh -c \
	"curl -s '$BASE/health' | grep -q 'sidecar once is not running (failed, 0 restarts)'"
[ "$(health_status)" = 503 ] || fail "/health is not 503 while a sidecar is down"
"$CTL" -f "$TMPD/codeexecd.yaml" status >"$TMPD/status.out" 2>&1 || true
grep -Eq "^once +failed +- +0 +" "$TMPD/status.out" ||
	fail "codeexecctl status does not show the sidecar failed: $(cat "$TMPD/status.out")"
grep -q "sidecar once exited with status 3; restart is never: it stays down" "$LOG" ||
	fail "the log does not say why it stays down"
ok "a sidecar that stays down: $(cat "$TMPD/health.body"); status: $(grep '^once' "$TMPD/status.out")"
stop_daemon TERM

# --- a sidecar that never answers 2xx: start-up fails, naming it ---------------------
# (A small model, so that it answers 404 within the 3 s even on a loaded machine.)
CFG_EXTRA="sidecars:
  - name: slow
    command: [$TMPD/model_server.py]
    env: {MODEL_MB: '1'}
    health_path: /not-ready
    readiness_timeout_s: 3"
write_config
: >"$TMPD/daemon.log"
start_daemon
i=0
while kill -0 "$DAEMON_PID" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "the daemon still runs 60 s after a readiness_timeout_s of 3"
	sleep 0.1
done
wait "$DAEMON_PID" && rc=0 || rc=$?
DAEMON_PID=
[ "$rc" != 0 ] || fail "the daemon exited 0 though its sidecar never became ready"
grep -q "sidecar slow did not answer GET /not-ready with a 2xx within 3 s (last answer 404); its last output: .*GET /not-ready" "$LOG" ||
	fail "the failure does not name the sidecar and its output: $(cat "$LOG")"
if pgrep -f "$TMPD/model_server.py" >/dev/null; then
	fail "the sidecar that never became ready was left running"
fi
ok "readiness timeout: $(grep 'sidecar slow did not' "$LOG" | cut -c1-300)"
