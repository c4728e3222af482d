#!/bin/sh
# 476-kernel-r-landlock: kernel_landlock with an R kernel (IRkernel), as
# 346 probes it for ipykernel: kernels that share the daemon's uid (no
# kernel_uid_range), inherit and isolated mode, Landlock on (auto) and off.
# The probes of probes_landlock.py run in a python3 that the R kernel
# starts with system2() (a child in the kernel's Landlock domain, uid and
# namespaces); each must give probes_landlock.TABLE's outcome: the
# sibling's directory, the daemon's configuration, signals to the sibling
# kernel, a worker and the front, an abstract socket outside the domain;
# the kernel's own files and the system's must still work, and so must R.
# Skips when not root, without namespaces or without Landlock.
. "$(dirname "$0")/lib.sh"
# Long (several daemons): CI's first stage only.
slow_suite

require_cmd curl
require_binaries
require_irkernel
[ "$(id -u)" = 0 ] || skip "needs root: kernels run as $TEST_USER"
unshare -U -n true 2>/dev/null || skip "this host refuses user and network namespaces"
abi=$("$PY" -c 'import ctypes; print(ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1))')
[ "$abi" -ge 6 ] 2>/dev/null || skip "this kernel offers no Landlock ABI 6 (abstract sockets, signals)"
setup_tmp
# R makes its session's temporary directory in TMPDIR at start. With
# Landlock a directory that holds a hidden path (this test's state_dir and
# configuration, under /tmp) gets no rule of its own, only its other
# entries, so R could not create one there: kernels get a TMPDIR of
# their own instead, as a daemon whose state_dir is not below TMPDIR has.
KTMP=$(mktemp -d /var/tmp/codeexecd-476.XXXXXX)
chmod 1777 "$KTMP"
trap 'st=$?; rm -rf "$KTMP"; (exit $st); cleanup' EXIT
export TMPDIR="$KTMP"
PORT=$(free_port)
results=$TMPD/results.json
echo '{}' >"$results"
for mode in inherit isolated; do
	for ll in auto off; do
		CFG_WARM=2
		CFG_EXTRA="kernel: ir
kernel_network_mode: $mode
kernel_landlock: $ll"
		write_config
		sed -i 's/^name: py$/name: r/' "$TMPD/codeexecd.yaml"
		start_daemon
		wait_ready
		run_py "$URL" "$mode" "$ll" "$results" "$TMPD" "$(front_pid)" "$(worker_pids | head -1)" <<'EOF2' || fail "$mode/$ll: the probes did not run"
import base64, json, os, socket, sys
from mcp import Client, check, ok, value_of
import probes_landlock as pl
from probes_tenant import host_pid_of_cwd

url, mode, ll, path, tmpd, front, worker = sys.argv[1:8]
a, b = Client(url), Client(url)
a.initialize()
b.initialize()
r = b.execute("writeLines(\"sibling's\", 'mine.txt'); cat(getwd(), '\\n')",
              tool="execute_r_code")["structuredContent"]
check(not r.get("error"), "%s/%s: the sibling's setup" % (mode, ll), r)
sib_cwd = r["stdout"].strip()
sib_pid = host_pid_of_cwd(sib_cwd)
check(sib_pid, "%s/%s: the sibling kernel's host pid" % (mode, ll))
# The abstract socket lies outside every kernel's Landlock domain.
lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
lsock.bind("\0codeexecd-landlock-r-%d" % os.getpid())
lsock.listen(4)
prelude = pl.consts(sib_cwd, lsock.getsockname().decode()[1:], sib_pid, int(worker),
                    int(front), tmpd + "/codeexecd.yaml")
src = base64.b64encode((prelude + "\n" + "\n".join("_probe(%r, %s)" % p for p in pl.PROBES))
                       .encode()).decode()
rcode = ("out <- system2('/usr/bin/python3', c('-c', shQuote(\"import base64; "
         "exec(base64.b64decode('%s').decode())\")), stdout = TRUE, stderr = TRUE)\n"
         "cat(out, sep = '\\n')" % src)
s = a.execute(rcode, timeout=60, tool="execute_r_code")["structuredContent"]
res = pl.outcomes(s.get("stdout"))
check(len(res) == len(pl.PROBES), "%s/%s: every probe answered" % (mode, ll), s)
r = a.execute("x <- c(1, 2, 3); sum(x * 2)", tool="execute_r_code")
check(value_of(r) == "[1] 12", "%s/%s: R itself still runs" % (mode, ll), r)
allr = json.load(open(path))
allr["%s/%s" % (mode, ll)] = res
json.dump(allr, open(path, "w"), indent=1, sort_keys=True)
ok("%s/%s: %s" % (mode, ll, " ".join("%s=%s" % kv for kv in sorted(res.items()))))
EOF2
		stop_daemon
		[ "$DAEMON_RC" = 0 ] || fail "$mode/$ll: daemon exit status $DAEMON_RC"
	done
done

run_py "$results" <<'EOF2' || fail "an outcome differs from probes_landlock.TABLE"
import json, sys
import probes_landlock as pl
bad = pl.table_problems(json.load(open(sys.argv[1])), ("inherit", "isolated"))
for line in bad:
    print(line)
sys.exit(1 if bad else 0)
EOF2
ok "R kernels: Landlock stops what probes_landlock.TABLE says, and R still works"
