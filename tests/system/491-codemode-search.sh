#!/bin/sh
# 491-codemode-search: search_py_tools finds code mode's upstream tools
# (issue 35) beside the domain tools. The upstream of 490 (an SDK
# McpServer demanding a bearer token) is configured twice: as `test`,
# which agent-a may call, exposing search_issues and add, and as `hidden`,
# which only agent-b may call. agent-a's search finds test.search_issues
# by a word of its description and by a stem ("searching"), with the
# import of codeexec_upstreams.test, its signature from inputSchema and
# kind "upstream"; never the tool `slow` that tools: leaves out, nor any
# tool of `hidden`, which agent-b's search shows instead. A kernel calls
# what the hit says. A SIGHUP that adds a domain tool (tools_dir) is
# seen beside the upstream tools at once (the merged index kept for the
# caller is rebuilt). Then a second daemon, without upstreams, has the
# same tools written as domain tools: its searches rank and score them
# exactly as the first ranked the upstream tools among the domain tools.
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
make_tokens

# Domain tools near the upstream's words: issues, trackers, numbers.
mkdir "$TMPD/tools"
DOMAIN="  - name: bug_report
    description: File an issue in the bug tracker, with a title and the steps.
    module: tracker_tools
    category: tracker
    required_parameters:
      - {name: title, type: str, description: what is wrong}
    return_spec: {type: int, description: the issue number}
  - name: find_tickets
    description: Find support tickets by words of their subject.
    module: tracker_tools
    category: tracker
    required_parameters:
      - {name: words, type: str, description: words to look for}
    return_spec: {type: list, description: matching tickets}
  - name: sum_numbers
    description: Add up a list of numbers.
    module: math_tools
    category: maths
    required_parameters:
      - {name: values, type: 'list[float]', description: the numbers}
    return_spec: {type: float, description: their sum}"
printf 'tools:\n%s\n' "$DOMAIN" >"$TMPD/tools/domain.yaml"
chmod -R a+rX "$TMPD/tools"

PORT=$(free_port)
CFG_EXTRA="auth:
  mode: tokens
  tokens_file: $TMPD/tokens
  resource: http://127.0.0.1:$PORT/mcp
tools_dir: $TMPD/tools
upstreams:
  - name: test
    url: http://127.0.0.1:$UP_PORT/mcp
    token_file: $TMPD/token
    required: true
    tools: [search_issues, add]
    allow: [agent-a]
  - name: hidden
    url: http://127.0.0.1:$UP_PORT/mcp
    token_file: $TMPD/token
    required: true
    tools: [search_issues, calls]
    allow: [agent-b]" write_config
start_daemon
wait_ready

QUERIES='["title", "searching", "issues", "issue tracker", "add numbers", "find words", "query"]'
run_py "$URL" "$TOKEN_A" "$TOKEN_B" "$TMPD/ranked.json" "$QUERIES" <<'PYEOF' || fail "searching upstream tools"
import json, sys
from mcp import Client, check, ok, text_of
from calls import sc

url, ta, tb, out, queries = sys.argv[1:6]
a = Client(url, token=ta)
a.initialize()
b = Client(url, token=tb)
b.initialize()

def search(c, query, **kw):
    args = dict(query=query, **kw)
    return c.result("tools/call", {"name": "search_py_tools", "arguments": args})

tools = {t["name"]: t for t in a.result("tools/list")["tools"]}
check("codeexec_upstreams" in tools["search_py_tools"]["description"],
      "search_py_tools' description speaks of the upstream tools", tools["search_py_tools"])

r = search(a, "title")
hits = sc(r)["results"]
up = [h for h in hits if h.get("kind") == "upstream"]
check(up and up[0]["name"] == "search_issues" and up[0]["upstream"] == "test",
      "a word of its description ('title') finds test.search_issues", hits)
h = up[0]
check(h["import"] == "from codeexec_upstreams import test" and
      h["signature"] == "test.search_issues(*, query: str, limit: int = 3) -> dict" and
      h["module"] == "codeexec_upstreams.test" and
      h["description"] == "Find issues whose title holds the query.",
      "the hit has the import, the signature from inputSchema and the description", h)
check(any(x.get("kind") == "domain" and x["name"] == "bug_report" for x in hits),
      "the domain tool with 'title' is among the hits too", hits)
t = text_of(r)
for part in ("test.search_issues(*, query: str, limit: int = 3) -> dict",
             "from codeexec_upstreams import test",
             "Upstream tool: of MCP server test",
             "result = test.search_issues(query=...)"):
    check(part in t, "the text shows %r" % part, t)
ok("a word of the description finds the upstream tool, with what calling it takes")

hits = sc(search(a, "searching"))["results"]
check([x["name"] for x in hits] == ["search_issues"] and
      hits[0]["matched"].get("name") == ["search"],
      "a stem ('searching') finds search_issues by its name's 'search'", hits)
ok("a stem finds the upstream tool")

