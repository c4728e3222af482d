#!/bin/sh
# 418-warm-preload: pooled kernels are warmed before a session gets them.
# With pool.preload, a new session's kernel has the
# modules imported already; the warm-up is not in the session's history and
# leaves no value in `_`; a long session keeps only its last 1000 inputs
# and is not warned when IPython culls its output cache; debugpy is kept out of kernels;
# a module that cannot be imported makes the call
# fail at once with NoKernel naming the module; a name that is not a module
# name is refused by `codeexecd -n`.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)

# with_preload LIST: the configuration, with pool.preload set to LIST.
with_preload() {
	write_config
	config_set pool.preload "$1"
}

# --- a name that is no module name is refused before start -------------------
with_preload '["os; import shutil"]'
if "$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/check.out" 2>&1; then
	fail "codeexecd -n accepted pool.preload 'os; import shutil'"
fi
grep -q "pool.preload.*not a Python module name" "$TMPD/check.out" ||
	fail "the refusal does not say why: $(cat "$TMPD/check.out")"
ok "pool.preload refuses a name that is no module name: $(head -n 1 "$TMPD/check.out")"

# --- modules preloaded, the warm-up invisible ---------------------------------
# wave and json.tool: modules a fresh kernel does not import.
with_preload '[wave, json.tool]'
start_daemon
wait_ready
run_py "$URL" <<'EOF2'
import sys
from mcp import Client, check, ok, value_of
from calls import sc
a = Client(sys.argv[1])
a.initialize()
r = a.execute("import json, sys\n"
              "print(json.dumps([_, 'wave' in sys.modules, 'json.tool' in sys.modules, "
              "len(In), len(Out), sys.modules.get('debugpy', 'absent')]))")
check(sc(r).get("stdout", "").strip() == '["", true, true, 2, 0, null]',
      "the first call sees the preloaded modules, an empty `_`, only itself in In, "
      "nothing in Out, and debugpy kept out", r)
ok("pool.preload imported before the session's first call; the warm-up left no trace")
# A long session keeps the last 1000 inputs: after each cell, the input
# 1000 cells back goes (In emptied, _iN removed). Jump the count instead of
# running 1000 cells: after the cell that sets it, the count is 2001.
r = a.execute("get_ipython().execution_count = 2000")
r = a.execute("_i1001 = 'an input 1000 cells back'")
r = a.execute("'_i1001' in globals()")
check(value_of(r) == "False", "the input 1000 cells back is dropped after each cell", r)
r = a.execute("_i1010 = 'recent'")
r = a.execute("'_i1010' in globals()")
check(value_of(r) == "True", "... and only that one", r)
# IPython's output cache culls itself, warning in stderr: not to the agent.
r = a.execute("get_ipython().displayhook.cull_cache()")
check(sc(r).get("success") is True and sc(r).get("stderr") == "",
      "culling the output cache writes no warning", r)
ok("long sessions keep the last 1000 inputs; the output cache culls in silence")
EOF2
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"

# --- without preload, the same modules are absent (the check above means something)
CFG_WARM=1
write_config
start_daemon
wait_ready
run_py "$URL" <<'EOF2'
import sys
from mcp import Client, check, ok, value_of
a = Client(sys.argv[1])
a.initialize()
r = a.execute("import sys\n'wave' in sys.modules")
check(value_of(r) == "False", "without pool.preload wave is not imported", r)
ok("without pool.preload the module is absent")
EOF2
stop_daemon

# --- a module that cannot be imported: NoKernel at once, naming it ------------
with_preload '[no_such_module_418]'
start_daemon
# /health says 503 while no kernel can start: wait for an answer, not a 200.
answers() { [ "$(health_status)" != 000 ]; }
wait_for 60 "/health answers" answers
run_py "$URL" <<'EOF2'
import sys, time
from mcp import Client, check, ok
from calls import sc
a = Client(sys.argv[1])
a.initialize()
t0 = time.time()
r = a.execute("1+1", http_timeout=60)
err = sc(r).get("error") or {}
check(err.get("type") == "NoKernel" and "no_such_module_418" in err.get("message", "")
      and "ModuleNotFoundError" in err.get("message", ""),
      "a preload that fails gives NoKernel naming the module and the exception", r)
check(time.time() - t0 < 30, "... without waiting out the wait for a kernel", r)
ok("a failing preload: %s" % err["message"][:160])
EOF2
curl -s "$BASE/health" | grep -q '"kernel_start_failure":"[^"]*no_such_module_418' ||
	fail "/health does not give the reason: $(curl -s "$BASE/health")"
ok "/health gives the reason"
stop_daemon
