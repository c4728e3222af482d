#!/bin/sh
# 435-auth-tokens: auth.mode tokens over real HTTP, and identity binding.
# A tokens file readable by others is refused at start-up; with
# mode 0600 the daemon listens on 0.0.0.0 without the boundary
# acknowledgement. No token: 401 with a plain Bearer challenge (no RFC
# 9728 metadata, which is not served: 404); a bad token: 401
# invalid_token; a token in the
# query string: 400; /health needs none. Identities A and B: each kernel
# has USER_IDENTITY, a restarted one too; B's requests on A's MCP session,
# job, batch and execution_session_id, and B's close_session of it, answer
# exactly as for ids that do not exist and change nothing; list_sessions
# shows only the caller's; codeexecctl sessions shows who holds which
# session, and codeexecctl exec takes CODEEXECD_TOKEN. No token or token
# hash appears in the log, /health, codeexecctl or a kernel's environment.
# SIGHUP rereads the tokens file: a removed token is refused at once.
# Last, as root with kernel_uid_range: the log and codeexecctl sessions say
# which identity holds which kernel uid.
. "$(dirname "$0")/lib.sh"

require_cmd curl sha256sum
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)

make_tokens 644

CFG_LISTEN="0.0.0.0:$PORT"
CFG_WARM=2
CFG_EXTRA="execution_mode: adaptive
promotion_threshold_s: 1
auth:
  mode: tokens
  tokens_file: $TMPD/tokens
  resource: http://127.0.0.1:$PORT/mcp"
write_config
# The parent opens it as root before the fork: root's file, as an operator keeps it.

# --- a tokens file others may read is refused -------------------------------
out=$("$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" 2>&1) &&
	fail "codeexecd -n accepted a tokens file of mode 0644: $out"
case $out in
*"mode 0644 lets its group or others read or write it; chmod 600 $TMPD/tokens"*) ;;
*) fail "codeexecd -n on a tokens file of mode 0644 said: $out" ;;
esac
ok "codeexecd -n refuses the tokens file of mode 0644"
start_daemon
wait_for 120 "the daemon refusing a tokens file of mode 0644" \
	sh -c "! kill -0 $DAEMON_PID 2>/dev/null"
wait "$DAEMON_PID" && rc=0 || rc=$?
DAEMON_PID=
[ "$rc" -ne 0 ] || fail "the daemon started with a tokens file of mode 0644"
grep -q "auth.tokens_file $TMPD/tokens: mode 0644 lets its group or others read or write it; chmod 600 $TMPD/tokens" \
	"$TMPD/daemon.log" || fail "no clear refusal of the 0644 tokens file in the log"
ok "a tokens file of mode 0644 is refused: $(grep -o 'auth.tokens_file.*' "$TMPD/daemon.log" | head -1)"

# --- mode 0600: serves, on 0.0.0.0 without the acknowledgement ---------------
chmod 600 "$TMPD/tokens"
out=$("$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" 2>&1) || fail "codeexecd -n: $out"
: >"$TMPD/daemon.log"
start_daemon
wait_ready
grep -q 'allow_external_network_boundary' "$TMPD/daemon.log" &&
	fail "tokens mode on 0.0.0.0 still spoke of allow_external_network_boundary"
ok "auth.mode tokens listens on 0.0.0.0 without allow_external_network_boundary"

run_py "$URL" "$TOKEN_A" "$TOKEN_B" "$TMPD/run" "$PORT" "$top_builddir/ctl/codeexecctl" \
	"$TMPD/codeexecd.yaml" "$DAEMON_PID" "$TMPD/tokens" <<'EOF2'
import json, os, re, signal, subprocess, sys, time, urllib.request
from mcp import Client, check, ok, text_of, value_of
from calls import tool, sc, control

url, ta, tb, rundir, port, ctl, conf = sys.argv[1:8]
base = "http://127.0.0.1:%s" % port
meta_url = base + "/.well-known/oauth-protected-resource/mcp"
INIT = {"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}

def get(u):
    try:
        with urllib.request.urlopen(u, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()

# No token: 401 with a plain challenge, no error code (RFC 6750 3.1), and
# no resource_metadata: mode tokens has no authorization server, and a
# client sent to one tries dynamic registration here and reports that.
c = Client(url)
r = c.request("initialize", INIT)
check(r.status == 401, "no token: HTTP 401")
check(r.header("WWW-Authenticate") == 'Bearer realm="codeexecd"',
      "no token: a plain Bearer challenge (got %r)" % r.header("WWW-Authenticate"))
ok("no token: 401, " + r.header("WWW-Authenticate"))
# A token not in the file, and a malformed one: invalid_token.
for bad in ("Bearer " + ta[:-1], "Bearer " + ta + " x", "Bearer " + ta + ",x"):
    r = Client(url).http("POST", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                             "params": INIT}), {"Authorization": bad})
    check(r.status == 401 and r.header("WWW-Authenticate") ==
          'Bearer realm="codeexecd", error="invalid_token"',
          "a bad token (%r...): 401 invalid_token" % bad[:9])
    check(ta not in r.raw, "the answer does not echo the token")
