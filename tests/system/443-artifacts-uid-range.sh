#!/bin/sh
# 443-artifacts-uid-range: artifacts when kernels run under uids of
# kernel_uid_range. outputs/ belongs to the kernel's uid; the
# session's files reach py_send and resources/read through the worker, which
# opens them and passes the descriptor; a file in outputs/ that is not the
# kernel uid's (one root put there, as a hard link to a foreign file would
# be) is refused and is no resource.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: kernels run under uids from kernel_uid_range"
setup_tmp
worker_for_other_uids
chmod 711 "$TMPD"
PORT=$(free_port)
mkdir -m 777 "$TMPD/pub"
CFG_EXTRA="kernel_uid_range: \"63430-63432\"
publishers:
  - name: local
    type: local
    base_dir: $TMPD/pub/published"
write_config
start_daemon
wait_ready

run_py "$URL" "$TMPD/pub/published" <<'EOF2'
import hashlib, os, stat, sys
from mcp import Client, check, ok, value_of
from calls import tool, sc

url, pub = sys.argv[1], sys.argv[2]
a = Client(url)
a.initialize()
r = a.execute("import os\nd = os.environ['CODEEXECD_OUTPUT_DIR']\n"
              "open(os.path.join(d, 'mine.txt'), 'w').write('kernel data')\n"
              "(d, os.getuid())")
d, kuid = eval(value_of(r))
st = os.stat(d)
check(st.st_uid == kuid and 63430 <= kuid <= 63432, "outputs/ belongs to the kernel's uid",
      (st.st_uid, kuid))
check([x["name"] for x in sc(r).get("artifacts", [])] == ["mine.txt"], "the artifact is listed", sc(r))
r = tool(a, "py_send", {"path": "mine.txt"})
check(r.get("isError") is not True and
      sc(r)["sha256"] == hashlib.sha256(b"kernel data").hexdigest(), "py_send copies it", r)
ok("a kernel_uid_range kernel's file is sent")

# A file the kernel's uid does not own.
with open(os.path.join(d, "foreign.txt"), "w") as f:
    f.write("root's")
r = tool(a, "py_send", {"path": "foreign.txt"})
check(r.get("isError") is True and "not owned" in sc(r)["error"]["message"],
      "a file the kernel's uid does not own is refused", r)
res = a.result("resources/list")["resources"]
names = [x["name"] for x in res]
check(names == ["mine.txt"], "only the kernel's own file is a resource", names)
c = a.result("resources/read", {"uri": res[0]["uri"]})["contents"][0]
check(c.get("text") == "kernel data", "resources/read gives it", c)
ok("a foreign file is refused; resources list and read the kernel's file")
EOF2
[ $? -eq 0 ] || fail "the checks failed"
