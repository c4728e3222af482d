#!/bin/sh
# 310-output-limits: output limits without loss through the
# real daemon: a 10 MB print comes back cut to the limit with a marker that
# says how much was cut and names a file under codeexecd-output/ in the
# session's working directory that holds all of it; a large image is saved
# there as PNG and replaced by a note naming the file.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
start_ready_daemon

run_py "$URL" "$TMPD/state" <<'EOF2'
import glob, os, re, sys
from mcp import Client, check, ok

url, state = sys.argv[1], sys.argv[2]
a = Client(url)
a.initialize()
r = a.execute("print('x' * 10_000_000)", http_timeout=300)
out = r["structuredContent"]["stdout"]
m = re.search(r"(\d+) more characters were cut; the whole stdout is in (codeexecd-output/\S+)", out)
check(m is not None and len(out) < 60000, "stdout is cut with a marker naming the file", out[-400:])
files = glob.glob(os.path.join(state, "sessions", "*", m.group(2)))
check(len(files) == 1, "the named file is in the session's working directory", files)
with open(files[0]) as f:
    whole = f.read()
check(whole == "x" * 10_000_000 + "\n", "the file holds the whole stdout", len(whole))
ok("10 MB print: %d characters kept, %s more cut, all of it in %s" %
   (len(out) - len(out[out.index("\n[codeexecd]"):]), m.group(1), m.group(2)))

code = ("from IPython.display import Image, display\n"
        "display(Image(data=b'\\x89PNG\\r\\n\\x1a\\n' + bytes(range(256)) * 30000, format='png'))")
r = a.execute(code, http_timeout=300)
notes = [o["data"] for o in r["structuredContent"]["rich_outputs"]
         if o["mime_type"] == "text/plain" and "rich output limit" in o["data"]]
check(len(notes) == 1, "a 7.7 MB image is replaced by a note", r["structuredContent"]["rich_outputs"])
name = notes[0].rsplit("saved to ", 1)[1]
files = glob.glob(os.path.join(state, "sessions", "*", name))
check(len(files) == 1 and name.endswith(".png"), "the note names a .png in the working directory", notes)
with open(files[0], "rb") as f:
    check(f.read() == b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 30000, "the file holds the decoded image")
ok("7.7 MB image saved as %s" % name)
EOF2