ok("a wrong token, and one with text after it: 401 invalid_token")
# A tab inside the header value: civetweb refuses the request as malformed.
r = Client(url).http("POST", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                         "params": INIT}), {"Authorization": "Bearer\t" + ta})
check(r.status == 400 and ta not in r.raw, "'Bearer<TAB>token': 400, not accepted")
ok("'Bearer<TAB>token': 400 (a malformed request)")
# The scheme in any case, and more than one space, are RFC 9110's.
for hdr in ("bearer " + ta, "BEARER  " + ta):
    r = Client(url).http("POST", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                             "params": INIT}), {"Authorization": hdr})
    check(r.status == 200, "%r...: 200" % hdr[:8])
ok("'bearer' in lower case and 'BEARER' with two spaces are accepted")
# In the query string: refused even with the right token.
q = Client(url + "?access_token=" + ta)
r = q.request("initialize", INIT)
check(r.status == 400 and 'error="invalid_request"' in (r.header("WWW-Authenticate") or ""),
      "a token in the query string: 400 invalid_request")
ok("a token in the query string: 400 invalid_request")

# No OAuth metadata at either address: 404 saying why; /health without a token.
for u in (meta_url, base + "/.well-known/oauth-protected-resource"):
    st, body = get(u)
    check(st == 404 and "auth.mode tokens" in body, "GET %s: 404 naming mode tokens" % u, body)
ok("no RFC 9728 metadata in mode tokens: 404 at both addresses")
st, health = get(base + "/health")
check(st == 200, "/health without a token: 200")

# --- identities A and B ---------------------------------------------------
a = Client(url, token=ta)
a.initialize()
b = Client(url, token=tb)
b.initialize()
r = a.execute("import os\nos.environ.get('USER_IDENTITY')")
check(value_of(r) == "'agent-a'", "A's kernel has USER_IDENTITY agent-a", r)
r = b.execute("import os\nos.environ.get('USER_IDENTITY')")
check(value_of(r) == "'agent-b'", "B's kernel has USER_IDENTITY agent-b", r)
ok("each kernel has its caller's USER_IDENTITY")
def finished(c, code):
    """execute, following a call promoted to a job (adaptive) to its end."""
    r = c.execute(code)
    jid = sc(r).get("job_id")
    deadline = time.time() + 60
    while jid and sc(r).get("status") not in ("completed", "failed", "timed_out", "cancelled"):
        check(time.time() < deadline, "job %s ends" % jid, r)
        time.sleep(0.2)
        r = tool(c, "py_check_job", {"job_id": jid})
    return r

r = finished(a, "import os\nos._exit(3)")
check("KernelDied" in text_of(r), "A's kernel crashed", r)
r = finished(a, "import os\nos.environ.get('USER_IDENTITY')")
check(value_of(r) == "'agent-a'" and r["structuredContent"].get("kernel_restarted") is True
      and "kernel was restarted" in r["structuredContent"].get("stderr", ""),
      "after a crash the new kernel has USER_IDENTITY agent-a, and the result still "
      "says the kernel was restarted", r)
ok("after a crash: USER_IDENTITY again, and kernel_restarted still reported")
a.execute("x = 41")

def as_b_on(session_id, method="POST", body=None):
    """B's token with A's (or any) MCP session id."""
    h = {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25",
         "Authorization": "Bearer " + tb}
    return Client(url).http(method, body, h)

LIST = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
EXEC = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                   "params": {"name": "execute_py_code", "arguments": {"code": "x = 0"}}})
fake = "0" * 32
for body, what in ((LIST, "tools/list"), (EXEC, "execute")):
    mine, none = as_b_on(a.session_id, body=body), as_b_on(fake, body=body)
    check(mine.status == none.status == 404 and mine.raw == none.raw,
          "B's token on A's session (%s): as for no session" % what)
for m in ("GET", "DELETE"):
    mine, none = as_b_on(a.session_id, m), as_b_on(fake, m)
    check(mine.status == none.status == 404 and mine.raw == none.raw,
          "B's %s of A's session: as for no session" % m)
check(value_of(a.execute("x + 1")) == "42", "A's session is untouched (x is still 41)")
ok("B's token on A's MCP session: 404 as for none, for POST, GET and DELETE; no effect")

