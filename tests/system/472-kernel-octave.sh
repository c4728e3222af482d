#!/bin/sh
# 472-kernel-octave: GNU Octave through octave_kernel (Debian's
# python3-octave-kernel, kernelspec `octave`, which drives octave-cli over a
# pty with metakernel) behind execute_oct_code, in inherit and isolated
# mode, with and without kernel_uid_range. What works: state across calls,
# output, a matrix's text form, a timeout that aborts pause() and keeps the
# state, and the tool list without install_packages, checkpoint, restore.
# What octave_kernel 0.34 does not give, checked here as it is so that a
# change shows: everything, warnings and error() included, is one pty
# stream on stdout with CRLF line ends; error() is not an error reply (the
# call succeeds, its text is in stdout); a timed-out call answers ok with
# its partial output. Plots need a graphics toolkit (gnuplot) and
# Ghostscript (CI installs gnuplot-nox, ghostscript, fonts-freefont-otf):
# then plot() is an image/png; without gnuplot it prints "no graphics
# toolkits are available".
. "$(dirname "$0")/lib.sh"
# Long (several daemons, or every mode): CI's first stage only.
slow_suite

require_cmd curl
require_binaries
[ -r /usr/share/jupyter/kernels/octave/kernel.json ] ||
	skip "no Octave kernelspec (apt-get install python3-octave-kernel octave)"
command -v octave-cli >/dev/null 2>&1 || skip "no octave-cli (apt-get install octave)"
require_py octave_kernel
setup_tmp
PORT=$(free_port)

rounds="inherit isolated"
if [ "$(id -u)" = 0 ]; then
	worker_for_other_uids
	chmod 711 "$TMPD"
	rounds="$rounds inherit:uids isolated:uids"
fi
unshare -U -n true 2>/dev/null || rounds=$(echo "$rounds" | tr ' ' '\n' | grep -v isolated)
gnuplot=0
# 1: gnuplot and Ghostscript; 2: gnuplot alone; 0: neither.
if command -v gnuplot >/dev/null 2>&1; then
	gnuplot=2
	command -v gs >/dev/null 2>&1 && gnuplot=1
fi
for round in $rounds; do
	mode=${round%:*}
	range=
	[ "$round" != "$mode" ] && range='kernel_uid_range: "62500-62599"'
	CFG_EXTRA="kernel: octave
kernel_network_mode: $mode
$range"
	write_config
	sed -i 's/^name: py$/name: oct/' "$TMPD/codeexecd.yaml"
	start_daemon
	wait_ready
	run_py "$URL" "$round" "$gnuplot" <<'EOF2'
import sys, time
from mcp import Client, check, ok, images_of, png_problem

url, rnd, gnuplot = sys.argv[1], sys.argv[2], sys.argv[3]
a = Client(url)
a.initialize()
names = {t["name"] for t in a.result("tools/list")["tools"]}
check("execute_oct_code" in names, "%s: execute_oct_code is listed" % rnd, names)
for t in ("oct_install_packages", "oct_checkpoint", "oct_restore", "oct_fork_session"):
    check(t not in names, "%s: %s is not listed for Octave" % (rnd, t), names)

def run(code, timeout=None):
    r = a.execute(code, timeout=timeout, tool="execute_oct_code")
    return r, r["structuredContent"]

def lines(text):
    return text.replace("\r\n", "\n")

r, s = run("x = 21;\ndisp('hello')\nx * 2")
check(s["success"] is True, "%s: Octave code runs" % rnd, r)
check(lines(s["stdout"]) == "hello\nans = 42\n", "%s: disp and the value on stdout" % rnd, s)
r, s = run("x + 1")
check("ans = 22" in s["stdout"], "%s: state kept across calls" % rnd, s)
r, s = run("A = magic(3)")
check("8   1   6" in s["stdout"], "%s: a matrix's text form" % rnd, s)
ok("%s: state, output, a matrix" % rnd)

r, s = run("error('bad value %d', 3)")
check("error: bad value 3" in s["stdout"], "%s: error()'s text is in stdout" % rnd, s)
ok("%s: error() reported as output (success %s): octave_kernel sends no error reply"
   % (rnd, s["success"]))

r, s = run("plot([1 3 2])")
if gnuplot == "1":
    imgs = images_of(r)
    check(imgs and png_problem(imgs[0]["data"]) is None, "%s: a plot is a PNG" % rnd, r)
    ok("%s: plot() is image/png" % rnd)
elif gnuplot == "2":
    check("Ghostscript" in s["stderr"], "%s: without gs, the plot fails saying why" % rnd, s)
    ok("%s: no Ghostscript: the inline plot fails naming it" % rnd)
else:
    check("no graphics toolkits" in s["stdout"], "%s: without gnuplot, plot() says why" % rnd, s)
    ok("%s: no gnuplot: plot() prints 'no graphics toolkits are available'" % rnd)

t0 = time.time()
r, s = run("pause(30)\ndisp('after')", timeout=2)
took = time.time() - t0
check(took < 10, "%s: pause(30) with timeout 2 answers in time (%.1f s)" % (rnd, took), r)
check("after" not in s["stdout"], "%s: nothing after pause() ran" % rnd, s)
r, s = run("x")
check("x = 21" in s["stdout"], "%s: state kept after the timeout" % rnd, s)
check(not s.get("kernel_restarted"), "%s: the timeout did not restart Octave" % rnd, s)
ok("%s: timeout aborted pause() in %.1f s, state kept" % (rnd, took))
EOF2
	stop_daemon
done
