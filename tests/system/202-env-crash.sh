#!/bin/sh
# 202-env-crash: `kill -9` of codeexecd during a build, at random instants,
# never leaves a build_dir that looks ready and is not: after each kill the
# previous ready environment or the new complete one is in place (bin/python,
# the marker, and the package importable), and the build's own processes
# are gone. A final --warm completes the latest
# configuration and removes what the killed builds left.
. "$(dirname "$0")/lib.sh"

require_py ipykernel venv pip
require_binaries
. "$(dirname "$0")/envlib.sh"

ITERATIONS=${CODEEXECD_CRASH_ITERATIONS:-6}
setup_tmp
make_wheel "$TMPD/wheels" 1.0
ENVDIR=$TMPD/envs/py

# Complete: bin/python and the marker, or nothing at all under that name.
assert_absent_or_complete() {
	if [ -e "$ENVDIR" ] || [ -L "$ENVDIR" ]; then
		[ -x "$ENVDIR/bin/python" ] && [ -f "$ENVDIR/.env_build_complete" ] &&
			[ -f "$ENVDIR/.env_build_digest" ] ||
			fail "$1: $ENVDIR exists but is not complete: $(ls -la "$ENVDIR/" 2>&1 | head -5)"
		"$ENVDIR/bin/python" -c 'import tinypkg' ||
			fail "$1: $ENVDIR is marked complete but cannot import tinypkg"
	fi
}

# One uninterrupted build tells how long a build takes here.
DEPS="# calibration
--no-index
--find-links $TMPD/wheels
tinypkg"
env_config
s=$(date +%s%N)
warm || fail "--warm failed: $(tail -n 5 "$TMPD/warm.log")"
took=$(( ($(date +%s%N) - s) / 1000000 ))
ok "an uninterrupted build takes ${took} ms; killing within that"

i=0
while [ $i -lt "$ITERATIONS" ]; do
	i=$((i + 1))
	# A new comment line changes the digest, so every start rebuilds.
	DEPS="# iteration $i
--no-index
--find-links $TMPD/wheels
tinypkg"
	env_config
	at=$("$PY" -c 'import random, sys; print("%.2f" % random.uniform(0.02, int(sys.argv[1]) / 1000 * 0.95))' "$took")
	"$CODEEXECD" -d -f "$TMPD/codeexecd.yaml" --warm >"$TMPD/crash-$i.log" 2>&1 &
	pid=$!
	sleep "$at"
	kill -KILL "$pid" 2>/dev/null && state=killed || state="finished before the kill"
	wait "$pid" 2>/dev/null || true
	sleep 0.3
	# The calibration build was ready before, so something ready must remain.
	[ -L "$ENVDIR" ] || fail "iteration $i: the previous ready environment vanished"
	assert_absent_or_complete "iteration $i (kill at ${at}s, $state)"
	left=$(leftovers)
	[ -z "$left" ] || fail "iteration $i: build processes survived the daemon: $(describe_pids $left)"
	ok "iteration $i: kill -9 at ${at}s ($state): a complete environment in place, no process left"
done

warm || fail "--warm after the kills failed: $(tail -n 5 "$TMPD/warm.log")"
assert_absent_or_complete "after the final --warm"
[ -L "$ENVDIR" ] || fail "no environment after the final --warm"
want=$(tail -n 1 "$ENVDIR/.codeexecd-requirements.txt")
[ "$want" = tinypkg ] || fail "the final build has the wrong requirements"
grep -q "^# iteration $ITERATIONS\$" "$ENVDIR/.codeexecd-requirements.txt" ||
	fail "the final build is not of the latest configuration"
n=$(ls -d "$TMPD"/envs/py.gen-* "$TMPD"/envs/py.link-* 2>/dev/null | wc -l)
[ "$n" = 1 ] || fail "$n build directories left after the final --warm: $(ls "$TMPD/envs")"
ok "final --warm: latest configuration complete, leftovers removed"