def same(r1, r2, ids):
    """Two tool answers equal once the ids they echo are blanked."""
    t1, t2 = json.dumps(r1, sort_keys=True), json.dumps(r2, sort_keys=True)
    for i in ids:
        t1, t2 = t1.replace(i, "ID"), t2.replace(i, "ID")
    return t1 == t2

# A job of A's: promoted after 1 s.
r = tool(a, "execute_py_code", {"code": "import time\ntime.sleep(4)\n7"})
jid = sc(r).get("job_id")
check(isinstance(jid, str), "A's slow call became a job", r)
fj = "f" * len(jid)
for t in ("py_check_job", "py_cancel_job"):
    rb, rn = tool(b, t, {"job_id": jid}), tool(b, t, {"job_id": fj})
    check(same(rb, rn, [jid, fj]), "B's %s of A's job answers as for an unknown job" % t,
          [rb, rn])
# A's job was not cancelled.
deadline = time.time() + 30
while True:
    r = tool(a, "py_check_job", {"job_id": jid})
    if sc(r).get("status") not in ("running", "queued", "pending"):
        break
    check(time.time() < deadline, "A's job ends", r)
    time.sleep(0.3)
check(sc(r).get("status") == "completed" and "7" in text_of(r), "A's job completed: B's cancel did nothing", r)
ok("check_job and cancel_job of A's job, as B: as for an unknown job; the job went on")

# A batch of A's.
r = tool(a, "py_parallel_execute", {"code": "import os\ny = (i * 2, os.environ['USER_IDENTITY'])",
                                    "inputs": [{"i": 1}, {"i": 2}], "result_variable": "y"})
bid = sc(r).get("batch_id")
check(isinstance(bid, str), "A started a batch", r)
fb = "e" * len(bid)
for t in ("py_check_batch", "py_cancel_batch"):
    rb, rn = tool(b, t, {"batch_id": bid}), tool(b, t, {"batch_id": fb})
    check(same(rb, rn, [bid, fb]), "B's %s of A's batch answers as for an unknown one" % t,
          [rb, rn])
ok("check_batch and cancel_batch of A's batch, as B: as for an unknown batch")
deadline = time.time() + 60
while True:
    rep = sc(tool(a, "py_check_batch", {"batch_id": bid}))
    if rep.get("finished") == 2:
        break
    check(time.time() < deadline, "A's batch finishes", rep)
    time.sleep(0.3)
items = json.dumps(rep.get("items"))
check(rep.get("failed") == 0 and items.count("agent-a") == 2,
      "both batch kernels had USER_IDENTITY agent-a: B's cancel did nothing", rep)
ok("A's batch ran whole, each kernel with USER_IDENTITY agent-a")

# execution_session_id, inspect_session and close_session with A's session id.
for t, args in (("execute_py_code", {"code": "x = 0", "execution_session_id": "%s"}),
                ("py_inspect_session", {"session_id": "%s"}),
                ("py_close_session", {"session_id": "%s"})):
    fill = lambda i: {k: (v % i if v == "%s" else v) for k, v in args.items()}
    # The whole JSON-RPC answer, a result or an error, but for its id.
    answer = lambda i: {k: v for k, v in b.request("tools/call", {"name": t, "arguments": fill(i)}).json.items() if k != "id"}
    rb, rn = answer(a.session_id), answer(fake)
    check(same(rb, rn, [a.session_id, fake]),
          "B's %s naming A's session answers as for an unknown one" % t, [rb, rn])
check(value_of(a.execute("x + 1")) == "42", "A's session and kernel are untouched")
ok("execution_session_id, inspect_session, close_session of A's session, as B: as for none")

lst = [s.get("session_id") for s in sc(tool(b, "py_list_sessions", {})).get("sessions", [])]
check(lst == [b.session_id], "B's list_sessions shows only B's session", lst)
ok("list_sessions shows only the caller's sessions")

# codeexecctl sessions: who holds which session.
out = subprocess.run([ctl, "-f", conf, "sessions"], capture_output=True, text=True, timeout=30)
check(out.returncode == 0, "codeexecctl sessions runs", out.stderr)
rows = {l.split()[0]: l.split()[1] for l in out.stdout.splitlines()[1:] if l.strip()}
check(rows.get(a.session_id) == "agent-a" and rows.get(b.session_id) == "agent-b",
      "codeexecctl sessions names each session's identity", out.stdout)
ok("codeexecctl sessions shows the identities")
# codeexecctl exec: the token from CODEEXECD_TOKEN, never the command line.
# Its new session needs an idle kernel, or its call would be backgrounded
# (adaptive, promotion_threshold_s 1) while one starts.
import os
deadline = time.time() + 60
while json.loads(get(base + "/health")[1]).get("idle_kernels", 0) < 1:
    check(time.time() < deadline, "an idle kernel within 60 s")
    time.sleep(0.2)
