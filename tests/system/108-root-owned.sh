#!/bin/sh
# 108-root-owned: what an operator keeps root's works. Every secret file
# root:root 0600 (auth.tokens_file, azure_ai_search.api_key_file, a
# publisher's sas_token_file and account_key_file): -n passes, the daemon
# serves, a token of the file is accepted, and SIGHUP rereads the tokens
# file edited in place (the parent no longer root). A local publisher's
# base_dir missing under a root-owned 0755 directory is made at start-up,
# 0750 and the daemon user's, and the first send lands there. (The same
# secret files loose or a kernel's are refused: 109-startup-errors.)
. "$(dirname "$0")/lib.sh"

require_cmd curl sha256sum
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: root-owned files"
setup_tmp
PORT=$(free_port)
make_tokens 600
chown root:root "$TMPD/tokens"
for f in key sas ak; do
	printf 'c2VjcmV0IGtleSBieXRlcw==\n' >"$TMPD/$f"
	chmod 600 "$TMPD/$f"
	chown root:root "$TMPD/$f"
done
mkdir -m 755 "$TMPD/root"
CFG_EXTRA="auth:
  mode: tokens
  tokens_file: $TMPD/tokens
  resource: http://127.0.0.1:$PORT/mcp
tool_search_backend: azure_ai_search
azure_ai_search:
  endpoint: https://x.search.windows.net
  index: tools
  api_key_file: $TMPD/key
publishers:
  - name: here
    type: local
    base_dir: $TMPD/root/pub/out
    prefix: \"{session}\"
  - name: sas
    type: azure_blob
    account_url: https://acct.blob.core.windows.net
    container: c
    sas_token_file: $TMPD/sas
  - name: key
    type: azure_blob
    account_url: https://acct.blob.core.windows.net
    container: c
    account_key_file: $TMPD/ak"
write_config
out=$("$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" 2>&1) || fail "codeexecd -n: $out"
ok "codeexecd -n passes every secret file root:root 0600"
[ ! -e "$TMPD/root/pub" ] || fail "codeexecd -n made base_dir"
start_daemon
wait_ready
ok "the daemon serves with every secret file root:root 0600"
owner=$(stat -c '%U %a' "$TMPD/root/pub/out")
[ "$owner" = "$TEST_USER 750" ] || fail "base_dir is $owner, not $TEST_USER 750"
ok "base_dir made at start-up under root's directory: $owner"

run_py "$URL" "$TOKEN_A" "$TOKEN_B" "$DAEMON_PID" "$TMPD/tokens" "$TMPD/root/pub/out" <<'PY'
import os, signal, sys, time
from mcp import Client, check, ok
from calls import tool, sc
url, ta, tb, pid, tokens, out = sys.argv[1:7]
a = Client(url, token=ta)
a.initialize()
b = Client(url, token=tb)
b.initialize()
check(b.request("tools/list").status == 200, "B's token of the root-owned file is accepted")
a.execute("import os\nopen(os.path.join(os.environ['CODEEXECD_OUTPUT_DIR'], 'made.txt'), 'w')"
          ".write('hello')")
r = tool(a, "py_send", {"path": "made.txt", "publisher": "here"})
check(r.get("isError") is not True, "the first send to the made base_dir succeeds", r)
path = sc(r)["uri"][len("file://"):]
check(path.startswith(out + "/"), "the file is under base_dir", path)
check(open(path).read() == "hello", "the file is under base_dir", path)
ok("the first send lands in the base_dir made at start-up")
# Edited in place, as root: the parent rereads the file it opened.
lines = open(tokens).read().splitlines()
open(tokens, "w").write("\n".join(l for l in lines if not l.startswith("agent-b:")) + "\n")
os.kill(int(pid), signal.SIGHUP)
deadline = time.time() + 20
while b.request("tools/list").status != 401:
    check(time.time() < deadline, "B's token refused within 20 s of SIGHUP")
    time.sleep(0.1)
check(a.request("tools/list").status == 200, "A's token still works after the reload")
ok("SIGHUP rereads the root:root 0600 tokens file")
PY
[ $? -eq 0 ] || fail "the HTTP checks failed"
grep -q 'starting a new front' "$LOG" && fail "a front was restarted"
stop_daemon
