#!/bin/sh
# 432-preprocess: preprocess_command in a real daemon.
# The front asks the privileged parent to run it (PREPROCESS); it gets the
# code on stdin and the session's id and identity in its environment, and
# what it writes on stdout runs. A non-zero exit fails the call with its
# stderr; a command past preprocess_timeout_s is killed, with what it
# started; more than preprocess_max_bytes on stdout or stderr fails the
# call, less runs; it never runs as root (as the daemon's user, or nobody
# when a root daemon has none), holds no capability, and has no_new_privs.
# parallel_execute's code goes through it too.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)

pp=$TMPD/pp
mkdir "$pp"
chmod 1777 "$pp" # the daemon's user writes its evidence here
cat >"$pp/pre.sh" <<EOF
#!/bin/sh
# A stand-in preprocessor, steered by markers in the code.
out=$pp
EOF
cat >>"$pp/pre.sh" <<'EOF'
code=$(cat)
id -u >"$out/uid"
env >"$out/env"
grep -E '^(CapPrm|CapEff|CapAmb|NoNewPrivs):' /proc/self/status >"$out/caps"
case "$code" in
*'#fail'*)
	echo "preprocess: the word forbidden is not allowed here" >&2
	exit 3 ;;
*'#sleep'*)
	echo "going to sleep" >&2
	sleep 60 &
	echo $! >"$out/sleep.pid"
	echo $$ >"$out/shell.pid"
	wait
	exit 0 ;;
*'#bigout'*)
	head -c 5000000 /dev/zero | tr '\0' '#'
	exit 0 ;;
*'#bigerr'*)
	head -c 5000000 /dev/zero | tr '\0' 'e' >&2
	exit 1 ;;
*'#large'*)
	# about 560 KB of code: under the bound, so it runs
	yes 'x = 1' | head -n 80000
	echo 'big_ok = "ran"' ;;
esac
echo 'import json as preprocessed_json'
printf '%s\n' "$code"
EOF
chmod 755 "$pp/pre.sh"

CFG_EXTRA="preprocess_command: $pp/pre.sh
preprocess_timeout_s: 2
preprocess_max_bytes: 2000000
http:
  threads: 4"
write_config
export CODEEXECD_TEST_SECRET=leak # must not reach the command
start_daemon
unset CODEEXECD_TEST_SECRET
wait_ready

if [ "$(id -u)" = 0 ]; then want_uid=$(id -u "$TEST_USER"); else want_uid=$(id -u); fi

run_py "$URL" "$pp" "$want_uid" <<'PY'
import os, sys, time
from mcp import Client, check, ok, text_of, value_of

url, pp, want_uid = sys.argv[1], sys.argv[2], sys.argv[3]
c = Client(url)
c.initialize()

def read(name):
    with open(os.path.join(pp, name)) as f:
        return f.read()

# Success: the command's import is there when the agent's code runs.
r = c.execute("preprocessed_json.dumps({'a': 1})")
check(not r.get("isError") and value_of(r) == "'{\"a\": 1}'",
      "the preprocessed code ran, with the import the command added", r)
ok("success: the command's output is what ran (its import is defined)")

env = dict(l.split("=", 1) for l in read("env").splitlines() if "=" in l)
check(env.get("CODEEXECD_SESSION_ID") == c.session_id.lower(),
      "CODEEXECD_SESSION_ID is the session's id", env)
check(env.get("CODEEXECD_IDENTITY") == "anonymous",
      "CODEEXECD_IDENTITY is the session's identity (anonymous: no auth)", env)
check("CODEEXECD_TEST_SECRET" not in env, "the daemon's environment is not passed on", env)
check(env.get("PATH") == "/usr/local/bin:/usr/bin:/bin", "PATH is the fixed one", env)
ok("the environment: session id, identity, PATH, nothing of the daemon's")

def runs_as(want_uid):
    uid = read("uid").strip()
    check(uid == want_uid and uid != "0", "the command ran as the daemon's user %s, not root"
          % want_uid, uid)
    caps = dict(l.split(":\t") for l in read("caps").splitlines())
    check(all(int(caps[k], 16) == 0 for k in ("CapPrm", "CapEff", "CapAmb")) and
          caps["NoNewPrivs"] == "1", "no capability, no_new_privs", caps)
    ok("the command ran as uid %s, not root, with no capability and no_new_privs" % uid)
runs_as(want_uid)

# Failure: a non-zero exit fails the call with the command's stderr.
r = c.execute("print('never runs')  #fail")
t = text_of(r)
check(r.get("isError") is True, "a failed command fails the call", r)
check("the word forbidden is not allowed here" in t and "exited with status 3" in t,
      "the error holds the command's stderr and its exit status", r)
check("never runs" not in t, "the code did not run", r)
ok("failure: the call fails with the command's stderr")

