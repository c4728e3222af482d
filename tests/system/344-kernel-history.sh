#!/bin/sh
# 344-kernel-history: kernel_history none and disk (340 checks the default,
# memory, in every mode): none turns IPython's history off; disk keeps it
# in history.sqlite under the session's own HOME, never another's.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)

for h in none disk; do
	CFG_EXTRA="kernel_history: $h"
	write_config
	start_daemon
	wait_ready
	run_py "$URL" "$h" <<'PYEOF'
import sys
from mcp import Client, check, ok
url, h = sys.argv[1:3]
a, b = Client(url), Client(url)
a.initialize()
b.initialize()
code = ("import os\nhm = get_ipython().history_manager\n"
        "print(hm.enabled, hm.hist_file, os.environ['HOME'], os.getcwd())")
ra = a.execute("secret_%s = 1" % h)
ra = a.execute(code)["structuredContent"]["stdout"].split()
rb = b.execute(code)["structuredContent"]["stdout"].split()
if h == "none":
    check(ra[0] == "False", "kernel_history none: history off", ra)
    ok("kernel_history none: IPython's HistoryManager is disabled")
else:
    check(ra[0] == "True" and ra[1].startswith(ra[2] + "/.ipython/"),
          "kernel_history disk: history.sqlite in the session's HOME", ra)
    check(ra[2] == ra[3] and rb[2] == rb[3] and ra[2] != rb[2],
          "each session's HOME is its own working directory", (ra, rb))
    ok("kernel_history disk: %s, in the session's own HOME" % ra[1])
PYEOF
	stop_daemon
done
