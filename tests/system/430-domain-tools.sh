#!/bin/sh
# 430-domain-tools: the tool registry in a real daemon.
# Definitions inline and in tools_dir; search_py_tools listed, ranking and
# answering with the import line; a kernel imports and calls a tool from
# tools_dir's Python file; code_prefix runs once per kernel and leaves the
# agent's traceback line numbers alone; SIGHUP adds a tool; codeexecd -n
# names a tool whose module does not import; the official TypeScript SDK
# client searches and then calls what it found.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)

tools=$TMPD/tools
mkdir "$tools"
cat >"$tools/chem_tools.py" <<'PY'
"""A stand-in for a chemistry package: enough to call from a kernel."""
MASS = {"C": 12.011, "H": 1.008, "O": 15.999, "N": 14.007}
HEAVY_H = {"C": 4, "O": 2, "N": 3}


def mol_weight(smiles, exact=False):
    atoms = [ch for ch in smiles if ch in MASS]
    bonds = max(len(atoms) - 1, 0)
    h = sum(HEAVY_H[a] for a in atoms) - 2 * bonds
    return round(sum(MASS[a] for a in atoms) + h * MASS["H"], 2)


def gc_content(sequence):
    return sum(b in "GC" for b in sequence.upper()) / len(sequence)
PY
cat >"$tools/chem.yaml" <<'YAML'
tools:
  - name: mol_weight
    description: Average molecular weight (molar mass) of a molecule, in g/mol.
    module: chem_tools
    category: chemistry
    required_parameters:
      - {name: smiles, type: str, description: SMILES of the molecule}
    optional_parameters:
      - {name: exact, type: bool, description: monoisotopic exact mass, default: false}
    return_spec: {type: float, description: weight in g/mol}
    examples:
      - mol_weight('CCO')
YAML
chmod 0555 "$tools"

CFG_EXTRA="tools_dir: $tools
code_prefix: |
  import math
  PREFIXED = 41
tools:
  - name: haversine_distance
    description: Great-circle distance between two latitude/longitude points.
    module: geo_tools_not_installed
    category: geospatial
    required_parameters:
      - {name: lat1, type: float, description: latitude of the first point}
    return_spec: {type: float, description: kilometres}"
write_config
start_daemon
wait_ready

run_py "$URL" <<'PY'
import sys
from mcp import Client, check, ok, text_of, value_of

c = Client(sys.argv[1])
c.initialize()
tools = {t["name"]: t for t in c.result("tools/list")["tools"]}
check("search_py_tools" in tools, "tools/list has search_py_tools", list(tools))
check("search_py_tools" in tools["execute_py_code"]["description"] and
      "from MODULE import NAME" in tools["execute_py_code"]["description"],
      "the execute tool's description names the search and the import", tools["execute_py_code"])
ok("search_py_tools listed; execute_py_code says how found tools are called")

def search(args):
    return c.result("tools/call", {"name": "search_py_tools", "arguments": args})

r = search({"query": "molar mass of a molecule"})
sc = r["structuredContent"]
check(sc["total_tools"] == 2 and sc["results"][0]["name"] == "mol_weight",
      "mol_weight ranks first of 2 tools", sc)
hit = sc["results"][0]
check(hit["import"] == "from chem_tools import mol_weight" and
      hit["signature"] == "mol_weight(smiles: str, exact: bool = False) -> float",
      "the hit's import line and signature", hit)
t = text_of(r)
for part in ("mol_weight(smiles: str, exact: bool = False) -> float",
             "from chem_tools import mol_weight", "smiles (str): SMILES of the molecule",
             "Returns (float): weight in g/mol", "mol_weight('CCO')"):
    check(part in t, "the text shows %r" % part, t)
m = hit["matched"]
check({"molar", "mass", "molecule"} <= set(m.get("description", [])) and
      m.get("parameters") == ["molecule", "mass"] and "name" not in m,
      "the hit says which fields and words matched", m)
check("   Matched: description (" in t, "the text shows what matched", t)
ok("search answers with signature, import line, parameters, return, example and matches")

r = search({"query": "distance", "category": "geospatial", "top": 1})
check([h["name"] for h in r["structuredContent"]["results"]] == ["haversine_distance"],
      "a category keeps to its tools", r)
# A WordNet synonym, read by the confined front: "km" shares no word or stem
# with the tool, whose return is in "kilometres" (WordNet: km, kilometre).
r = search({"query": "km"})
hits = r["structuredContent"]["results"]
check([h["name"] for h in hits] == ["haversine_distance"] and
      hits[0]["matched"] == {"returns": ["kilometres"]},
      "a synonym-only query finds its tool and says which word it met", r)
r = search({"query": "molar mass", "category": "geospatial"})
check(r["structuredContent"]["results"] == [] and "No tool matches" in text_of(r),
      "no match says so", r)
bad = c.request("tools/call", {"name": "search_py_tools", "arguments": {"query": "x", "top": 0}})
check(bad.json.get("error", {}).get("code") == -32602, "top 0 is refused", bad.json)
for q in ("the of to a", "x"):
    bad = c.request("tools/call", {"name": "search_py_tools", "arguments": {"query": q}})
    check(bad.json.get("error", {}).get("code") == -32602 and
          "no word to search for" in bad.json["error"].get("message", ""),
          "a query of stop words only is refused: %r" % q, bad.json)