for q in ("sleeps", "how many calls it served"):
    hits = sc(search(a, q))["results"]
    check(all(x.get("upstream") is None for x in hits),
          "%r shows no upstream tool to agent-a (slow is not in tools:, calls is hidden's)" % q, hits)
for q in ("issues", "title", "calls served"):
    hits = sc(search(a, q, top=50))["results"]
    check(all(x.get("upstream") != "hidden" for x in hits),
          "agent-a never sees the tools of hidden, which allows only agent-b (%r)" % q, hits)
hits = sc(search(b, "issues title", top=50))["results"]
ups = {(x.get("upstream"), x["name"]) for x in hits if x.get("kind") == "upstream"}
check(ups == {("hidden", "search_issues")}, "agent-b sees hidden's search_issues, not test's", hits)
hits = sc(search(b, "served calls"))["results"]
check([x["name"] for x in hits if x.get("kind") == "upstream"] == ["calls"],
      "agent-b finds hidden's calls", hits)
ok("only the upstreams the identity may call, and only the tools exposed")

hits = sc(search(a, "numbers", category="test"))["results"]
check(hits and hits[0]["name"] == "add" and all(x.get("upstream") == "test" for x in hits),
      "category test keeps to upstream test's tools, add first", hits)

h = sc(search(a, "title"))["results"]
h = [x for x in h if x.get("kind") == "upstream"][0]
code = h["import"] + "\nr = test.search_issues(query='leak', limit=2)\nprint(r['items'][1]['title'])"
r = a.execute(code, timeout=60)
check(sc(r).get("success") is True and "leak #2" in text_of(r),
      "a kernel calls the tool as the hit says", r)
ok("the hit's import and call work in a kernel")

ranked = {}
for q in json.loads(queries):
    res = sc(search(a, q, top=50))
    ranked[q] = {"total": res["total_tools"],
                 "hits": [[x["name"], x["score"]] for x in res["results"]]}
check(ranked["issues"]["total"] == 5, "agent-a's searches span 3 domain and 2 upstream tools", ranked)
json.dump(ranked, open(out, "w"))
PYEOF

cat >"$TMPD/tools/more.yaml" <<'YAML'
tools:
  - name: issue_digest
    description: A weekly digest of the new issues.
    module: tracker_tools
    category: tracker
    required_parameters:
      - {name: week, type: int, description: ISO week number}
    return_spec: {type: str, description: the digest}
YAML
chmod a+r "$TMPD/tools/more.yaml"
kill -HUP "$DAEMON_PID"
wait_for 10 "a reload logged after SIGHUP" grep -q "reloaded" "$LOG"
run_py "$URL" "$TOKEN_A" <<'PYEOF' || fail "searching after SIGHUP"
import sys
from mcp import Client, check, ok
from calls import sc

a = Client(sys.argv[1], token=sys.argv[2])
a.initialize()
res = sc(a.result("tools/call", {"name": "search_py_tools",
                                 "arguments": {"query": "weekly digest of issues", "top": 10}}))
names = [(x.get("kind"), x["name"]) for x in res["results"]]
check(res["total_tools"] == 6 and names[0] == ("domain", "issue_digest") and
      ("upstream", "search_issues") in names,
      "after SIGHUP the new domain tool ranks with the upstream tools", res)
ok("a reload's new domain tool is searched beside the upstream tools")
PYEOF
stop_daemon

# The same two upstream tools as domain tools, with the text the front
# gives their entries (upstream_tooldef.h): their ranks must not change.
PORT=$(free_port)
rm "$TMPD/tools/more.yaml"
CFG_EXTRA="tools_dir: $TMPD/tools
tools:
  - name: search_issues
    description: Find issues whose title holds the query.
    module: codeexec_upstreams.test
    category: test
    required_parameters:
      - {name: query, type: str, description: Words to look for}
    optional_parameters:
      - {name: limit, type: int, description: '', default: 3}
    return_spec: {type: dict, description: 'with items, total'}
  - name: add
    description: Add two numbers.
    module: codeexec_upstreams.test
    category: test
    required_parameters:
      - {name: a, type: float, description: ''}
      - {name: b, type: float, description: ''}
    return_spec: {type: Any, description: ''}" write_config
start_daemon
wait_ready
run_py "$URL" "$TMPD/ranked.json" "$QUERIES" <<'PYEOF' || fail "ranking as domain tools"
import json, sys
from mcp import Client, check, ok
from calls import sc

url, before, queries = sys.argv[1:4]
c = Client(url)
c.initialize()
want = json.load(open(before))
for q in json.loads(queries):
    res = sc(c.result("tools/call", {"name": "search_py_tools",
                                     "arguments": {"query": q, "top": 50}}))
    got = {"total": res["total_tools"], "hits": [[x["name"], x["score"]] for x in res["results"]]}
    check(got == want[q], "%r: the upstream tools ranked as these domain tools rank" % q,
          {"upstream": want[q], "domain": got})
check(any(len(v["hits"]) > 1 for v in want.values()), "some query ranks several tools", want)
ok("upstream tools rank among the domain tools as the same ranking ranks domain tools")
PYEOF
stop_daemon
ok "491-codemode-search"
