#!/bin/sh
# 490-codemode: code mode (issue 35). A loopback upstream MCP server built
# on the official SDK's McpServer (tests/client/upstream_server.mjs) that
# demands a bearer token is an upstream of the daemon, its token in a
# token_file only root reads. In each of the network modes inherit,
# isolated and seccomp, the kernel imports codeexec_upstreams.test, calls
# its tools as Python functions with the generated signatures and
# docstrings, keeps results in variables across calls (structuredContent
# as it is, a plain text as str), gets UpstreamError for an isError answer
# (type tool_error), past max_response_bytes (too_large), past timeout_s
# (timeout), for a tool not in `tools:` (denied) and past max_calls
# (limit); the token is nowhere in the kernel's environment, its
# /proc/self/environ, its memory (searched by root from outside) or its working directory, and an
# isolated kernel cannot reach the upstream's port itself. Each call is
# in the audit log (without the token) and in /metrics.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
require_client
require_node 18
setup_tmp

TOKEN=tok-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
mkdir -p "$TMPD/srv"
cp "$top_srcdir/tests/client/upstream_server.mjs" "$TMPD/srv/"
ln -sfn "$CLIENT_DIR/node_modules" "$TMPD/srv/node_modules"
"$NODE" "$TMPD/srv/upstream_server.mjs" "$TMPD/srv/port" "$TOKEN" >"$TMPD/srv/log" 2>&1 &
SRV_PID=$!
cleanup_extra() { kill "$SRV_PID" 2>/dev/null; }
wait_for 20 "the upstream server listens" test -s "$TMPD/srv/port"
UP_PORT=$(cat "$TMPD/srv/port")
printf '%s\n' "$TOKEN" >"$TMPD/token"
chmod 600 "$TMPD/token"

modes="inherit isolated"
[ "$(id -u)" = 0 ] && modes="$modes seccomp"

for mode in $modes; do
	PORT=$(free_port)
	CFG_EXTRA="kernel_network_mode: $mode
upstreams:
  - name: test
    url: http://127.0.0.1:$UP_PORT/mcp
    token_file: $TMPD/token
    tools: [search_issues, add, fail, slow, big, calls]
    timeout_s: 3
    max_response_bytes: 1048576
    max_calls: 12
    secret_args: [query]" write_config
	start_daemon
	wait_ready
	run_py "$URL" "$mode" "$TOKEN" "$UP_PORT" <<'PYEOF'
import sys
from mcp import Client, check, ok, text_of, value_of
from calls import sc

url, mode, token, up_port = sys.argv[1:5]
a = Client(url)
a.initialize()

def run(code, what):
    r = a.execute(code, timeout=60)
    check(sc(r).get("success") is True, "%s: %s" % (mode, what), r)
    return r

r = run("from codeexec_upstreams import test\n"
        "import inspect\n"
        "print(sorted(test.__all__))\n"
        "print(inspect.signature(test.search_issues))\n"
        "print(test.search_issues.__doc__)", "import the upstream's module")
out = text_of(r)
check("['add', 'big', 'calls', 'fail', 'search_issues', 'slow']" in out,
      "%s: one function per exposed tool" % mode, out)
check("(*, query, limit=3)" in out, "%s: the signature comes from inputSchema" % mode, out)
check("Find issues whose title holds the query." in out and "Words to look for" in out,
      "%s: the docstring from the description and the parameters'" % mode, out)

run("found = test.search_issues(query='leak', limit=2)\n"
    "total = test.add(a=2, b=3)", "call two tools, results kept")
r = run("print(found['items'][1]['title'], found['total'], repr(total))", "the results persist")
check("leak #2 100 '5'" in text_of(r), "%s: structuredContent as is, a text as str" % mode,
      text_of(r))

def raises(code, kind, what, needle=""):
    r = run("import codeexec_upstreams\n"
            "try:\n" + "".join("    " + l + "\n" for l in code.split("\n")) +
            "    print('NO ERROR')\n"
            "except codeexec_upstreams.UpstreamError as e:\n"
            "    print('TYPE', e.type, 'MSG', e)\n", what)
    t = text_of(r)
    check(("TYPE %s " % kind) in t and needle in t, "%s: %s raises UpstreamError %s" % (mode, what, kind), t)

raises("test.fail()", "tool_error", "an isError answer", "this tool always fails")
raises("test.big()", "too_large", "an answer past max_response_bytes", "larger than")
raises("test.slow(seconds=10)", "timeout", "a call past timeout_s")
r = run("try:\n    test.search_issues()\nexcept TypeError as e:\n    print('TypeError', e)",
        "a missing required argument")
