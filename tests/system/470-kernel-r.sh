#!/bin/sh
# 470-kernel-r: an R kernel (IRkernel's kernelspec `ir`) behind
# execute_r_code. First the configuration: `kernel: ir` and an explicit
# kernel_argv with kernel_language pass codeexecd -n; a missing kernelspec,
# kernel_argv without {connection_file} or without a language, and each key
# only ipykernel honours (kernel_history, matplotlib_backend, wheelhouse,
# pool.preload, checkpoint.*, session_hibernate_after, tools, tools_dir)
# are refused naming the key and the language (seccomp mode is 483's). Then, in
# inherit and isolated mode, with and without kernel_uid_range: the tool
# list (no install_packages, checkpoint or restore; the code argument says
# R), state across calls, stdout and stderr (message(), warning()), stop()
# as an error with its message, the last value, a data frame as text and
# text/html, progress notifications, a base-graphics plot as
# image/png, a timeout and a cancel that interrupt Sys.sleep and keep the state,
# code_prefix run in R before the first call, output truncation with the
# whole in a file, an R that exits reported and replaced (files kept), the
# memory limit's kill reported.
. "$(dirname "$0")/lib.sh"
# Long (several daemons, or every mode): CI's first stage only.
slow_suite

require_cmd curl
require_binaries
require_irkernel
setup_tmp
PORT=$(free_port)

# ---- configuration ----
# check_refused WHAT KEY VALUE: codeexecd -n refuses the R configuration
# with KEY (top-level, pool.NAME or checkpoint.NAME) set to VALUE, and its
# message names WHAT and the language.
check_refused() {
	write_config "$TMPD/bad.yaml"
	printf 'kernel: ir\n' >>"$TMPD/bad.yaml"
	case $2 in
	checkpoint.*)
		sed -i "/^  ${2#checkpoint.}:/d; s/^checkpoint:\$/checkpoint:\n  ${2#checkpoint.}: $3/" \
			"$TMPD/bad.yaml" ;;
	kernel) sed -i '/^kernel: ir$/d' "$TMPD/bad.yaml"; config_set "$2" "$3" "$TMPD/bad.yaml" ;;
	*) config_set "$2" "$3" "$TMPD/bad.yaml" ;;
	esac
	if "$CODEEXECD" -n -f "$TMPD/bad.yaml" >"$TMPD/bad.out" 2>&1; then
		fail "codeexecd -n accepts $2: $3 for an R kernel"
	fi
	grep -qF -- "$1" "$TMPD/bad.out" ||
		fail "codeexecd -n's refusal does not name $1: $(head -c 400 "$TMPD/bad.out")"
	ok "refused: $2: $3 ($(head -c 200 "$TMPD/bad.out" | tr '\n' ' '))"
}

for kv in "kernel_history none" "matplotlib_backend agg" "wheelhouse /tmp" \
	"pool.preload [json]" "checkpoint.max_bytes 4096" "checkpoint.max_seconds 5" \
	"checkpoint.interval_s 30" "session_hibernate_after 60" "tools_dir /tmp" \
	"tools [{name: f, module: m, description: d, return_spec: {type: int, description: n}}]"; do
	check_refused "${kv%% *}: is for ipykernel" ${kv%% *} "${kv#* }"
	grep -q "the kernel ir runs R" "$TMPD/bad.out" ||
		fail "the refusal of ${kv%% *} does not name the language: $(cat "$TMPD/bad.out")"
done
check_refused "no kernelspec nosuchkernel" kernel nosuchkernel
check_refused "kernel_argv: give either kernel" kernel_argv '[R, "{connection_file}"]'

write_config "$TMPD/argv.yaml"
printf '%s\n' 'kernel_argv: [R, --slave, -e, "IRkernel::main()", --args, "{connection_file}"]' \
	>>"$TMPD/argv.yaml"
"$CODEEXECD" -n -f "$TMPD/argv.yaml" >"$TMPD/argv.out" 2>&1 &&
	fail "codeexecd -n accepts kernel_argv without kernel_language"
grep -q "kernel_language must say" "$TMPD/argv.out" ||
	fail "kernel_argv without a language: $(cat "$TMPD/argv.out")"
printf 'kernel_language: R\n' >>"$TMPD/argv.yaml"
"$CODEEXECD" -n -f "$TMPD/argv.yaml" >"$TMPD/argv.out" 2>&1 ||
	fail "codeexecd -n refuses kernel_argv with kernel_language: $(cat "$TMPD/argv.out")"
sed -i 's/"{connection_file}"\]/"conn"]/' "$TMPD/argv.yaml"
"$CODEEXECD" -n -f "$TMPD/argv.yaml" >"$TMPD/argv.out" 2>&1 &&
	fail "codeexecd -n accepts kernel_argv without {connection_file}"
