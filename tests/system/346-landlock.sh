#!/bin/sh
# 346-landlock: kernel_landlock, from kernels that share the daemon's uid
# (user: codeexecd, no kernel_uid_range) in each kernel_network_mode, with
# Landlock on (auto) and off: reading and writing a sibling session's
# directory, kill(0) of the sibling kernel, of a worker and of the front,
# connecting to the sibling's abstract socket and reading the daemon's
# configuration, against probes_landlock.TABLE; the kernel's own files, a
# pip install into its session and a matplotlib figure must work in every
# column. Also: /health and codeexecd -n say whether Landlock is on and at
# which ABI, and `required` starts kernels here (ABI 6 or later) or is
# refused at start-up. Skips when not root or without Landlock.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/envlib.sh"

require_cmd curl
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: kernels run as $TEST_USER"
unshare -U -n true 2>/dev/null || skip "this host refuses user and network namespaces"
abi=$("$PY" -c 'import ctypes; print(ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1))')
[ "$abi" -ge 1 ] 2>/dev/null || skip "this kernel offers no Landlock"
setup_tmp
make_wheel "$TMPD/wheels" 1.0
chmod -R a+rX "$TMPD/wheels"
PORT=$(free_port)

# codeexecd -n says what kernel_landlock comes to on this host.
CFG_EXTRA="kernel_landlock: auto"
write_config
"$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/n.out" 2>&1 || fail "codeexecd -n: $(cat "$TMPD/n.out")"
grep -q "kernel_landlock: on, ABI $abi" "$TMPD/n.out" || fail "-n does not say Landlock ABI $abi: $(cat "$TMPD/n.out")"
config_set kernel_landlock off
"$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/n.out" 2>&1 || fail "codeexecd -n: $(cat "$TMPD/n.out")"
grep -q "kernel_landlock: off" "$TMPD/n.out" || fail "-n does not say Landlock is off: $(cat "$TMPD/n.out")"
config_set kernel_landlock sometimes
"$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/n.out" 2>&1 && fail "-n took kernel_landlock: sometimes"
grep -q "kernel_landlock" "$TMPD/n.out" || fail "a bad kernel_landlock is not named: $(cat "$TMPD/n.out")"
ok "codeexecd -n reports kernel_landlock, and refuses a value it does not know"

results=$TMPD/results.json
echo '{}' >"$results"
for mode in inherit isolated seccomp; do
	for ll in auto off; do
		CFG_WARM=2
		CFG_EXTRA="kernel_network_mode: $mode
kernel_landlock: $ll"
		write_config
		start_daemon
		wait_ready
		cp "$TMPD/health.body" "$TMPD/body"
		enabled=$(jget 'd["landlock"]["enabled"]')
		want=true
		[ $ll = off ] && want=false
		[ "$enabled" = $want ] || fail "$mode/$ll: /health says landlock.enabled $enabled: $(cat "$TMPD/health.body")"
		[ $ll = off ] || [ "$(jget 'd["landlock"]["abi"]')" = "$abi" ] ||
			fail "$mode/$ll: /health does not say ABI $abi: $(cat "$TMPD/health.body")"
		grep -q "kernel_landlock: $([ $ll = off ] && echo off || echo "on, ABI $abi")" "$TMPD/daemon.log" ||
			fail "$mode/$ll: the log does not say what kernel_landlock is"
		run_py "$URL" "$mode" "$ll" "$results" "$TMPD" "$(front_pid)" "$(worker_pids | head -1)" <<'EOF2' || fail "$mode/$ll: the probes did not run"
import json, os, socket, sys
from mcp import Client, check, images_of, png_problem
import probes_landlock as pl
from probes_tenant import host_pid_of_cwd

url, mode, ll, path, tmpd, front, worker = sys.argv[1:8]
a, b = Client(url), Client(url)
a.initialize()
b.initialize()
r = b.execute(pl.SIBLING)["structuredContent"]
check(not r.get("error"), "%s/%s: the sibling's setup" % (mode, ll), r)
sib = json.loads(r["stdout"])
if not sib["abstract"]:
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind("\0codeexecd-landlock-harness-%d" % os.getpid())
    lsock.listen(4)
    sib["abstract"] = lsock.getsockname().decode()[1:]
sib_pid = host_pid_of_cwd(sib["cwd"])
check(sib_pid, "%s/%s: the sibling kernel's host pid" % (mode, ll))
a.execute(pl.consts(sib["cwd"], sib["abstract"], sib_pid, int(worker), int(front),
                    tmpd + "/codeexecd.yaml"))
out = a.execute("\n".join("_probe(%r, %s)" % p for p in pl.PROBES), timeout=60)
res = pl.outcomes(out["structuredContent"].get("stdout"))
# A pip install into the session, and a figure, in a fresh session.
c = Client(url)
c.initialize()
if mode != "seccomp":  # a seccomp kernel runs no other program (seccomp_filter.c)
    r = c.execute("import subprocess, sys\np = subprocess.run([sys.executable, '-m', 'pip', "
                  "'install', '--no-index', '--no-deps', %r], capture_output=True, text=True)\n"
                  "print(p.returncode, p.stderr[-300:])\nimport tinypkg\nprint('PROBE pip ok')"
                  % (tmpd + "/wheels/tinypkg-1.0-py3-none-any.whl"), timeout=120)
    res.update(pl.outcomes(r["structuredContent"].get("stdout")))
    check(res.get("pip") == "ok", "%s/%s: pip install into the session" % (mode, ll), r)
r = c.execute("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.savefig('f.png')\n"
              "plt.show()\nimport os\nprint('PROBE figure', 'ok' if os.path.getsize('f.png') "
              "else 'empty')", timeout=120)
imgs = images_of(r)
res["figure_shown"] = "ok" if imgs and not png_problem(imgs[0].get("data")) else "none"
res.update(pl.outcomes(r["structuredContent"].get("stdout")))
check(res.get("figure") == "ok" and res["figure_shown"] == "ok",
      "%s/%s: a matplotlib figure saved and shown" % (mode, ll), r)
allr = json.load(open(path))
allr["%s/%s" % (mode, ll)] = res
json.dump(allr, open(path, "w"), indent=1, sort_keys=True)
EOF2
		stop_daemon
	done
done

run_py "$results" <<'EOF2' || fail "an outcome differs from probes_landlock.TABLE"
import json, sys
import probes_landlock as pl
bad = pl.table_problems(json.load(open(sys.argv[1])))
for line in bad:
    print(line)
sys.exit(1 if bad else 0)
EOF2
ok "Landlock stops what probes_landlock.TABLE says in every mode, and kernels still work"

# required: this host offers ABI 6 or later (it starts kernels), or the daemon refuses to start.
CFG_EXTRA="kernel_landlock: required"
write_config
if [ "$abi" -ge 6 ]; then
	start_daemon
	wait_ready
	run_py "$URL" <<'EOF2' || fail "required: no kernel ran"
import sys
from mcp import Client, check
c = Client(sys.argv[1])
c.initialize()
r = c.execute("print(6 * 7)")["structuredContent"]
check(r["stdout"].strip() == "42", "required: a kernel runs", r)
EOF2
	stop_daemon
	ok "kernel_landlock: required starts confined kernels at ABI $abi"
else
	"$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/n.out" 2>&1 && fail "required was taken at ABI $abi"
	grep -q "needs ABI 6" "$TMPD/n.out" || fail "required at ABI $abi: $(cat "$TMPD/n.out")"
	ok "kernel_landlock: required is refused at ABI $abi"
fi