check("TypeError" in text_of(r), "%s: a missing argument is a TypeError before any call" % mode)

# The token: nowhere the kernel can look (its memory is searched from outside, below).
r = run("import os, glob\n"
        "tok = ''.join(reversed(%r))\n"
        "print('ENV', any(tok in v for v in os.environ.values()))\n"
        "try: print('PROC', tok.encode() in open('/proc/self/environ','rb').read())\n"
        "except PermissionError: print('PROC', False, 'unreadable')\n"
        "files = False\n"
        "for p in glob.glob('**', recursive=True):\n"
        "    try: files = files or tok.encode() in open(p, 'rb').read()\n"
        "    except OSError: pass\n"
        "print('FILES', files)\n"
        "del tok\n" % token[::-1], "look for the token")
t = text_of(r)
check("ENV False" in t and "PROC False" in t and "FILES False" in t,
      "%s: the token is in no environment, /proc/self/environ or file" % mode, t)

if mode == "isolated":
    r = run("import socket\ns = socket.socket()\ns.settimeout(3)\n"
            "try:\n    s.connect(('127.0.0.1', %s)); print('REACHED')\n"
            "except OSError as e:\n    print('REFUSED', e)\n" % up_port, "connect to the upstream directly")
    check("REFUSED" in text_of(r), "isolated: the kernel cannot reach the upstream itself", text_of(r))

# max_calls: 12. Made so far: 2 + fail + big + slow = 5 (the TypeError made none).
r = run("n = 0\nimport codeexec_upstreams\n"
        "try:\n    for i in range(20):\n        test.add(a=i, b=0); n += 1\n"
        "except codeexec_upstreams.UpstreamError as e:\n    print('STOP', n, e.type)\n", "calls up to max_calls")
check("STOP 7 limit" in text_of(r), "%s: a session's calls stop at max_calls" % mode, text_of(r))

# Another session starts counting afresh; state persists in both.
b = Client(url)
b.initialize()
r = b.execute("from codeexec_upstreams import test\nprint(test.add(a=1, b=1))", timeout=60)
check(text_of(r).strip() == "2", "%s: another session has its own count" % mode, r)
# A kernel that writes its own requests, eight at once: past four at a time
# the front refuses them at once (each would hold a thread of the front).
r = b.execute("import os, json, socket, struct\n"
              "s = socket.socket(fileno=os.dup(int(os.environ['CODEEXEC_UPSTREAM_FD'])))\n"
              "for i in range(8):\n"
              "    d = json.dumps({'seq': 1000 + i, 'op': 'call', 'upstream': 'test', 'tool': 'slow', 'arguments': {'seconds': 1}}).encode()\n"
              "    s.sendall(struct.pack('>I', len(d)) + d)\n"
              "kinds = []\n"
              "for i in range(8):\n"
              "    msg, fds, _, _ = socket.recv_fds(s, 1, 1)\n"
              "    rep = json.loads(os.fdopen(fds[0], 'rb').read())\n"
              "    kinds.append((rep.get('error') or {}).get('type', 'ok'))\n"
              "print('KINDS', sorted(kinds))\n", timeout=60)
t = text_of(r)
check("'limit'" in t and "'ok'" in t, "%s: a session's requests in flight are capped" % mode, t)
ok("%s: code mode works" % mode)
PYEOF
	[ $? = 0 ] || fail "$mode: code mode"
	# Every kernel's memory, read by root from outside: no token.
	for pid in $(descendants "$DAEMON_PID"); do
		tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q ipykernel || continue
		"$PY" "$sysdir/memsearch.py" "$pid" "$TOKEN" ||
			fail "$mode: the token is in kernel $pid's memory"
		scanned=1
	done
	[ -n "${scanned:-}" ] || fail "$mode: no kernel process found to search"
	ok "$mode: the token is in no kernel's memory"
	grep -q "upstream call: identity anonymous session .* upstream test tool search_issues: ok" "$LOG" ||
		fail "$mode: the audit log has the call"
	grep -q "tool big: too_large" "$LOG" || fail "$mode: the audit log has the refused answer"
	! grep -qF "$TOKEN" "$LOG" || fail "$mode: the token is in the log"
	m=$(curl -s "$BASE/metrics")
	echo "$m" | grep -q 'codeexecd_upstream_calls_total{upstream="test",outcome="ok"} [1-9]' ||
		fail "$mode: /metrics counts the calls"
	echo "$m" | grep -q 'codeexecd_upstream_calls_total{upstream="test",outcome="limit"} 1' ||
		fail "$mode: /metrics counts the call past max_calls"
	ok "$mode: audit log and /metrics"
	stop_daemon
done
