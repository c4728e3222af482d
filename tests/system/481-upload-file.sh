#!/bin/sh
# 481-upload-file: py_upload_file, on both MCP revisions, with plain
# kernels and with kernels under kernel_uid_range (when root), and
# max_upload_bytes 1000. A file given as base64 and as data: URIs (base64
# and percent-encoded) lands below the session's working directory with
# its size and sha256, the kernel's own (uid, mode masked to 0755); a
# second upload replaces it atomically (a handle the kernel holds still
# reads the old bytes, and no temporary file is left); traversal, absolute
# paths, a link (as the name or on the way), a FIFO, more than
# max_upload_bytes, and both or neither of content and data_uri are
# refused with their exact errors. The official TypeScript SDK client
# uploads a data: URI the kernel reads. With files_extension, data_uri is
# an x-mcp-file input and a named data: URI names the file.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp

check_round() {
	run_py "$URL" "$1" <<'EOF2'
import base64, hashlib, sys
from mcp import Client, ModernClient, check, ok, value_of
from calls import sc

url, mode = sys.argv[1], sys.argv[2]

for name, c in (("2025-11-25", Client(url)), ("2026-07-28", ModernClient(url))):
    if name == "2025-11-25":
        c.initialize()
        run = lambda code: c.execute(code)
        sid = None
    else:
        first = c.call("execute_py_code", {"code": "1"})
        sid = sc(first)["session_id"]
        run = lambda code: c.call("execute_py_code", {"code": code, "execution_session_id": sid})

    def upload(args):
        if sid:
            args = dict(args, execution_session_id=sid)
        return c.result("tools/call", {"name": "py_upload_file", "arguments": args})

    def refused(args, want):
        r = upload(args)
        check(r.get("isError") is True and sc(r)["error"]["message"] == want,
              "%s: %s refused: %s" % (name, args.get("path"), want), r)

    def bad_params(args, want):
        m = {"jsonrpc": "2.0", "id": 99, "method": "tools/call",
             "params": {"name": "py_upload_file",
                        "arguments": dict(args, **({"execution_session_id": sid} if sid else {}))}}
        r = c.request("tools/call", m["params"])
        e = (r.json or {}).get("error") or {}
        res = (r.json or {}).get("result") or {}
        # 2026-07-28 answers bad arguments as a tool's error, 2025-11-25 as -32602.
        got = (res.get("isError") is True and want in str(res.get("content"))) if sid else \
            (e.get("code") == -32602 and want in e.get("message", ""))
        check(got, "%s: invalid arguments: %s" % (name, want), r.json)

    data = b"hello\x00\xffworld\n"
    r = upload({"path": "in.bin", "content": base64.b64encode(data).decode()})
    s = sc(r)
    check(r.get("isError") is not True and s["size_bytes"] == len(data) and
          s["sha256"] == hashlib.sha256(data).hexdigest() and s["path"] == "in.bin" and
          s["mode"] == "0644", "%s: base64 upload: size and sha256" % name, r)
    v = value_of(run("import os, stat\nf = open('in.bin', 'rb')\nst = os.stat('in.bin')\n"
                     "(f.read() == %r, oct(stat.S_IMODE(st.st_mode)), st.st_uid == os.getuid())"
                     % data))
    check(v == "(True, '0o644', True)", "%s: the kernel sees the file, 0644, its own" % name, v)
    new = b"second version"
    r = upload({"path": "in.bin", "content": base64.b64encode(new).decode(), "mode": "4775"})
    check(sc(r).get("mode") == "0755", "%s: mode 4775 masked to 0755" % name, r)
    v = value_of(run("f.seek(0)\nst = os.stat('in.bin')\n(f.read(), open('in.bin', 'rb').read(), "
                     "oct(stat.S_IMODE(st.st_mode)), "
                     "[n for n in os.listdir('.') if 'upload' in n])"))
    check(v == "(%r, %r, '0o755', [])" % (data, new),
          "%s: replaced atomically (the old handle reads the old bytes), no temporary left"
          % name, v)
    csv = b"a,b\n1,2\n"
    r = upload({"path": "outputs/t.csv", "data_uri": "data:text/csv,a%2Cb%0A1%2C2%0A"})
    check(sc(r).get("sha256") == hashlib.sha256(csv).hexdigest(),
          "%s: a percent-encoded data: URI" % name, r)
    r = upload({"path": "outputs/t2.csv",
                "data_uri": "data:text/csv;base64," + base64.b64encode(csv).decode()})
    check(sc(r).get("sha256") == hashlib.sha256(csv).hexdigest(),
          "%s: a base64 data: URI" % name, r)
    v = value_of(run("open('outputs/t.csv').read() + open('outputs/t2.csv').read()"))
    check(v == repr(csv.decode() * 2), "%s: the kernel reads both" % name, v)
    ok("%s (%s): uploads written, atomic, the kernel's" % (name, mode))

    run("import os\nos.symlink('/etc/passwd', 'link.txt')\nos.symlink('/tmp', 'ldir')\n"
        "os.mkfifo('fifo')")
    x = base64.b64encode(b"x").decode()
    rel = ("not a relative path below the working directory "
           "(absolute, empty, \".\" or \"..\")")
    refused({"path": "../x", "content": x}, "../x: refused: " + rel)
    refused({"path": "a/../../x", "content": x}, "a/../../x: refused: " + rel)
    refused({"path": "/etc/x", "content": x}, "/etc/x: refused: " + rel)
    refused({"path": "link.txt", "content": x}, "link.txt: refused: link.txt is a symbolic link")
    refused({"path": "ldir/upload-481-probe", "content": x},
            "ldir/upload-481-probe: refused: ldir is not below a directory (a component is "
            "a link or a file)")
    refused({"path": "fifo", "content": x},
            "fifo: refused: not a regular file (a directory, FIFO, socket or device)")
    refused({"path": "big", "content": base64.b64encode(b"y" * 1001).decode()},
            "big: 1001 bytes exceed max_upload_bytes (1000)")
    v = value_of(run("(os.readlink('link.txt'), os.path.exists('big'), "
                     "os.path.exists('/tmp/upload-481-probe'))"))
    check(v == "('/etc/passwd', False, False)",
          "%s: nothing written by the refused ones" % name, v)
    bad_params({"path": "y", "content": x, "data_uri": "data:,x"},
               "give exactly one of content and data_uri")
    bad_params({"path": "y"}, "give exactly one of content and data_uri")
    bad_params({"path": "y", "content": "not base64!"}, "content must be base64")
    bad_params({"path": "y", "data_uri": "http://example.com/x"}, "data_uri must start with data:")
    ok("%s (%s): traversal, absolute, links, FIFO, size and arguments refused" % (name, mode))
EOF2
	[ $? -eq 0 ] || fail "the checks failed ($1)"
}

