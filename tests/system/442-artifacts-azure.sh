#!/bin/sh
# 442-artifacts-azure: the azure_blob publisher against Azurite.
# Azurite (tests/azurite, npm) listens on a loopback port; a tiny loopback
# proxy in front of it answers the first PUT with 503 ServerBusy. py_send
# uploads a small file (one Put Blob) and a 9 MB one (Put Block x3, Put Block
# List) with SharedKey, through the proxy: the 503 is retried. A SAS token
# uploads too. Each blob's bytes, content type and MD5 are read back through
# Azurite's REST API; a wrong key fails with the service's own message.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
AZ_DIR=${CODEEXECD_TEST_AZURITE_DIR:-$top_srcdir/tests/azurite}
AZURITE=$AZ_DIR/node_modules/.bin/azurite-blob
[ -x "$AZURITE" ] || AZURITE=$(command -v azurite-blob || true)
[ -n "$AZURITE" ] && [ -x "$AZURITE" ] ||
	skip "no azurite-blob (run: cd tests/azurite && npm ci)"
setup_tmp
PORT=$(free_port)
AZPORT=$(free_port)
mkdir "$TMPD/azurite"
"$AZURITE" --blobHost 127.0.0.1 --blobPort "$AZPORT" --location "$TMPD/azurite" --silent \
	--skipApiVersionCheck >"$TMPD/azurite.log" 2>&1 &
AZPID=$!
trap 'st=$?; set +e; kill $AZPID 2>/dev/null; (exit $st); cleanup' EXIT
poll_until 60 curl -s -o /dev/null "http://127.0.0.1:$AZPORT/" ||
	fail "azurite did not answer on port $AZPORT"

# The container, a SAS token, the proxy; the daemon's keys in files.
run_py "$AZPORT" "$TMPD" <<'EOF2' || fail "cannot prepare azurite"
import sys
from azure_blob import request, account_sas, KEY
port, tmp = int(sys.argv[1]), sys.argv[2]
st, _, body = request(port, "PUT", "/art", {"restype": "container"})
assert st == 201, (st, body)
open(tmp + "/sas", "w").write("?" + account_sas() + "\n")
open(tmp + "/key", "w").write(KEY + "\n")
open(tmp + "/bad", "w").write("d3Jvbmcga2V5IG9mIHRoZSByaWdodCBsZW5ndGggZm9yIGEgdGVzdA==\n")
EOF2
chmod 600 "$TMPD/sas" "$TMPD/key" "$TMPD/bad"

PROXY_PORT_FILE=$TMPD/proxy.port
PYTHONPATH=$sysdir "$PY" -c "
import sys, time
from azure_blob import start_proxy, Proxy
p = start_proxy($AZPORT)
open('$PROXY_PORT_FILE.tmp', 'w').write(str(p))
import os; os.rename('$PROXY_PORT_FILE.tmp', '$PROXY_PORT_FILE')
while True:
    time.sleep(0.2)
    open('$TMPD/proxy.stats.tmp', 'w').write('%d %d' % (Proxy.failed, Proxy.puts))
    os.rename('$TMPD/proxy.stats.tmp', '$TMPD/proxy.stats')
" &
PROXYPID=$!
trap 'st=$?; set +e; kill $AZPID $PROXYPID 2>/dev/null; (exit $st); cleanup' EXIT
wait_for 20 "the proxy starts" test -s "$PROXY_PORT_FILE"
PPORT=$(cat "$PROXY_PORT_FILE")

CFG_EXTRA="publishers:
  - name: blob
    type: azure_blob
    account_url: http://127.0.0.1:$PPORT/devstoreaccount1
    container: art
    account_key_file: $TMPD/key
  - name: sas
    type: azure_blob
    account_url: http://127.0.0.1:$AZPORT/devstoreaccount1
    container: art
    prefix: \"sas/{session}\"
    sas_token_file: $TMPD/sas
  - name: wrong
    type: azure_blob
    account_url: http://127.0.0.1:$AZPORT/devstoreaccount1
    container: art
    account_key_file: $TMPD/bad"
PORT=$PORT write_config
start_daemon
wait_ready

run_py "$URL" "$AZPORT" "$TMPD/proxy.stats" <<'EOF2'
import base64, hashlib, os, sys, time
from mcp import Client, check, ok
from calls import tool, sc
from azure_blob import request