ok "kernel_argv: needs kernel_language and {connection_file}"

# ---- R end to end ----
rounds="inherit isolated"
if [ "$(id -u)" = 0 ]; then
	worker_for_other_uids
	chmod 711 "$TMPD"
	rounds="$rounds inherit:uids isolated:uids"
fi
unshare -U -n true 2>/dev/null || rounds=$(echo "$rounds" | tr ' ' '\n' | grep -v isolated)
# The memory limit needs the kernels' cgroups: root, and usable controllers.
memcg=0
[ "$(id -u)" = 0 ] && "$WORKER" -p >"$TMPD/layout.json" 2>&1 && memcg=1
for round in $rounds; do
	mode=${round%:*}
	range=
	# limits.memory_mb needs kernel_uid_range (and usable cgroups).
	mem=0
	[ "$round" != "$mode" ] && range='kernel_uid_range: "62300-62399"' && mem=$memcg
	[ $mem = 1 ] && range="$range
limits:
  memory_mb: 256"
	CFG_EXTRA="kernel: ir
kernel_network_mode: $mode
code_prefix: \"prefixed <- 'from code_prefix'\"
output_truncation_threshold: 1000
$range"
	write_config
	sed -i 's/^name: py$/name: r/; s/^default_timeout: 30$/default_timeout: 20/' \
		"$TMPD/codeexecd.yaml"
	"$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/check.out" 2>&1 ||
		fail "$round: codeexecd -n refuses kernel: ir: $(cat "$TMPD/check.out")"
	start_daemon
	wait_ready
	run_py "$URL" "$round" "$mem" <<'EOF2'
import base64, sys, time
from mcp import Client, check, ok, text_of, value_of, images_of, png_problem

url, rnd, memcg = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
a = Client(url)
a.initialize()
tools = a.result("tools/list")["tools"]
names = {t["name"] for t in tools}
check("execute_r_code" in names, "%s: execute_r_code is listed" % rnd, names)
for t in ("r_install_packages", "r_checkpoint", "r_restore", "r_fork_session"):
    check(t not in names, "%s: %s is not listed for R" % (rnd, t), names)
ex = [t for t in tools if t["name"] == "execute_r_code"][0]
desc = ex["inputSchema"]["properties"]["code"]["description"]
check(desc.startswith("R code"), "%s: the code argument says R" % rnd, desc)
import re
check(re.search(r"Language: R \d+\.\d+\.\d+ \(Jupyter kernel ir\)", ex["description"]),
      "%s: the description names R and its version" % rnd, ex["description"])
ok("%s: tools/list offers what works for R" % rnd)

def run(code, timeout=None):
    r = a.execute(code, timeout=timeout, tool="execute_r_code")
    return r, r["structuredContent"]

r, s = run("x <- 21\ncat('hello\\n')\nmessage('to stderr')\nx * 2")
check(s["success"] is True, "%s: R code runs" % rnd, r)
check(s["stdout"] == "hello\n", "%s: cat() is stdout" % rnd, s)
check("to stderr" in s["stderr"], "%s: message() is stderr" % rnd, s)
check(value_of(r) == "[1] 42", "%s: the last value is its text form" % rnd, r)
r, s = run("x + 1")
check(value_of(r) == "[1] 22", "%s: state kept across calls" % rnd, r)
r, s = run("prefixed")
check(value_of(r) == '[1] "from code_prefix"', "%s: code_prefix ran in R" % rnd, r)
ok("%s: state, stdout, stderr, last value, code_prefix" % rnd)

r, s = run("warning('careful')\n1")
check("careful" in s["stderr"], "%s: warning() is stderr" % rnd, s)
r, s = run("f <- function() stop('bad value')\nf()")
err = s.get("error") or {}
check(s["success"] is False and r.get("isError") is True, "%s: stop() fails the call" % rnd, r)
check("bad value" in (err.get("message") or ""), "%s: error.message is stop()'s" % rnd, err)
check(err.get("type"), "%s: error.type is set" % rnd, err)
check("stop(" in (err.get("traceback") or ""), "%s: error.traceback shows the R calls" % rnd, err)
check("\x1b" not in err.get("traceback"), "%s: no ANSI escapes in the traceback" % rnd, err)
ok("%s: stop(): %s: %s" % (rnd, err.get("type"), err.get("message")))

r, s = run("plot(1:10)")
imgs = images_of(r)
check(imgs, "%s: a base-graphics plot comes back as an image" % rnd, r)
check(png_problem(imgs[0]["data"]) is None, "%s: it is a PNG" % rnd, png_problem(imgs[0]["data"]))
check(any(o["mime_type"] == "image/png" for o in s["rich_outputs"]),
      "%s: rich_outputs holds image/png" % rnd, s["rich_outputs"])
