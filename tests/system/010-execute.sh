#!/bin/sh
# 010-execute: execute_py_code in real kernels: persistence, print, the last
# expression's value, exceptions, matplotlib figures as PNG images, and two
# sessions that share neither variables nor working directories.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel matplotlib
require_binaries
CFG_WARM=2
start_ready_daemon

run_py "$URL" "$TMPD/state" <<'EOF'
import sys
from mcp import Client, check, ok, text_of, value_of, images_of, png_problem

url, state_dir = sys.argv[1], sys.argv[2]
a = Client(url)
init = a.initialize()
check(init.get("protocolVersion") == "2025-11-25", "initialize negotiates 2025-11-25", init)
check(init.get("instructions") == "codeexecd system test server",
      "initialize instructions are server_description", init)
check("tools" in init.get("capabilities", {}), "initialize declares tools", init)
ok("initialize")

tools = a.result("tools/list")["tools"]
names = [t["name"] for t in tools]
check("execute_py_code" in names, "tools/list has execute_py_code", names)
t = next(t for t in tools if t["name"] == "execute_py_code")
check(t.get("description", "").startswith("Run Python code in a persistent"),
      "tool description is the configured description", t)
props = t["inputSchema"].get("properties", {})
check(t["inputSchema"].get("type") == "object", "inputSchema is an object", t)
check({"code", "description", "timeout"} <= set(props), "inputSchema has code, description, timeout", t)
check(t["inputSchema"].get("anyOf") == [{"required": ["code"]}, {"required": ["code_str"]}],
      "code (or its alias code_str) is required", t)
osch = t.get("outputSchema", {})
check(osch.get("type") == "object" and {"session_id", "success", "stdout", "stderr",
      "rich_outputs", "error", "execution_time"} <= set(osch.get("properties", {})),
      "outputSchema declares the seed 003 shape", t)
ok("tools/list: execute_py_code with inputSchema and outputSchema")

# Persistence and the last expression's value.
r = a.execute("x = 21", description="set x")
check(r.get("isError") is not True, "x = 21 succeeds", r)
sc = r["structuredContent"]
check(sc["success"] is True and sc["error"] is None, "x = 21: success, no error", r)
check(isinstance(sc["session_id"], str) and sc["session_id"], "structuredContent.session_id", r)
check(isinstance(sc["execution_time"], (int, float)) and sc["execution_time"] >= 0,
      "structuredContent.execution_time is a number", r)
check(isinstance(sc["rich_outputs"], list), "rich_outputs is a list", r)
r = a.execute("x * 2")
sc = r["structuredContent"]
check("42" in text_of(r), "x * 2: content text shows 42", r)
check(any(o.get("mime_type") == "text/plain" and "42" in o.get("data", "")
          for o in sc["rich_outputs"]) or "42" in sc["stdout"],
      "x * 2: 42 in rich_outputs text/plain", r)
ok("variables persist between calls; last value returned")

# print
r = a.execute("print('hello from the kernel')")
sc = r["structuredContent"]
check(sc["stdout"] == "hello from the kernel\n", "print goes to stdout", r)
check("hello from the kernel" in text_of(r), "print shows in content text", r)
r = a.execute("import sys; print('to stderr', file=sys.stderr)")
check("to stderr" in r["structuredContent"]["stderr"], "stderr captured", r)
ok("print: stdout and stderr")

# An exception.
r = a.execute("1 / 0")
sc = r["structuredContent"]
check(r.get("isError") is True, "1/0 sets isError", r)
check(sc["success"] is False, "1/0: success false", r)
err = sc["error"] or {}
check(err.get("type") == "ZeroDivisionError", "error.type is ZeroDivisionError", r)
check("division by zero" in err.get("message", ""), "error.message", r)
tb = err.get("traceback")
tb = "\n".join(tb) if isinstance(tb, list) else (tb or "")
check("ZeroDivisionError" in tb, "error.traceback names the exception", r)
check("\x1b" not in tb and "\x1b" not in text_of(r), "traceback has no ANSI escapes", r)
check("ZeroDivisionError" in text_of(r), "content text shows the traceback", r)
r = a.execute("x")
check("21" in text_of(r), "state survives an exception", r)
ok("ZeroDivisionError: isError, error.type, clean traceback")

# A matplotlib figure comes back as an image/png item.
r = a.execute("import matplotlib.pyplot as plt\n"
              "plt.plot([1, 2, 3], [1, 4, 9])\n"
              "plt.show()")
check(r.get("isError") is not True, "matplotlib code runs", r)
imgs = images_of(r)
check(len(imgs) == 1, "one image item for one figure", [c.get("type") for c in r["content"]])
check(imgs[0].get("mimeType") == "image/png", "image item mimeType image/png", imgs[0].get("mimeType"))
check(png_problem(imgs[0].get("data")) is None,
      "image item data is a base64 PNG: %s" % png_problem(imgs[0].get("data")))
rich = [o for o in r["structuredContent"]["rich_outputs"] if o.get("mime_type") == "image/png"]
check(len(rich) == 1 and png_problem(rich[0].get("data")) is None,
      "rich_outputs holds the PNG: %s" % (png_problem(rich[0].get("data")) if rich else "none"))
ok("matplotlib figure: image item with a valid PNG")

# Two sessions are isolated: variables and working directories.
r = a.execute("import os\nopen('only_in_a.txt', 'w').write('a')\nos.getcwd()")
cwd_a = (value_of(r) or "").strip("'\"")
check(cwd_a.startswith(state_dir + "/"), "session working directory under state_dir", cwd_a)
b = Client(url)
b.initialize()
check(b.session_id != a.session_id, "two sessions, two ids")
r = b.execute("x")
check(r.get("isError") is True and r["structuredContent"]["error"]["type"] == "NameError",
      "session b does not see session a's x", r)
r = b.execute("import os\n(os.getcwd(), os.path.exists('only_in_a.txt'))")
val = value_of(r) or ""
check(val.startswith("('" + state_dir) and cwd_a not in val, "session b has its own working directory", r)
check("False" in val, "session a's file is not in session b's directory", r)
r = a.execute("x, os.path.exists('only_in_a.txt')")
check("(21, True)" in text_of(r), "session a unaffected by session b", r)
sa = a.execute("1")["structuredContent"]["session_id"]
sb = b.execute("1")["structuredContent"]["session_id"]
check(sa != sb, "structuredContent.session_id differs between sessions", [sa, sb])
ok("two sessions isolated (variables, cwd, files)")

# The end of a session.
d = a.delete()
check(d.status in (200, 202, 204), "DELETE ends the session")
r = b.execute("1 + 1")
check("2" in text_of(r), "session b still works after a ended", r)
ok("DELETE ends one session only")
EOF