env = dict(os.environ, CODEEXECD_TOKEN=ta)
ex = subprocess.run([ctl, "-f", conf, "-u", url, "exec", "import os; print(os.environ['USER_IDENTITY'])"],
                    capture_output=True, text=True, timeout=60, env=env)
check(ex.returncode == 0 and ex.stdout.strip() == "agent-a",
      "codeexecctl exec with CODEEXECD_TOKEN runs as agent-a", [ex.returncode, ex.stdout, ex.stderr])
env.pop("CODEEXECD_TOKEN")
ex = subprocess.run([ctl, "-f", conf, "-u", url, "exec", "1"], capture_output=True, text=True,
                    timeout=60, env=env)
check(ex.returncode != 0 and "401" in ex.stderr, "codeexecctl exec without a token: 401",
      [ex.returncode, ex.stdout, ex.stderr])
ok("codeexecctl exec: runs with CODEEXECD_TOKEN, 401 without")

# SIGHUP rereads the tokens file, edited in place (the parent, no longer
# root, rereads the file it opened): B's token, removed from it, is refused.
daemon_pid, tokens = int(sys.argv[8]), sys.argv[9]
lines = open(tokens).read().splitlines()
open(tokens, "w").write("\n".join(l for l in lines if not l.startswith("agent-b:")) + "\n")
os.kill(daemon_pid, signal.SIGHUP)
deadline = time.time() + 20
while b.request("tools/list").status != 401:
    check(time.time() < deadline, "B's token refused within 20 s of SIGHUP")
    time.sleep(0.1)
check(a.request("tools/list").status == 200, "A's token still works after the reload")
ok("SIGHUP rereads the tokens file: B's removed token gets 401, A's works")

# What the secrecy check greps, beside the log: /health, codeexecctl, kernels.
env = a.execute("import os\nprint(repr(dict(os.environ)))")
with open(rundir + "/../secrets-seen.txt", "w") as f:
    f.write(health + "\n" + out.stdout + "\n" + text_of(env) + "\n")
    f.write(json.dumps(control(rundir, "sessions")) + "\n")
    f.write(json.dumps(control(rundir, "status")) + "\n")
EOF2
[ $? -eq 0 ] || fail "the HTTP checks failed"

# --- secrets stay secret -----------------------------------------------------
stop_daemon
for s in "$TOKEN_A" "$TOKEN_B" "$HASH_A" "$HASH_B"; do
	for f in "$TMPD/daemon.log" "$TMPD/secrets-seen.txt"; do
		if grep -qF -- "$s" "$f"; then
			fail "a token or its hash appears in $f"
		fi
	done
done
grep -q 'agent-a' "$TMPD/secrets-seen.txt" || fail "the secrecy check saw no output at all"
ok "no token or token hash in the log, /health, codeexecctl, the control socket or a kernel's environment"

# --- kernel_uid_range: which identity holds which uid ------------------------------
[ "$(id -u)" = 0 ] || { echo "# kernel_uid_range: needs root; not run"; exit 0; }
worker_for_other_uids
CFG_LISTEN="127.0.0.1:$PORT"
CFG_EXTRA="kernel_uid_range: \"63430-63432\"
auth:
  mode: tokens
  tokens_file: $TMPD/tokens"
write_config
# No user: the front, which reads it, runs as nobody (doc/README.privsep).
chown nobody "$TMPD/tokens"
: >"$TMPD/daemon.log"
start_daemon
wait_ready
run_py "$URL" "$TOKEN_A" "$top_builddir/ctl/codeexecctl" "$TMPD/codeexecd.yaml" <<'EOF3' ||
import os, subprocess, sys
from mcp import Client, check, ok, value_of
url, ta, ctl, conf = sys.argv[1:5]
a = Client(url, token=ta)
a.initialize()
uid = int(value_of(a.execute("import os\nos.getuid()")))
check(63430 <= uid <= 63432, "A's kernel runs under a uid of the range (%d)" % uid)
out = subprocess.run([ctl, "-f", conf, "sessions"], capture_output=True, text=True, timeout=30)
row = [l.split() for l in out.stdout.splitlines() if l.startswith(a.session_id)]
check(row and row[0][1] == "agent-a" and row[0][-1] == str(uid),
      "codeexecctl sessions: A's session, agent-a, uid %d" % uid, out.stdout)
print("UID=%d" % uid)
ok("codeexecctl sessions shows agent-a holding uid %d" % uid)
EOF3
	fail "the kernel_uid_range checks failed"
grep -qE "session [0-9a-f]{8} of agent-a takes kernel pid [0-9]+, uid 6343[0-2]" "$TMPD/daemon.log" ||
	fail "the log does not say which identity holds which uid"
ok "the log says which identity holds which kernel uid"
