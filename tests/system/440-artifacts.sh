#!/bin/sh
# 440-artifacts: outputs/, artifacts in results, NAME_send with the local
# publisher and its refusals, session files as MCP resources.
# Every session has outputs/ (its path in $CODEEXECD_OUTPUT_DIR); each result
# lists the files the call created or changed there. py_send copies a PNG
# and a CSV under base_dir (bytes and sha256 checked) and refuses "..",
# absolute paths, links (one swapped in while sends run), FIFOs, devices
# and files over max_bytes. resources/list pages with nextCursor,
# resources/read gives text or base64, and another session's file or a path
# outside outputs/ fails as a missing one. Then the official TypeScript SDK
# client lists and reads a session file.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
mkdir -m 777 "$TMPD/pub"
CFG_EXTRA="publishers:
  - name: local
    type: local
    base_dir: $TMPD/pub/published
    max_bytes: 100000
  - name: tiny
    type: local
    base_dir: $TMPD/pub/tiny
    prefix: \"{date}\"
    max_bytes: 1000"
write_config
start_daemon
wait_ready

run_py "$URL" "$TMPD/pub" "$(id -u)" <<'EOF2'
import base64, hashlib, os, stat, sys, threading, time
from mcp import Client, check, ok, value_of
from calls import tool, sc

url, pub, uid = sys.argv[1], sys.argv[2], int(sys.argv[3])
a = Client(url)
init = a.initialize()
check("resources" in init.get("capabilities", {}), "initialize declares resources", init)
names = [t["name"] for t in a.result("tools/list")["tools"]]
check("py_send" in names, "tools/list has py_send", names)

