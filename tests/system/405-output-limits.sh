#!/bin/sh
# 405-output-limits: output limits without loss, with the
# limits set in the config: output_truncation_threshold 1000 and
# rich_output_max_bytes 100000. A 10 MB print comes back cut to the limit
# with a marker that says how much was cut and names a file under
# codeexecd-output/ in the session's working directory holding all 10 MB;
# progress notifications of an SSE call are bounded too; stderr likewise,
# separately; output under the limit is untouched; a 300 KB image is
# replaced by a note naming the saved file, a small one passes;
# inspect_session lists the saved files; the man page names every limit and
# execution-control setting.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
CFG_EXTRA='output_truncation_threshold: 1000
rich_output_max_bytes: 100000'
write_config
start_daemon
wait_ready

# Every limit and setting tested here is in the man page.
for k in output_truncation_threshold rich_output_max_bytes default_timeout max_timeout \
	execution_mode promotion_threshold_s parallel_max_concurrency progress_interval_s \
	job_retention_s session_idle_timeout pool.max_sessions; do
	grep -q "^\.It Ic $k " "$top_srcdir/man/codeexecd.yaml.5" ||
		fail "man/codeexecd.yaml.5 does not document $k"
done
ok "the man page documents every execution-control setting and limit"

run_py "$URL" <<'EOF2'
import os, re, sys, time
from mcp import Client, check, ok, text_of, value_of, images_of
from calls import tool, sc

a = Client(sys.argv[1])
a.initialize()
cwd = value_of(a.execute("import os; os.getcwd()")).strip("'")
check(os.path.isdir(cwd), "the session's working directory exists", cwd)

MARK = r"(\d+) more characters were cut; the whole %s is in (codeexecd-output/\S+)"

t0 = time.time()
r = a.execute("print('x' * 10_000_000)", http_timeout=120)
took = time.time() - t0
s = sc(r)
out = s["stdout"]
m = re.search(MARK % "stdout", out)
check(m is not None, "10 MB stdout: a marker saying how much was cut and naming the file", out[-500:])
kept = out[:out.index("\n[codeexecd]")]
check(kept == "x" * len(kept) and 900 <= len(kept) <= 1000,
      "the result keeps the first 1000 characters at most (%d)" % len(kept), out[:200])
check(len(out) < 1500, "stdout in the result is bounded (%d characters)" % len(out))
check(int(m.group(1)) == 10_000_001 - len(kept),
      "the marker counts the cut characters exactly (%s + %d kept = 10000001)"
      % (m.group(1), len(kept)), out[-300:])
check(len(text_of(r)) < 5000, "the text content is bounded too (%d)" % len(text_of(r)))
path = os.path.join(cwd, m.group(2))
check(os.path.isfile(path), "the named file is in the session's working directory", path)
check(os.path.getsize(path) == 10_000_001, "the file holds all of it (%d bytes)" % os.path.getsize(path))
with open(path) as f:
    check(f.read() == "x" * 10_000_000 + "\n", "the file's content is the whole output")
ok("10 MB print: %d kept, %s cut, all in %s (%.1f s)" % (len(kept), m.group(1), m.group(2), took))

# Streamed progress is bounded by the same limit; the result names the file.
from calls import Stream, call_msg
st = Stream(a, call_msg(a, "execute_py_code", {"code": "import time\nfor i in range(4):\n"
                        "    print(str(i) * 300_000, flush=True)\n    time.sleep(0.3)"}, 50,
                        token="big")).run()
prog = st.progress()
check(st.status == 200 and len(st.responses()) == 1 and len(prog) >= 2,
      "a big-output SSE call streams progress and answers", st.evidence())
sizes = [len(e["params"].get("message", "")) for _, e in prog]
check(max(sizes) < 2000, "each progress message is bounded by the limit (%s)" % sizes)
check(len(st.raw) < 50000, "the whole SSE answer is small (%d bytes for 1.2 MB printed)" % len(st.raw))
out = st.responses()[0][1]["result"]["structuredContent"]["stdout"]
m = re.search(MARK % "stdout", out)
check(m is not None, "the streamed call's result has the marker", out[-300:])
with open(os.path.join(cwd, m.group(2))) as f:
    check(f.read() == "".join(str(i) * 300_000 + "\n" for i in range(4)),
          "the file holds everything the streamed call printed")
ok("SSE with 1.2 MB of output: progress messages of %s characters, all in %s" % (sizes, m.group(2)))

r = a.execute("import sys\nprint('e' * 5000, file=sys.stderr)\nprint('small')")
s = sc(r)
m = re.search(MARK % "stderr", s["stderr"])
check(m is not None and s["stdout"] == "small\n", "stderr cut on its own, stdout untouched", s)
with open(os.path.join(cwd, m.group(2))) as f:
    check(f.read() == "e" * 5000 + "\n", "the stderr file holds all of stderr")
ok("stderr: cut with its own file (%s)" % m.group(2))

r = a.execute("print('y' * 900)")
check(sc(r)["stdout"] == "y" * 900 + "\n", "900 characters pass uncut", sc(r)["stdout"][-200:])
ok("output under the limit untouched")

png = "b'\\x89PNG\\r\\n\\x1a\\n' + bytes(range(256)) * %d"
r = a.execute("from IPython.display import Image, display\n"
              "display(Image(data=%s, format='png'))" % (png % 1200), http_timeout=60)
s = sc(r)
notes = [o["data"] for o in s["rich_outputs"]
         if o.get("mime_type") == "text/plain" and "rich output limit" in o.get("data", "")]
check(len(notes) == 1, "a 300 KB image is replaced by a note", s["rich_outputs"])
check(not any(o.get("mime_type") == "image/png" for o in s["rich_outputs"]) and not images_of(r),
      "the big image itself is not in the result", [o.get("mime_type") for o in s["rich_outputs"]])
check("100000" in notes[0], "the note names the limit", notes)
name = notes[0].rsplit("saved to ", 1)[-1].strip()
check(name.startswith("codeexecd-output/") and name.endswith(".png"),
      "the note names a .png under codeexecd-output/", notes)
with open(os.path.join(cwd, name), "rb") as f:
    check(f.read() == b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 1200,
          "the saved file holds the decoded image")
ok("300 KB image saved as %s" % name)

r = a.execute("display(Image(data=%s, format='png'))" % (png % 40))
check(any(o.get("mime_type") == "image/png" for o in sc(r)["rich_outputs"]),
      "a 10 KB image passes as image/png", sc(r)["rich_outputs"])
ok("image under the limit passes")

r = tool(a, "py_inspect_session", {})
files = sc(r).get("files") or []
check(any(f.get("name") == "codeexecd-output" and f.get("directory") is True for f in files),
      "inspect_session lists codeexecd-output/", r)
saved = os.listdir(os.path.join(cwd, "codeexecd-output"))
check(len(saved) == 4, "four spill files (two stdout, stderr, image)", saved)
ok("inspect_session shows codeexecd-output/ (%s)" % ", ".join(sorted(saved)))
EOF2
