#!/bin/sh
# 415-mime-backend: allow_mime and matplotlib_backend (seed 003's
# ExecutionConfig). A configured allow_mime narrower than the default drops
# a figure's image/png but keeps its text/plain, and the result names what
# it dropped; a call's allow_mime narrows further and may not widen; SIGHUP
# changes the list live. matplotlib_backend: the default gives images,
# none leaves matplotlib to choose (no image, not the inline backend), a
# built-in name is loaded, and one that cannot be loaded stops start-up
# with a message naming the key.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel matplotlib
require_binaries
setup_tmp
PORT=$(free_port)

# --- allow_mime narrower than the default ---------------------------------
CFG_EXTRA='allow_mime: [text/plain, text/html]'
write_config
start_daemon
wait_ready
run_py "$URL" <<'PYEOF'
import sys
from mcp import Client, check, ok, text_of, images_of
url = sys.argv[1]
a = Client(url)
a.initialize()

tools = a.result("tools/list")["tools"]
t = next(t for t in tools if t["name"] == "execute_py_code")
prop = t["inputSchema"]["properties"].get("allow_mime", {})
check(prop.get("type") == "array" and prop["items"].get("enum") == ["text/plain", "text/html"],
      "inputSchema: allow_mime lists the configured types", prop)
check("dropped_mime" in t["outputSchema"]["properties"], "outputSchema declares dropped_mime", t)
ok("tools/list: allow_mime argument (enum of the configured types), dropped_mime")

FIG = ("import matplotlib.pyplot as plt\n"
       "plt.plot([1, 2, 3], [1, 4, 9])\n"
       "plt.show()")
r = a.execute(FIG)
sc = r["structuredContent"]
check(r.get("isError") is not True, "the figure code runs", r)
mimes = [o["mime_type"] for o in sc["rich_outputs"]]
check("image/png" not in mimes and not images_of(r), "no image/png is kept", mimes)
check(any(o["mime_type"] == "text/plain" and "Figure" in o["data"] for o in sc["rich_outputs"]),
      "the figure's text/plain fallback is kept", sc["rich_outputs"])
check(sc.get("dropped_mime") == ["image/png"], "dropped_mime names image/png", sc)
check("image/png" in text_of(r), "the text content names the dropped type", text_of(r))
ok("config allow_mime: the figure's image/png dropped and named, its text/plain kept")

r = a.execute("1 + 1")
check("dropped_mime" not in r["structuredContent"], "nothing dropped: no dropped_mime", r)
ok("a result that dropped nothing has no dropped_mime")

OBJ = ("class Both:\n"
       "    def _repr_html_(self):\n"
       "        return '<b>bold</b>'\n"
       "    def __repr__(self):\n"
       "        return 'plain text of Both'\n"
       "Both()")
r = a.execute(OBJ)
mimes = [o["mime_type"] for o in r["structuredContent"]["rich_outputs"]]
check(mimes == ["text/plain", "text/html"], "without allow_mime both types are kept", mimes)
r = a.result("tools/call", {"name": "execute_py_code",
                            "arguments": {"code": OBJ, "allow_mime": ["text/plain"]}})
sc = r["structuredContent"]
check([o["mime_type"] for o in sc["rich_outputs"]] == ["text/plain"] and
      sc["rich_outputs"][0]["data"] == "plain text of Both",
      "a call's allow_mime [text/plain] keeps the text only", sc)
check(sc.get("dropped_mime") == ["text/html"], "dropped_mime names text/html", sc)
r = a.result("tools/call", {"name": "execute_py_code",
                            "arguments": {"code": OBJ, "allow_mime": ["text/html"]}})
mimes = [o["mime_type"] for o in r["structuredContent"]["rich_outputs"]]
check(mimes == ["text/plain", "text/html"], "text/plain stays even when not asked for", mimes)
ok("a call's allow_mime narrows the list; text/plain always stays")

resp = a.request("tools/call", {"name": "execute_py_code",
                                "arguments": {"code": "1", "allow_mime": ["text/plain", "image/png"]}})
err = (resp.json or {}).get("error") or {}
check(err.get("code") == -32602 and "image/png" in err.get("message", "") and
      "narrow" in err.get("message", ""),
      "widening (image/png, not configured) is refused with -32602 naming it", resp.json)