PNG = (b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
CSV = b"x,y\n1,2\n3,4\n"
r = a.execute("import os\nd = os.environ['CODEEXECD_OUTPUT_DIR']\n"
              "open(os.path.join(d, 'plot.png'), 'wb').write(%r)\n"
              "open(os.path.join(d, 'data.csv'), 'wb').write(%r)\n"
              "open('secret.txt', 'w').write('not for sending')\n"
              "(d, os.getcwd())" % (PNG, CSV))
outdir, cwd = eval(value_of(r))
check(outdir == os.path.join(cwd, "outputs"), "CODEEXECD_OUTPUT_DIR is cwd/outputs", outdir)
arts = {x["name"]: x for x in sc(r).get("artifacts", [])}
check(set(arts) == {"plot.png", "data.csv"}, "the result lists the two new files", sc(r))
check(arts["plot.png"]["mime_type"] == "image/png" and arts["plot.png"]["size_bytes"] == len(PNG),
      "plot.png: image/png and its size", arts)
check(arts["data.csv"]["mime_type"] == "text/csv" and arts["data.csv"]["modified_at"].endswith("Z"),
      "data.csv: text/csv, modified_at in UTC", arts)
ok("artifacts: %s" % sorted(arts))

r = a.execute("open(os.path.join(d, 'data.csv'), 'ab').write(b'5,6\\n')")
arts = [x["name"] for x in sc(r).get("artifacts", [])]
check(arts == ["data.csv"], "a later call lists only the file it changed", sc(r))
r = a.execute("1 + 1")
check("artifacts" not in sc(r), "a call that changes nothing lists no artifacts", sc(r))
CSV += b"5,6\n"
ok("artifacts list only what each call created or changed")

def send(path, **kw):
    args = {"path": path}
    args.update(kw)
    return tool(a, "py_send", args)

for name, data, mime in (("plot.png", PNG, "image/png"), ("data.csv", CSV, "text/csv")):
    r = send(name)
    s = sc(r)
    check(r.get("isError") is not True, "send %s succeeds" % name, r)
    check(s["publisher"] == "local" and s["size_bytes"] == len(data) and s["mime_type"] == mime,
          "send %s: publisher, size and type" % name, s)
    check(s["sha256"] == hashlib.sha256(data).hexdigest(), "send %s: sha256" % name, s)
    want = os.path.join(pub, "published", "anonymous", a.session_id, name)
    check(s["uri"] == "file://" + want, "send %s: the uri names the copy" % name, s)
    check(open(want, "rb").read() == data, "send %s: the copy has the bytes" % name)
    links = [c for c in r["content"] if c.get("type") == "resource_link"]
    check(len(links) == 1 and links[0]["uri"] == s["uri"] and links[0]["size"] == len(data),
          "send %s: a resource_link item" % name, r["content"])
mode = stat.S_IMODE(os.stat(os.path.join(pub, "published")).st_mode)
check(mode == 0o750, "base_dir is made 0750", oct(mode))
r = send("data.csv", publisher="tiny", name="renamed.csv", content_type="text/plain")
s = sc(r)
check(r.get("isError") is not True and s["uri"].endswith("/renamed.csv") and
      s["mime_type"] == "text/plain" and "/tiny/" + time.strftime("%Y-%m-%d", time.gmtime()) in s["uri"],
      "publisher, name, content_type and the {date} prefix", s)
ok("py_send copies a PNG and a CSV, bytes and sha256 checked")

# The refusals. The kernel makes the traps; root adds a device.
a.execute("import os, socket\n"
          "os.symlink('../secret.txt', os.path.join(d, 'link'))\n"
          "os.symlink('/etc/passwd', os.path.join(d, 'abs_link'))\n"
          "os.symlink('..', os.path.join(d, 'up'))\n"
          "os.mkfifo(os.path.join(d, 'fifo'))\n"
          "os.mkdir(os.path.join(d, 'sub'))\n"
          "open(os.path.join(d, 'big.bin'), 'wb').write(b'x' * 2000)\n")
refused = [("../secret.txt", "Refused"), ("sub/../../secret.txt", "Refused"),
           ("/etc/passwd", "Refused"), (os.path.join(outdir, "data.csv"), "Refused"),
           ("link", "Refused"), ("abs_link", "Refused"), ("up/secret.txt", "Refused"),
           ("fifo", "Refused"), ("sub", "Refused"), ("missing.txt", "Refused"), ("", "Refused")]
if uid == 0:
    os.mknod(os.path.join(outdir, "dev"), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    refused.append(("dev", "Refused"))
for path, kind in refused:
    r = send(path)
    e = sc(r).get("error") or {}
    check(r.get("isError") is True and e.get("type") == kind,
          "send %r is refused (%s)" % (path, kind), r)
    check("not for sending" not in str(r), "send %r leaks nothing" % path)
r = send("big.bin", publisher="tiny")
e = sc(r).get("error") or {}
check(r.get("isError") is True and e.get("type") == "TooLarge" and "max_bytes" in e.get("message", ""),
      "a file over max_bytes is refused, naming max_bytes", r)
r = send("data.csv", publisher="nope")
check(r.get("isError") is True and sc(r)["error"]["type"] == "UnknownPublisher" and
      "local, tiny" in sc(r)["error"]["message"],
      "an unknown publisher is refused, naming the configured ones", r)
ok("refused: %s, and over max_bytes" % ", ".join(p or "''" for p, _ in refused))

# A link swapped in while sends run: each send is the file or a refusal,
# never the link's target.
b = Client(url)
b.initialize()
a.execute("import threading, os\nstop = False\n"
          "def swap():\n"
          "    i = 0\n"
          "    while not stop:\n"
          "        t = os.path.join(d, '.t%d' % (i % 2)); i += 1\n"
          "        if i % 2: os.symlink('../secret.txt', t)\n"
          "        else: open(t, 'w').write('SAFE')\n"
          "        os.replace(t, os.path.join(d, 'race'))\n"
          "threading.Thread(target=swap, daemon=True).start()\n")
safe = hashlib.sha256(b"SAFE").hexdigest()
seen = {"ok": 0, "refused": 0}
for i in range(40):
    r = send("race")
    if r.get("isError"):
        check(sc(r)["error"]["type"] == "Refused", "race: a failure is a refusal", r)
        seen["refused"] += 1
    else:
        check(sc(r)["sha256"] == safe, "race: a send that succeeds has the file's bytes", r)
        seen["ok"] += 1
a.execute("stop = True")
check(seen["ok"] + seen["refused"] == 40, "race: every send answered", seen)
ok("a link swapped in during sends is never followed: %s" % seen)

# Resources.
a.execute("for i in range(150):\n"
          "    os.makedirs(os.path.join(d, 'many'), exist_ok=True)\n"
          "    open(os.path.join(d, 'many', 'f%03d.txt' % i), 'w').write(str(i))\n")
got, cursor, pages = [], None, 0
while True:
    res = a.result("resources/list", {"cursor": cursor} if cursor else {})
    got += res["resources"]
    pages += 1
    cursor = res.get("nextCursor")
    if not cursor:
        break
names = [x["name"] for x in got]
check(pages >= 2 and len(names) == len(set(names)), "resources/list pages with nextCursor", pages)
check({"plot.png", "data.csv", "many/f000.txt", "many/f149.txt", "big.bin"} <= set(names),
      "resources/list has the session's files", names[:10])
check("link" not in names and "fifo" not in names, "links and FIFOs are not resources", names)
t = a.result("resources/templates/list")
check(t["resourceTemplates"][0]["uriTemplate"].endswith("{session_id}/outputs/{path}"),
      "resources/templates/list gives the template", t)
uri = {x["name"]: x["uri"] for x in got}
c = a.result("resources/read", {"uri": uri["data.csv"]})["contents"][0]
check(c.get("text") == CSV.decode() and c["mimeType"] == "text/csv", "read a CSV as text", c)
c = a.result("resources/read", {"uri": uri["plot.png"]})["contents"][0]
check(base64.b64decode(c.get("blob", "")) == PNG and c["mimeType"] == "image/png",
      "read a PNG as base64", c)
a.execute("open(os.path.join(d, 'my notes.txt'), 'w').write('spaced')")
def all_resources(c):
    got, cursor = [], None
    while True:
        res = c.result("resources/list", {"cursor": cursor} if cursor else {})
        got += res["resources"]
        cursor = res.get("nextCursor")
        if not cursor:
            return got
sp = [x for x in all_resources(a) if x["name"] == "my notes.txt"]
check(len(sp) == 1 and sp[0]["uri"].endswith("/outputs/my%20notes.txt"),
      "a name with a space is percent-encoded in its URI", sp)
c = a.result("resources/read", {"uri": sp[0]["uri"]})["contents"][0]
check(c.get("text") == "spaced", "and read back through it", c)
base = uri["data.csv"][:-len("data.csv")]
for bad in (base + "../secret.txt", base + "link", base + "missing", base + "/etc/passwd",
            base + "%2E%2E/secret.txt", base + "sub%2F..%2F..%2Fsecret.txt", base + "a%00b",
            "file:///etc/passwd", base.replace(a.session_id, "0" * 32) + "data.csv"):
    r = a.request("resources/read", {"uri": bad})
    e = (r.json or {}).get("error") or {}
    check(e.get("code") == -32002 and e.get("message") == "Resource not found",
          "read %s fails as missing" % bad, r.json)
r = b.request("resources/read", {"uri": uri["data.csv"]})
e = (r.json or {}).get("error") or {}
check(e.get("code") == -32002, "another session's file fails as missing", r.json)
check(b.result("resources/list")["resources"] == [], "another session lists none of them")
ok("resources: list (%d pages), templates, read, refusals" % pages)
EOF2
[ $? -eq 0 ] || fail "the artifacts checks failed"

# The official TypeScript SDK client, when its modules are installed.
if sdk_client resources-client.mjs resources; then
	ok "official TypeScript SDK client: lists and reads a session's output file"
fi
stop_daemon
grep -q "published data.csv with local as file://" "$LOG" || fail "the log names what was published"
ok "the log names what was published where"
