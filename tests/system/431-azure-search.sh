#!/bin/sh
# 431-azure-search: tool_search_backend azure_ai_search against a loopback
# server answering in the REST API's documented format
# (azure_search_server.py): the request the daemon sends (path, api-key,
# JSON body, category filter), hits mapped to the registry's tools (unknown
# names dropped), and the local BM25 answering, saying why, when the
# service refuses the key or times out. Never the real service.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)

"$PY" "$sysdir/azure_search_server.py" "$TMPD/azport" "$TMPD/azlog" "good-key" &
AZPID=$!
trap 'kill $AZPID 2>/dev/null; cleanup' EXIT
wait_for 10 "the loopback search server" test -s "$TMPD/azport"
AZPORT=$(cat "$TMPD/azport")
printf 'good-key\n' >"$TMPD/key"
chmod 0600 "$TMPD/key"

CFG_EXTRA="tool_search_backend: azure_ai_search
azure_ai_search:
  endpoint: http://127.0.0.1:$AZPORT
  index: tools
  api_key_file: $TMPD/key
  timeout_s: 2
tools:
  - name: mol_weight
    description: Average molecular weight of a molecule.
    module: math
    category: chemistry
    required_parameters:
      - {name: smiles, type: str, description: SMILES}
    return_spec: {type: float}
  - name: gc_content
    description: Fraction of G and C bases in DNA.
    module: math
    category: bioinformatics
    return_spec: {type: float}"
write_config
start_daemon
wait_ready

run_py "$URL" "$TMPD/azlog" <<'PY'
import json, sys
from mcp import Client, check, ok, text_of

c = Client(sys.argv[1])
c.initialize()
def search(args):
    return c.result("tools/call", {"name": "search_py_tools", "arguments": args})
def last_request():
    with open(sys.argv[2]) as f:
        return json.loads(f.read().splitlines()[-1])

r = search({"query": "molar mass", "top": 3})
sc = r["structuredContent"]
check(sc["backend"] == "azure_ai_search" and "backend_error" not in sc, "Azure answered", sc)
check([h["name"] for h in sc["results"]] == ["mol_weight"],
      "hits mapped to the registry, the unknown name dropped", sc)
check("from math import mol_weight" in text_of(r), "the text has the import line", r)
req = last_request()
check(req["path"] == "/indexes/tools/docs/search?api-version=2023-11-01", "the path", req)
check(req["api-key"] == "good-key" and req["content-type"] == "application/json",
      "the api-key and Content-Type headers", req)
body = json.loads(req["body"])
check(body == {"search": "molar mass", "top": 3, "select": "name", "searchMode": "any",
               "queryType": "simple"}, "the JSON body", body)
ok("search_py_tools asks the index and maps its hits")

r = search({"query": "molar dna", "category": "bioinformatics"})
body = json.loads(last_request()["body"])
check(body.get("filter") == "category eq 'bioinformatics'", "the category filter", body)
check([h["name"] for h in r["structuredContent"]["results"]] == ["gc_content"],
      "the filtered answer", r)
ok("a category becomes an OData filter")

r = search({"query": "slow molecular weight"})
sc = r["structuredContent"]
check(sc["backend"] == "bm25" and "azure_ai_search" in sc.get("backend_error", ""),
      "a timeout falls back to BM25, saying why", sc)
check("Azure AI Search failed" in text_of(r) and sc["results"][0]["name"] == "mol_weight",
      "the text says so and BM25 still finds mol_weight", r)
ok("a service that times out: the local BM25 answers")
PY

# A wrong key (SIGHUP rereads the key file): HTTP 403 named, BM25 answers.
printf 'bad-key\n' >"$TMPD/key"
kill -HUP "$DAEMON_PID"
wait_for 10 "a reload logged after SIGHUP" grep -q "reloaded" "$LOG"
run_py "$URL" <<'PY'
import sys
from mcp import Client, check, ok
c = Client(sys.argv[1])
c.initialize()
r = c.result("tools/call", {"name": "search_py_tools", "arguments": {"query": "molar mass"}})
sc = r["structuredContent"]
check(sc["backend"] == "bm25" and "HTTP 403: Authentication failed" in sc.get("backend_error", ""),
      "a refused key is named, with the service's message", sc)
ok("a refused key: the error is named and BM25 answers")
PY

# A key file others may read is refused on SIGHUP.
chmod 0644 "$TMPD/key"
kill -HUP "$DAEMON_PID"
wait_for 10 "a rejection logged" grep -q "reload rejected" "$LOG"
grep "reload rejected" "$LOG" | grep -q "api_key_file $TMPD/key: must be a regular file that only its owner may read" ||
	fail "the rejection does not name the key file's mode"
ok "a key file others may read is refused"