resp = a.request("tools/call", {"name": "execute_py_code",
                                "arguments": {"code": "1", "allow_mime": "text/plain"}})
err = (resp.json or {}).get("error") or {}
check(err.get("code") == -32602 and "allow_mime" in err.get("message", ""),
      "allow_mime that is not an array is refused", resp.json)
ok("a call's allow_mime may not widen the list: -32602 naming the type")
PYEOF

# SIGHUP: the new list applies to the next execution of a running kernel.
config_set allow_mime '[text/plain, image/png]'
kill -HUP "$DAEMON_PID"
wait_for 20 "the reload" grep -q "configuration .* reloaded" "$LOG"
run_py "$URL" <<'PYEOF'
import sys
from mcp import Client, check, ok, images_of
a = Client(sys.argv[1])
a.initialize()
r = a.execute("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()")
check(len(images_of(r)) == 1 and "dropped_mime" not in r["structuredContent"],
      "after SIGHUP image/png is kept", r["structuredContent"])
r = a.execute("class H:\n    def _repr_html_(self): return '<i>x</i>'\nH()")
check(r["structuredContent"].get("dropped_mime") == ["text/html"],
      "after SIGHUP text/html is dropped", r["structuredContent"])
ok("SIGHUP: a changed allow_mime applies at once")
PYEOF
stop_daemon

# --- matplotlib_backend: the default, none, a built-in name ----------------
for backend in default none agg; do
	case $backend in
	default) CFG_EXTRA= ;;
	*) CFG_EXTRA="matplotlib_backend: $backend" ;;
	esac
	write_config
	start_daemon
	wait_ready
	run_py "$URL" "$backend" <<'PYEOF'
import sys
from mcp import Client, check, ok, images_of, png_problem
url, backend = sys.argv[1:3]
a = Client(url)
a.initialize()
r = a.execute("import matplotlib, matplotlib.pyplot as plt\n"
              "fig = plt.figure()\nplt.plot([1, 2, 3])\nplt.show()\n"
              "print(matplotlib.get_backend())")
sc = r["structuredContent"]
check(r.get("isError") is not True, "%s: the figure code runs" % backend, r)
used = sc["stdout"].strip()
pngs = [o for o in sc["rich_outputs"] if o["mime_type"] == "image/png"]
if backend == "default":
    check("inline" in used, "default: the inline backend", used)
    check(len(pngs) == 1 and png_problem(pngs[0]["data"]) is None and len(images_of(r)) == 1,
          "default: the figure comes back as an image/png", sc)
    ok("matplotlib_backend default: %s, the figure as image/png" % used)
else:
    check("inline" not in used, "%s: not the inline backend" % backend, used)
    check(not pngs and not images_of(r), "%s: no image" % backend, sc)
    if backend == "agg":
        check(used.lower() == "agg", "agg: matplotlib uses agg", used)
    ok("matplotlib_backend %s: backend %s, no image" % (backend, used))
PYEOF
	stop_daemon
done

# --- a backend the environment cannot load stops start-up ------------------
CFG_EXTRA='matplotlib_backend: module://no_such_backend_415'
write_config
rc=0
timeout 180 "$CODEEXECD" -d -f "$TMPD/codeexecd.yaml" -W "$WORKER" >"$TMPD/bad.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || {
	cat "$TMPD/bad.out" >&2
	fail "a daemon with an unloadable matplotlib_backend exited $rc, want a start-up failure"
}
grep -q 'matplotlib_backend "module://no_such_backend_415".*No module named' "$TMPD/bad.out" || {
	cat "$TMPD/bad.out" >&2
	fail "the start-up error does not name matplotlib_backend and the import failure"
}
ok "matplotlib_backend module://no_such_backend_415: start-up fails: $(grep -o 'matplotlib_backend ".*' "$TMPD/bad.out" | head -n 1)"

CFG_EXTRA='matplotlib_backend: "module://"'
write_config
"$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/n.out" 2>&1 && fail "codeexecd -n accepted matplotlib_backend module://"
grep -q "matplotlib_backend.*not a matplotlib backend" "$TMPD/n.out" ||
	fail "codeexecd -n: no clear message for matplotlib_backend module:// ($(cat "$TMPD/n.out"))"
ok "matplotlib_backend module:// refused by the configuration check"
