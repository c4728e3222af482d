#!/bin/sh
# 471-kernel-xpython: xeus-python (Debian's xpython, kernelspec `xpython`)
# behind execute_xpy_code, in inherit and isolated mode, with and without
# kernel_uid_range: no install_packages, checkpoint or restore in the tool
# list; state across calls; stdout and stderr; an exception as an error
# whose type is the class name (xeus-python sends "<class 'X'>") with an
# ANSI-free traceback; the last value; a matplotlib figure as image/png
# (MPLBACKEND from kernel_environment: matplotlib_backend is ipykernel's);
# a timeout, which ends xeus-python (its SIGINT handler exits), with the
# output before it kept and the session working again; code_prefix.
# Also: codeexecd -n refuses kernel_history for it (seccomp mode is 483's).
. "$(dirname "$0")/lib.sh"
# Long (several daemons, or every mode): CI's first stage only.
slow_suite

require_cmd curl
require_binaries
[ -r /usr/share/jupyter/kernels/xpython/kernel.json ] ||
	skip "no xeus-python kernelspec (apt-get install xpython)"
require_py matplotlib
setup_tmp
PORT=$(free_port)

for bad in "kernel_history: none"; do
	CFG_EXTRA="kernel: xpython
$bad"
	write_config "$TMPD/bad.yaml"
	"$CODEEXECD" -n -f "$TMPD/bad.yaml" >"$TMPD/bad.out" 2>&1 &&
		fail "codeexecd -n accepts $bad for xeus-python"
	grep -q "${bad%%:*}: .*the kernel xpython runs python" "$TMPD/bad.out" ||
		fail "the refusal of $bad does not name it and the kernel: $(cat "$TMPD/bad.out")"
	ok "refused for xpython: $bad"
done

rounds="inherit isolated"
if [ "$(id -u)" = 0 ]; then
	worker_for_other_uids
	chmod 711 "$TMPD"
	rounds="$rounds inherit:uids isolated:uids"
fi
unshare -U -n true 2>/dev/null || rounds=$(echo "$rounds" | tr ' ' '\n' | grep -v isolated)
for round in $rounds; do
	mode=${round%:*}
	range=
	[ "$round" != "$mode" ] && range='kernel_uid_range: "62400-62499"'
	CFG_EXTRA="kernel: xpython
kernel_network_mode: $mode
kernel_environment:
  MPLBACKEND: module://matplotlib_inline.backend_inline
code_prefix: \"prefixed = 'from code_prefix'\"
$range"
	write_config
	sed -i 's/^name: py$/name: xpy/' "$TMPD/codeexecd.yaml"
	start_daemon
	wait_ready
	run_py "$URL" "$round" <<'EOF2'
import sys, time
from mcp import Client, check, ok, value_of, images_of, png_problem

url, rnd = sys.argv[1:3]
a = Client(url)
a.initialize()
names = {t["name"] for t in a.result("tools/list")["tools"]}
check("execute_xpy_code" in names, "%s: execute_xpy_code is listed" % rnd, names)
for t in ("xpy_install_packages", "xpy_checkpoint", "xpy_restore", "xpy_fork_session"):
    check(t not in names, "%s: %s is not listed for xeus-python" % (rnd, t), names)

def run(code, timeout=None):
    r = a.execute(code, timeout=timeout, tool="execute_xpy_code")
    return r, r["structuredContent"]

r, s = run("import sys\nx = 21\nprint('hello')\nprint('to stderr', file=sys.stderr)\nx * 2")
check(s["success"] is True, "%s: code runs" % rnd, r)
check(s["stdout"] == "hello\n", "%s: print is stdout" % rnd, s)
check("to stderr" in s["stderr"], "%s: sys.stderr is stderr" % rnd, s)
check(value_of(r) == "42", "%s: the last value" % rnd, r)
r, s = run("x + 1")
check(value_of(r) == "22", "%s: state kept across calls" % rnd, r)
r, s = run("prefixed")
check(value_of(r) == "'from code_prefix'", "%s: code_prefix ran" % rnd, r)
ok("%s: state, stdout, stderr, last value, code_prefix" % rnd)

r, s = run("def f():\n    raise ValueError('bad value')\nf()")
err = s.get("error") or {}
check(s["success"] is False and r.get("isError") is True, "%s: an exception fails" % rnd, r)
check(err.get("type") == "ValueError", "%s: error.type is the class name" % rnd, err)
check(err.get("message") == "bad value", "%s: error.message" % rnd, err)
check("\x1b" not in (err.get("traceback") or "") and "f()" in err.get("traceback", ""),
      "%s: an ANSI-free traceback" % rnd, err)
ok("%s: ValueError as the seed's error" % rnd)

r, s = run("import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()")
imgs = images_of(r)
check(imgs and png_problem(imgs[0]["data"]) is None, "%s: a figure is a PNG" % rnd, r)
ok("%s: a matplotlib figure is image/png" % rnd)

# xeus-python 0.14 (Debian 12) ends itself on SIGINT (its handler exits
# with status 0) and has no interrupt_request: a timeout costs the kernel.
t0 = time.time()
r, s = run("import time\nprint('before', flush=True)\ntime.sleep(30)\nprint('after')", timeout=2)
took = time.time() - t0
err = s.get("error") or {}
check(s["success"] is False and err.get("type") in ("TimeoutError", "KernelDied"),
      "%s: time.sleep(30) with timeout 2 fails" % rnd, r)
check(took < 10, "%s: answered in time (%.1f s)" % (rnd, took))
check(s["stdout"] == "before\n", "%s: the output before the timeout is kept" % rnd, s)
r, s = run("print(1 + 1)")
check(s["success"] is True and s["stdout"] == "2\n", "%s: the session runs again" % rnd, r)
ok("%s: timeout after %.1f s: %s: %s; the next call ran (kernel_restarted: %s)"
   % (rnd, took, err.get("type"), err.get("message"), s.get("kernel_restarted")))
EOF2
	stop_daemon
done