# Timeout: killed at preprocess_timeout_s, with what it started.
t0 = time.monotonic()
r = c.execute("1  #sleep")
took = time.monotonic() - t0
t = text_of(r)
check(r.get("isError") is True and "timed out after 2 s" in t, "a slow command fails the call "
      "saying it timed out", r)
check("going to sleep" in t, "its stderr is in the error", r)
check(took < 8, "the call ended soon after the time limit (%.1f s)" % took)
def gone(pid):
    try:
        with open("/proc/%s/stat" % pid) as f:
            return f.read().split(") ")[1][0] == "Z"
    except FileNotFoundError:
        return True
for name in ("shell.pid", "sleep.pid"):
    pid = read(name).strip()
    deadline = time.monotonic() + 5
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    check(gone(pid), "the command's %s (%s) is gone" % (name, pid))
ok("timeout: the call fails after %.1f s saying so; the command and its child are gone" % took)

# Megabytes: over the bound fails, on stdout and on stderr; under it runs.
r = c.execute("1  #bigout")
check(r.get("isError") is True and "more than 2000000 bytes" in text_of(r),
      "5 MB on stdout fails the call, naming preprocess_max_bytes", r)
r = c.execute("1  #bigerr")
check(r.get("isError") is True and "more than 2000000 bytes" in text_of(r),
      "5 MB on stderr fails the call too", r)
r = c.execute("big_ok  #large")
check(not r.get("isError") and value_of(r) == "'ran'", "560 KB of code under the bound runs",
      r)
ok("megabytes: over preprocess_max_bytes fails (stdout and stderr), under it runs")

# parallel_execute: the batch's code goes through the command once, too.
def tool(name, args):
    return c.result("tools/call", {"name": name, "arguments": args})
r = tool("py_parallel_execute", {"code": "out = preprocessed_json.dumps(i)",
                                 "inputs": [{"i": 1}, {"i": 2}], "result_variable": "out"})
check(not r.get("isError"), "parallel_execute accepted", r)
bid = r["structuredContent"]["batch_id"]
deadline = time.monotonic() + 60
while True:
    s = tool("py_check_batch", {"batch_id": bid})["structuredContent"]
    if s.get("status") == "completed":
        break
    check(time.monotonic() < deadline, "the batch finishes within 60 s", s)
    time.sleep(0.2)
got = sorted(x.get("result") for x in s["items"])
check(got == ["1", "2"], "each item ran the preprocessed code (its import)", s)
r = tool("py_parallel_execute", {"code": "out = 1  #fail", "inputs": [{"i": 1}]})
check(r.get("isError") is True and "the word forbidden is not allowed here" in text_of(r),
      "a failing command fails parallel_execute with its stderr", r)
ok("parallel_execute: preprocessed once per batch; a failure fails the call")

# The daemon still serves after all that.
r = c.execute("preprocessed_json.dumps(2)")
check(value_of(r) == "'2'", "the session still runs code", r)
ok("the session still serves")
PY
grep -q "preprocess_command .* ran 2 s: killing it" "$LOG" ||
	fail "the daemon's log does not say it killed the slow command"
ok "the log says the slow command was killed"
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exited with status $DAEMON_RC"
ok "daemon stopped cleanly"

# Started as root without user (kernels under kernel_uid_range): the parent
# stays root, and the command runs as nobody.
[ "$(id -u)" = 0 ] || { ok "not root: the run without user is skipped"; exit 0; }
nobody=$(id -u nobody 2>/dev/null) || { ok "no account nobody: skipped"; exit 0; }
worker_for_other_uids
PORT=$(free_port)
CFG_EXTRA="$CFG_EXTRA
kernel_uid_range: \"63440-63443\""
write_config
grep -q '^user:' "$TMPD/codeexecd.yaml" && fail "the second configuration names a user"
rm -f "$pp/uid" "$pp/caps"
start_daemon
wait_ready
[ "$(awk '/^Uid:/ { print $2 }' "/proc/$DAEMON_PID/status")" = 0 ] ||
	fail "the parent is not root without user"
run_py "$URL" "$pp" "$nobody" <<'PY'
import os, sys
from mcp import Client, check, ok, value_of
url, pp, nobody = sys.argv[1:]
c = Client(url)
c.initialize()
r = c.execute("preprocessed_json.dumps(3)")
check(value_of(r) == "'3'", "the preprocessed code ran", r)
uid = open(os.path.join(pp, "uid")).read().strip()
check(uid == nobody, "with a root parent and no user, the command ran as nobody (%s)" % nobody,
      uid)
caps = dict(l.split(":\t") for l in open(os.path.join(pp, "caps")).read().splitlines())
check(all(int(caps[k], 16) == 0 for k in ("CapPrm", "CapEff", "CapAmb")) and
      caps["NoNewPrivs"] == "1", "no capability, no_new_privs", caps)
ok("root parent without user: the command ran as nobody (uid %s), no capability" % uid)
PY
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exited with status $DAEMON_RC"
ok "daemon stopped cleanly"
