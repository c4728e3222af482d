#!/bin/sh
# 464-checkpoint-trust: a checkpoint is loaded only into a kernel of the
# identity whose kernel wrote it. With auth.mode tokens and two identities
# (and kernel_uid_range when run as root), identity B tries every path to
# A's checkpoint: B's restore, checkpoint and inspect naming A's session
# (2025-11-25 session_id) or A's execution session (2026-07-28
# execution_session_id), B's restore of A's checkpoint id into its own
# session, a checkpoint id that is a path, and B's kernel reading A's file.
# Each is refused, and A's state and checkpoints are as they were; a
# hibernated A is not woken by B's attempts.
. "$(dirname "$0")/lib.sh"

require_cmd curl sha256sum
require_py ipykernel
require_py dill
require_binaries
setup_tmp
PORT=$(free_port)
make_tokens
UIDS=
if [ "$(id -u)" = 0 ]; then
	worker_for_other_uids
	chmod 711 "$TMPD"
	UIDS='kernel_uid_range: "63470-63475"'
fi
CFG_WARM=2
CFG_HIBERNATE_AFTER=3
CFG_EXTRA="auth:
  mode: tokens
  tokens_file: $TMPD/tokens
  resource: http://127.0.0.1:$PORT/mcp
$UIDS"
write_config
start_daemon
wait_ready

run_py "$URL" "$TOKEN_A" "$TOKEN_B" "$TMPD/run" "${UIDS:+uids}" <<'EOF2'
import glob, json, os, sys, time
from mcp import Client, ModernClient, check, ok, text_of, value_of
from calls import control, sc, tool, wait_for

url, ta, tb, rundir, uids = (sys.argv[1:6] + [""])[:5]
a = Client(url, token=ta)
a.initialize()
b = Client(url, token=tb)
b.initialize()
r = a.execute("secret = 'a-only'\nimport os\nos.getcwd()")
adir = eval(value_of(r))
r = tool(a, "py_checkpoint", {"label": "a"})
cid = sc(r).get("checkpoint")
check(sc(r).get("success") is True and cid, "A's checkpoint", r)
check(sc(b.execute("mine = 1")).get("success") is True, "B has a kernel of its own")


def refused(resp, what):
    r = resp.json or {}
    err = r.get("error") or {}
    check(err.get("code") == -32602 and "unknown session_id" in err.get("message", ""),
          "%s: refused as an unknown session" % what, r)


for name, args in (("py_restore", {"session_id": a.session_id}),
                   ("py_restore", {"session_id": a.session_id, "checkpoint_id": cid}),
                   ("py_checkpoint", {"session_id": a.session_id}),
                   ("py_inspect_session", {"session_id": a.session_id})):
    refused(b.request("tools/call", {"name": name, "arguments": args}), "B's %s %s" % (name, args))
ok("B's restore, checkpoint and inspect of A's session are refused")

r = tool(b, "py_restore", {"checkpoint_id": cid})
check((sc(r).get("error") or {}).get("type") == "NoCheckpoint", "A's checkpoint id is not in "
      "B's session", r)
check("secret" not in value_of(b.execute("sorted(k for k in dir() if not k.startswith('_'))")),
      "B's namespace has nothing of A's")
r = b.request("tools/call", {"name": "py_restore", "arguments": {
    "checkpoint_id": "../" + os.path.basename(adir) + "/.codeexecd-checkpoints/" + cid}})
check(((r.json or {}).get("error") or {}).get("code") == -32602,
      "a checkpoint id that is a path is refused", r.json)
ok("A's checkpoint id does nothing in B's session; a path is refused")

# 2026-07-28: B names A's execution session.
ma = ModernClient(url, token=ta)
r = ma.call("execute_py_code", {"code": "y = 2"})
esid = sc(r)["execution_session_id"]
mb = ModernClient(url, token=tb)
for name, args in (("execute_py_code", {"code": "y", "execution_session_id": esid}),
                   ("py_restore", {"session_id": esid}),
                   ("py_checkpoint", {"session_id": esid})):
    resp = mb.request("tools/call", {"name": name, "arguments": args})
    j = resp.json or {}
    check("error" in j or (j.get("result") or {}).get("isError") is True,
          "B's %s of A's execution session is refused" % name, j)
check(value_of(ma.call("execute_py_code", {"code": "y", "execution_session_id": esid})) == "2",
      "A's execution session is as it was")
ok("B naming A's execution session is refused")

if uids:
    ck = glob.glob(adir + "/.codeexecd-checkpoints/*.pkl")[0]
    r = b.execute("open(%r, 'rb').read(1)" % ck)
    check((sc(r).get("error") or {}).get("type") == "PermissionError",
          "B's kernel may not read A's checkpoint file (kernel_uid_range)", r)
    ok("B's kernel cannot read A's checkpoint file")


def hibernated(sid):
    for x in control(rundir, "sessions").get("sessions", []):
        if x.get("id") == sid:
            return x.get("hibernated")


check(wait_for(lambda: hibernated(a.session_id) is True, 30, 0.2), "A hibernates")
refused(b.request("tools/call", {"name": "py_restore", "arguments": {"session_id": a.session_id}}),
        "B's restore of hibernated A")
check(hibernated(a.session_id) is True, "B did not wake A")
r = a.execute("secret")
check(value_of(r) == "'a-only'", "A's state is as it was", r)
ok("a hibernated A is not woken by B; A's state survives")
EOF2
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
