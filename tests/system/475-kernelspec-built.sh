#!/bin/sh
# 475-kernelspec-built: a kernelspec that the environment's own
# additional_commands install. At the configuration's read it is not there
# yet: codeexecd -n takes it on trust (and says it looks again), and the
# start looks for it once the environment is built, then runs its kernel;
# one the commands did not install fails the start, naming the kernelspec
# and every place looked in. Without additional_commands a missing
# kernelspec is refused at once, as before.
. "$(dirname "$0")/lib.sh"

require_binaries
require_irkernel
setup_tmp
PORT=$(free_port)

# r_config NAME FILE: an R kernel under the kernelspec NAME, which the
# environment's additional_commands install (as a copy of IRkernel's).
r_config() {
	write_config "$2"
	sed -i 's/^name: py$/name: r/' "$2"
	cat >>"$2" <<EOF2
kernel: $1
additional_commands:
  - mkdir -p "\$VIRTUAL_ENV/share/jupyter/kernels/myir"
  - cp /usr/share/jupyter/kernels/ir/kernel.json "\$VIRTUAL_ENV/share/jupyter/kernels/myir/"
EOF2
}

r_config myir "$TMPD/codeexecd.yaml"
"$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/n.out" 2>&1 ||
	fail "codeexecd -n refuses a kernelspec additional_commands install: $(cat "$TMPD/n.out")"
grep -q "kernel: no kernelspec myir yet: looked for again once additional_commands built" \
	"$TMPD/n.out" || fail "codeexecd -n does not say it looks again: $(cat "$TMPD/n.out")"
ok "codeexecd -n: the kernelspec is looked for after the build"

write_config "$TMPD/plain.yaml"
printf 'kernel: myir\n' >>"$TMPD/plain.yaml"
"$CODEEXECD" -n -f "$TMPD/plain.yaml" >"$TMPD/plain.out" 2>&1 &&
	fail "codeexecd -n accepts a missing kernelspec without additional_commands"
grep -q "kernel: no kernelspec myir in $TMPD/env/share/jupyter/kernels" "$TMPD/plain.out" ||
	fail "the refusal does not name the kernelspec: $(cat "$TMPD/plain.out")"
ok "without additional_commands a missing kernelspec is refused at once"

start_daemon
wait_ready
[ -r "$TMPD/env/share/jupyter/kernels/myir/kernel.json" ] ||
	fail "the build did not install the kernelspec"
run_py "$URL" <<'EOF2'
import sys
from mcp import Client, check, ok, value_of
from calls import sc

a = Client(sys.argv[1])
a.initialize()
names = [t["name"] for t in a.result("tools/list")["tools"]]
check("execute_r_code" in names, "execute_r_code is listed", names)
r = a.execute("x <- 2", tool="execute_r_code")
check(sc(r).get("success") is True, "the R kernel runs", r)
r = a.execute("x * 21", tool="execute_r_code")
check(value_of(r) == "[1] 42", "and keeps its state", r)
ok("the kernelspec the build installed runs: [1] 42")
EOF2
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"

# A kernelspec that the commands do not install: the start fails after the
# build, naming it.
r_config notmyir "$TMPD/wrong.yaml"
sed -i "s|^build_dir: .*|build_dir: $TMPD/env2|" "$TMPD/wrong.yaml"
if timeout 300 "$CODEEXECD" -d -f "$TMPD/wrong.yaml" -W "$WORKER" >"$TMPD/wrong.log" 2>&1; then
	fail "the daemon started with a kernelspec no command installed"
fi
grep -q "kernel: no kernelspec notmyir in $TMPD/env2/share/jupyter/kernels, .* (after additional_commands built the environment)" \
	"$TMPD/wrong.log" || fail "the failed start does not say why: $(tail -n 5 "$TMPD/wrong.log")"
ok "a kernelspec the build did not install fails the start, named"