ok("category filter, no match, bad top, stop words only")

r = c.execute("from chem_tools import mol_weight\nmol_weight('CCO')")
check(r.get("isError") is not True and value_of(r) == "46.07", "the kernel calls mol_weight", r)
r = c.execute("import chem_tools, os\nos.access(os.path.dirname(chem_tools.__file__), os.W_OK)")
check(value_of(r) == "False", "tools_dir is not writable by the kernel", r)
ok("a kernel imports and calls a registered tool from tools_dir")

r = c.execute("PREFIXED + 1, math.pi > 3")
check(value_of(r) == "(42, True)", "code_prefix ran before the first execution", r)
r = c.execute("a = 1\nb = 2\nraise ValueError('third line')")
tb = r["structuredContent"]["error"]["traceback"]
tb = tb if isinstance(tb, str) else "\n".join(tb)
check("line 3" in tb and "line 5" not in tb,
      "the traceback names line 3 of the agent's code, unshifted by the prefix", tb)
r = c.execute("In[1:]")
check("PREFIXED = 41" not in (value_of(r) or ""), "the prefix is not in the session's history", r)
ok("code_prefix runs as its own execution; line numbers stay the agent's")

r = c.execute("import os; os._exit(3)")
check(r.get("isError") is True, "a kernel that exits fails its call", r)
r = c.execute("PREFIXED, 'math' in dir()")
check(value_of(r) == "(41, True)", "the fresh kernel ran code_prefix too", r)
ok("code_prefix runs again in the kernel that replaces one that died")
PY

if [ "$(id -u)" = 0 ]; then
	grep -q "tools_dir .* can be written by kernels" "$LOG" &&
		fail "start-up warns of a root-owned 0555 tools_dir"
	ok "no warning for a tools_dir kernels cannot write"
fi

# SIGHUP adds a tool to tools_dir's file: found at once.
chmod 0755 "$tools"
cat >>"$tools/chem.yaml" <<'YAML'
  - name: gc_content
    description: Fraction of G and C bases in a DNA sequence.
    module: chem_tools
    category: bioinformatics
    required_parameters:
      - {name: sequence, type: str, description: DNA bases}
    return_spec: {type: float, description: GC fraction}
YAML
chmod 0555 "$tools"
kill -HUP "$DAEMON_PID"
wait_for 10 "a reload logged after SIGHUP" grep -q "reloaded" "$LOG"
run_py "$URL" <<'PY'
import sys
from mcp import Client, check, ok
c = Client(sys.argv[1])
c.initialize()
r = c.result("tools/call", {"name": "search_py_tools", "arguments": {"query": "GC fraction of DNA"}})
sc = r["structuredContent"]
check(sc["total_tools"] == 3 and sc["results"][0]["name"] == "gc_content",
      "the tool added by SIGHUP is found", sc)
ok("SIGHUP adds a tool")
PY

# A bad definition on SIGHUP: rejected with FILE:LINE, the registry stays.
chmod 0755 "$tools"
printf -- '- name: 1bad\n  description: d\n  module: m\n  return_spec: {type: int}\n' >"$tools/bad.yaml"
kill -HUP "$DAEMON_PID"
wait_for 10 "a rejection logged" grep -q "reload rejected" "$LOG"
grep "reload rejected" "$LOG" | grep -q "$tools/bad.yaml:1:9: tools item 1: name: \"1bad\" is not a Python identifier" ||
	fail "the rejection does not name bad.yaml:1:9"
rm "$tools/bad.yaml"
ok "a bad tools_dir file on SIGHUP is rejected with FILE:LINE:COLUMN"

# codeexecd -n: the environment is built now; the module of haversine_distance is missing.
"$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/n.out" 2>&1 && fail "codeexecd -n passed a tool whose module is missing"
grep -q "codeexecd.yaml:[0-9]*: tool haversine_distance: module geo_tools_not_installed cannot be imported: ModuleNotFoundError" "$TMPD/n.out" ||
	fail "codeexecd -n does not name the tool and its module: $(cat "$TMPD/n.out")"
grep -q "mol_weight" "$TMPD/n.out" && fail "codeexecd -n complains of mol_weight, which imports: $(cat "$TMPD/n.out")"
ok "codeexecd -n names the tool whose module does not import"

chmod 0777 "$tools"
"$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/n.out" 2>&1 || true
grep -q "warning: tools_dir $tools can be written by kernels (mode 777" "$TMPD/n.out" ||
	fail "no warning for a world-writable tools_dir: $(cat "$TMPD/n.out")"
chmod 0555 "$tools"
ok "a tools_dir kernels could write is warned of"

# The official TypeScript SDK client, when its modules are installed.
if sdk_client tools-client.mjs tools; then
	ok "official TypeScript SDK client: search_py_tools, then the tool through execute_py_code"
fi
chmod 0755 "$tools"