ok("%s: plot(1:10) is image/png" % rnd)

t0 = time.time()
r, s = run("cat('before\\n')\nSys.sleep(30)\ncat('after\\n')", timeout=2)
took = time.time() - t0
check(s["success"] is False and (s.get("error") or {}).get("type") == "TimeoutError",
      "%s: Sys.sleep(30) with timeout 2 is a TimeoutError" % rnd, r)
check(took < 10, "%s: interrupted in time (%.1f s)" % (rnd, took))
check("after" not in s["stdout"], "%s: nothing after the sleep ran" % rnd, s)
r, s = run("x")
check(value_of(r) == "[1] 21", "%s: state kept after the interrupt" % rnd, r)
check(not s.get("kernel_restarted"), "%s: the interrupt did not restart R" % rnd, s)
ok("%s: timeout interrupts R in %.1f s, state kept" % (rnd, took))

# notifications/cancelled interrupts R too, and the state stays.
from calls import Stream, call_msg, notify, wait_file
st = Stream(a, call_msg(a, "execute_r_code", {"code": "file.create('started-91')\n"
                                              "Sys.sleep(20)\ncat('late\\n')"}, 91)).start()
t0 = time.time()
wait_file(a, "started-91", name="r")
n = notify(a, "notifications/cancelled", {"requestId": 91, "reason": "test 470"})
check(st.wait(10) and time.time() - t0 < 8, "%s: the cancelled call ends early" % rnd,
      st.evidence())
r, s = run("x")
check(value_of(r) == "[1] 21" and not s.get("kernel_restarted"),
      "%s: after a cancel R runs at once with its state" % rnd, r)
ok("%s: a cancel interrupts R, state kept" % rnd)

r, s = run("data.frame(a = 1:2, b = c('u', 'v'))")
mimes = {o["mime_type"]: o["data"] for o in s["rich_outputs"]}
check("a b" in mimes.get("text/plain", "") and "<table" in mimes.get("text/html", ""),
      "%s: a data frame comes back as text and text/html" % rnd, s["rich_outputs"])
ok("%s: a data frame: %s" % (rnd, sorted(mimes)))

from calls import Stream, call_msg
code = "for (i in 0:3) { cat('line', i, '\\n'); flush.console(); Sys.sleep(0.7) }"
st = Stream(a, call_msg(a, "execute_r_code", {"code": code}, 70, token="tok-470")).run()
prog, resp = st.progress(), st.responses()
check(len(resp) == 1 and len(prog) >= 2, "%s: progress notifications while R runs" % rnd,
      st.evidence())
early = "".join(e["params"].get("message", "") for t, e in prog if t < resp[0][0] - 0.7)
check("line 0" in early, "%s: R's output arrived as progress before the end" % rnd,
      [(t, e["params"]) for t, e in prog])
ok("%s: %d progress notifications carry R's output as it is printed" % (rnd, len(prog)))

import os, re
r, s = run("cat(strrep('x', 100000))")
m = re.search(r"(\d+) more characters were cut; the whole stdout is in (codeexecd-output/\S+)",
              s["stdout"])
check(m and len(s["stdout"]) < 2000, "%s: a 100000-character cat() is cut with a marker" % rnd,
      s["stdout"][-300:])
r, s = run("nchar(readLines('%s', warn = FALSE))" % m.group(2))
check(value_of(r) == "[1] 100000", "%s: the named file holds all of it" % rnd, r)
ok("%s: output truncated at 1000, whole in %s" % (rnd, m.group(2)))

# SIGUSR2, R's "quit without saving": IRkernel's quit() does not end R,
# and an isolated R is pid 1 of its namespace, which ignores signals it
# has no handler for (SIGKILL from itself).
r, s = run("writeLines('still here', 'kept.txt')\ntools::pskill(Sys.getpid(), tools::SIGUSR2)\nSys.sleep(5)")
err = s.get("error") or {}
check(s["success"] is False and err.get("type") == "KernelDied",
      "%s: an R that ends is KernelDied" % rnd, r)
r, s = run("readLines('kept.txt')")
check(s.get("kernel_restarted") is True and value_of(r) == '[1] "still here"',
      "%s: the next call runs in a fresh R in the same directory" % rnd, r)
ok("%s: R's exit reported (%s); a fresh kernel, files kept" % (rnd, err.get("message")))

if memcg:
    r, s = run("big <- numeric(800 * 1024 * 1024 / 8)\nlength(big)")
    err = s.get("error") or {}
    check(s["success"] is False and err.get("type") == "MemoryLimitExceeded",
          "%s: 800 MB in a 256 MB kernel is MemoryLimitExceeded" % rnd, r)
    ok("%s: the memory limit kills R and says so: %s" % (rnd, err.get("message", "")[:80]))
EOF2
	stop_daemon
done