url, azport, stats = sys.argv[1], int(sys.argv[2]), sys.argv[3]
a = Client(url)
a.initialize()
small = b"x,y\n" + b"1,2\n" * 1000
big = bytes(range(256)) * (9 * 1024 * 1024 // 256 + 77)
a.execute("import os\nd = os.environ['CODEEXECD_OUTPUT_DIR']\n"
          "open(os.path.join(d, 'small.csv'), 'wb').write(%r)\n"
          "open(os.path.join(d, 'big.bin'), 'wb').write(bytes(range(256)) * %d)\n"
          % (small, len(big) // 256))

def blob(path):
    st, h, body = request(azport, "GET", path)
    check(st == 200, "GET %s: 200" % path, (st, body[:300]))
    return h, body

for name, data, ctype, pub in (("small.csv", small, "text/csv", "blob"),
                               ("big.bin", big, "application/octet-stream", "blob"),
                               ("small.csv", small, "text/csv", "sas")):
    r = tool(a, "py_send", {"path": name, "publisher": pub})
    s = sc(r)
    check(r.get("isError") is not True, "%s: send %s succeeds" % (pub, name), r)
    check(s["sha256"] == hashlib.sha256(data).hexdigest() and s["size_bytes"] == len(data),
          "%s: send %s: sha256 and size" % (pub, name), s)
    prefix = ("sas/" if pub == "sas" else "anonymous/") + a.session_id
    path = "/art/%s/%s" % (prefix, name)
    check(s["uri"] == "http://127.0.0.1:%d/devstoreaccount1%s" % (
          azport if pub == "sas" else int(s["uri"].split(":")[2].split("/")[0]), path),
          "%s: the uri names the blob" % pub, s)
    check("sig=" not in s["uri"], "%s: the uri holds no SAS signature" % pub, s)
    h, body = blob(path)
    check(body == data, "%s: %s read back has the bytes" % (pub, name), len(body))
    check(h.get("content-type") == ctype, "%s: %s has content type %s" % (pub, name, ctype), h)
    check(h.get("content-md5") == base64.b64encode(hashlib.md5(data).digest()).decode(),
          "%s: %s has its Content-MD5" % (pub, name), h)
    ok("%s: %s uploaded (%d bytes), read back with its type and MD5" % (pub, name, len(data)))

# A name with a space: escaped in the URL, and signed as escaped.
a.execute("open(os.path.join(d, 'my data.csv'), 'wb').write(b'q\\n')")
r = tool(a, "py_send", {"path": "my data.csv", "publisher": "blob"})
check(r.get("isError") is not True and sc(r)["uri"].endswith("/my%20data.csv"),
      "a name with a space is sent, escaped in its uri", r)
h, body = blob("/art/anonymous/%s/my%%20data.csv" % a.session_id)
check(body == b"q\n", "and read back", body)
ok("a name with a space: signed and uploaded")

st, _, body = request(azport, "GET", "/art/anonymous/%s/big.bin" % a.session_id,
                      {"comp": "blocklist"})
check(st == 200 and body.count(b"<Block>") == 3, "big.bin went in 3 blocks", body[:400])
# The proxy writes its counts every 0.2 s: wait for the last PUTs to show.
for _ in range(50):
    failed, puts = map(int, open(stats).read().split())
    if puts >= 7:
        break
    time.sleep(0.1)
check(failed == 1 and puts >= 6, "the proxy's 503 was retried", (failed, puts))
ok("a multi-block upload (Put Block x3, Put Block List); one 503 retried")

r = tool(a, "py_send", {"path": "small.csv", "publisher": "wrong"})
e = sc(r).get("error") or {}
m = e.get("message", "")
# Azure says AuthenticationFailed, Azurite AuthorizationFailure; both say why.
check(r.get("isError") is True and e.get("type") == "PublishFailed" and
      ("HTTP 403 Authenti" in m or "HTTP 403 Authori" in m) and
      "Server failed to authenticate" in m,
      "a wrong key fails with the service's message", r)
ok("a wrong key: %s" % e["message"][:160])
EOF2
[ $? -eq 0 ] || fail "the azure checks failed"