# The official TypeScript SDK client, when its modules are installed.
sdk_round() {
	sdk_client upload-client.mjs upload || return 0
	ok "official TypeScript SDK client: uploads a data: URI the kernel reads"
}

round() {
	PORT=$(free_port)
	CFG_EXTRA="max_upload_bytes: 1000
$1"
	write_config
	start_daemon
	wait_ready
	check_round "$2"
	[ "$2" = plain ] && sdk_round
	stop_daemon
}

# files_extension: data_uri is declared a file input (x-mcp-file, with the
# largest size), path is no longer required, and a named data: URI
# (;name=) names the file; without a name the call is refused.
ext_round() {
	PORT=$(free_port)
	CFG_EXTRA="max_upload_bytes: 1000
files_extension: true"
	write_config
	start_daemon
	wait_ready
	run_py "$URL" <<'EOF2'
import sys
from mcp import Client, check, ok, value_of
from calls import sc

c = Client(sys.argv[1])
c.initialize()
tools = c.result("tools/list", {})["tools"]
t = [x for x in tools if x["name"] == "py_upload_file"][0]
props = t["inputSchema"]["properties"]
check(props["data_uri"].get("x-mcp-file") == {"maxSize": 1000} and
      "path" not in t["inputSchema"].get("required", []),
      "data_uri is an x-mcp-file input and path is optional", t["inputSchema"])
r = c.result("tools/call", {"name": "py_upload_file", "arguments": {
    "data_uri": "data:text/csv;name=in%20put.csv;base64,YSxiCjEsMgo="}})
check(sc(r).get("path") == "in put.csv" and sc(r).get("size_bytes") == 8,
      "a named data: URI names the file", r)
check(value_of(c.execute("open('in put.csv').read()")) == repr("a,b\n1,2\n"),
      "the kernel reads it")
r = c.request("tools/call", {"name": "py_upload_file",
                             "arguments": {"data_uri": "data:,x"}}).json
check((r.get("error") or {}).get("message", "").endswith(
      "path must be a string, or data_uri name the file (;name=)"), "no name: refused", r)
r = c.result("tools/call", {"name": "py_upload_file", "arguments": {
    "data_uri": "data:text/plain;name=..%2F..%2Fescape;base64,eA=="}})
check(r.get("isError") is True and not sc(r).get("path"), "a name with .. is refused", r)
ok("files_extension: x-mcp-file declared, a named data: URI names the file")
EOF2
	[ $? -eq 0 ] || fail "the files_extension checks failed"
	stop_daemon
}

round "" plain
ext_round
if [ "$(id -u)" = 0 ]; then
	worker_for_other_uids
	chmod 711 "$TMPD"
	round 'kernel_uid_range: "63450-63452"' uid-range
else
	echo "# kernel_uid_range round skipped: needs root"
fi
