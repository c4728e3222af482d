#!/bin/sh
# 480-big-outputs: rich outputs by reference (inline_output_max_bytes,
# structured_binary), on both MCP revisions, with plain kernels and with
# kernels under kernel_uid_range (when root). With inline_output_max_bytes
# 100000: a 200 KB PNG and a 150 KB HTML table come back as resource_link
# items (uri, name, mimeType, size, _meta.sha256) and as {mime_type, uri,
# size_bytes, sha256} in structuredContent.rich_outputs, with no image item
# and no base64 anywhere; resources/read of the uri gives the exact bytes;
# a 1 KB PNG stays inline as before (an image item and its data). With
# structured_binary: reference, the small PNG keeps its image item while
# structuredContent names it by uri, and text stays inline. The official
# TypeScript SDK clients (1.x on 2025-11-25, 2.x on 2026-07-28) take the
# reference form too (their outputSchema check included) and read the PNG
# back.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp

check_round() {
	run_py "$URL" "$1" <<'EOF2'
import base64, hashlib, os, sys
from mcp import Client, ModernClient, check, ok, images_of
from calls import sc

url, mode = sys.argv[1], sys.argv[2]
# The same bytes on both sides: seeded, generated in the kernel.
GEN = ("import random\nrng = random.Random(480)\n"
       "big_png = b'\\x89PNG\\r\\n\\x1a\\n' + rng.randbytes(200_000)\n"
       "small_png = b'\\x89PNG\\r\\n\\x1a\\n' + rng.randbytes(1000)\n"
       "html = '<table>' + ''.join('<tr><td>%d</td></tr>' % i for i in range(7000)) + '</table>'\n")
env = {}
exec(GEN, env)
big_png, small_png, html = env["big_png"], env["small_png"], env["html"]
code = (GEN + "import base64\nfrom IPython.display import display\n"
        "for m, b in (('image/png', big_png), ('image/png', small_png)):\n"
        "    display({m: base64.b64encode(b).decode()}, raw=True)\n"
        "display({'text/html': html}, raw=True)\n")

def read(c, uri):
    if isinstance(c, ModernClient):  # 2026-07-28 mirrors the uri in Mcp-Name
        a = c.request("resources/read", {"uri": uri}, headers={"Mcp-Name": uri})
        check(a.status == 200 and "result" in a.json, "resources/read: HTTP %d" % a.status,
              a.raw[:300])
        r = a.json["result"]["contents"][0]
    else:
        r = c.result("resources/read", {"uri": uri})["contents"][0]
    return base64.b64decode(r["blob"]) if "blob" in r else r["text"].encode()

for name, c in (("2025-11-25", Client(url)), ("2026-07-28", ModernClient(url))):
    if name == "2025-11-25":
        c.initialize()
        r = c.execute(code)
    else:
        r = c.call("execute_py_code", {"code": code})
    check(r.get("isError") is not True, "%s: the code runs" % name, r)
    s = sc(r)
    rich = s["rich_outputs"]
    check([o["mime_type"] for o in rich] == ["image/png", "image/png", "text/html"],
          "%s: three rich outputs, in order" % name, [o.get("mime_type") for o in rich])
    links = [x for x in r["content"] if x.get("type") == "resource_link"]
    check(len(links) == 2 and [x["mimeType"] for x in links] == ["image/png", "text/html"],
          "%s: a resource_link for the big PNG and the big table" % name, links)
    for want, o, link in ((big_png, rich[0], links[0]), (html.encode(), rich[2], links[1])):
        digest = hashlib.sha256(want).hexdigest()
        check("data" not in o and o["size_bytes"] == len(want) and o["sha256"] == digest
              and o["uri"] == link["uri"],
              "%s: %s by reference in structuredContent, size and sha256 right"
              % (name, o["mime_type"]), o)
        check(link["size"] == len(want) and link["_meta"]["sha256"] == digest
              and link["name"].startswith("rich/") and
              link["uri"].startswith("codeexecd://session/%s/outputs/rich/" % s["session_id"]),
              "%s: the link names the file, its size and sha256" % name, link)
        got = read(c, link["uri"])
        check(got == want and hashlib.sha256(got).hexdigest() == digest,
              "%s: resources/read gives the %s's exact bytes" % (name, o["mime_type"]),
              (len(got), len(want)))
    imgs = images_of(r)
    check(len(imgs) == 1 and base64.b64decode(imgs[0]["data"]) == small_png,
          "%s: one image item, the small PNG's" % name, [len(i["data"]) for i in imgs])
    check(len(str(r)) < 60_000, "%s: no big output inline (%d characters)" % (name, len(str(r))))
    if mode == "reference":
        check("data" not in rich[1] and rich[1]["sha256"] ==
              hashlib.sha256(small_png).hexdigest() and read(c, rich[1]["uri"]) == small_png,
              "%s: structured_binary reference: the small PNG by uri in structuredContent"
              % name, rich[1])
    else:
        check(base64.b64decode(rich[1]["data"]) == small_png and "uri" not in rich[1],
              "%s: the small PNG inline in structuredContent, as before" % name, rich[1])
    t = c.execute("1 + 1") if name == "2025-11-25" else c.call(
        "execute_py_code", {"code": "1 + 1", "execution_session_id": s["session_id"]})
    check(sc(t)["rich_outputs"] == [{"mime_type": "text/plain", "data": "2"}],
          "%s: a text value stays inline" % name, sc(t))
    ok("%s (%s): big outputs by reference, small ones inline" % (name, mode))
EOF2
	[ $? -eq 0 ] || fail "the checks failed ($1)"
}

# The official TypeScript SDK client, when its modules are installed.
sdk_round() {
	sdk_client big-outputs-client.mjs "big outputs" || return 0
	ok "official TypeScript SDK client: a big output by reference, read back"
	# The 2.x client, pinned to 2026-07-28, needs Node 22.
	MODERN_DIR=${CODEEXECD_TEST_CLIENT_MODERN_DIR:-$top_srcdir/tests/client-modern}
	SCRIPT=$MODERN_DIR/big-outputs-modern.mjs
	MNODE=$MODERN_DIR/node_modules/node/bin/node
	[ -x "$MNODE" ] || MNODE=$NODE
	major=$("$MNODE" -p 'process.versions.node.split(".")[0]')
	if [ ! -d "$MODERN_DIR/node_modules/@modelcontextprotocol/client" ] || [ "$major" -lt 22 ]
	then
		echo "# no $MODERN_DIR/node_modules or no Node.js >= 22: the 2.x client part is not run"
		return 0
	fi
	"$MNODE" "$SCRIPT" "$URL" py || fail "the 2.x big outputs client failed (status $?)"
	ok "official TypeScript client 2.x, 2026-07-28: a big output by reference, read back"
}

round() {
	PORT=$(free_port)
	CFG_EXTRA="inline_output_max_bytes: 100000
$1"
	write_config
	start_daemon
	wait_ready
	check_round "$2"
	[ "$2" = inline ] && sdk_round
	stop_daemon
}

round "" inline
round "structured_binary: reference" reference
if [ "$(id -u)" = 0 ]; then
	worker_for_other_uids
	chmod 711 "$TMPD"
	round 'kernel_uid_range: "63440-63442"' uid-range
else
	echo "# kernel_uid_range round skipped: needs root"
fi
