#!/bin/sh
# 201-env-stale: the completion marker's rules. A build_dir with bin/python
# and no marker is removed and rebuilt (auto_build: true) or reported
# (auto_build: false), as are missing and out-of-date environments; a failing
# additional_commands entry leaves no marker and keeps the previous build;
# build_timeout_s kills a hanging step's whole process group; build steps run
# in / with a sanitized environment; missing tools and bad environment.yml
# content are start-up errors that say what to do.
. "$(dirname "$0")/lib.sh"

require_cmd curl timeout
require_py ipykernel venv
require_binaries
. "$(dirname "$0")/envlib.sh"

setup_tmp
PORT=$(free_port)
ENVDIR=$TMPD/envs/py
MARKER=$ENVDIR/.env_build_complete

# serve_fails WANT: starting the daemon must fail at once, its message
# containing WANT.
serve_fails() {
	if timeout 60 "$CODEEXECD" -d -f "$TMPD/codeexecd.yaml" >"$TMPD/start.log" 2>&1; then
		fail "the daemon started; expected: $1"
	fi
	grep -qF -- "$1" "$TMPD/start.log" || fail "start-up said: $(tail -n 3 "$TMPD/start.log"); expected: $1"
}

# auto_build false: a missing environment is reported, not built.
AUTO_BUILD=false
env_config
serve_fails "environment $ENVDIR is missing and auto_build is false"
[ ! -e "$ENVDIR" ] || fail "auto_build false created $ENVDIR"
ok "auto_build false: missing environment reported"

# bin/python without the marker: reported with auto_build false...
mkdir -p "$ENVDIR/bin"
ln -s /usr/bin/python3 "$ENVDIR/bin/python"
echo stale >"$ENVDIR/sentinel"
serve_fails "environment $ENVDIR is incomplete"
[ -f "$ENVDIR/sentinel" ] || fail "auto_build false touched the stale directory"
ok "auto_build false: bin/python without marker reported as incomplete"

# ...and replaced by a complete build with auto_build true.
AUTO_BUILD=true
env_config
start_daemon
wait_ready
[ -f "$MARKER" ] && [ -x "$ENVDIR/bin/python" ] || fail "no complete environment after start"
[ ! -e "$ENVDIR/sentinel" ] || fail "the stale directory was not removed"
grep -q "is incomplete" "$TMPD/daemon.log" || fail "the log does not report the stale directory"
out=$(run_code 'import os; print(os.environ["VIRTUAL_ENV"])') || fail "execution failed: $out"
[ "$out" = "$ENVDIR" ] || fail "kernel VIRTUAL_ENV is '$out'"
stop_daemon
ok "auto_build true: stale directory removed and rebuilt, kernel runs in it"

# Out of date with auto_build false: reported, the old build kept.
AUTO_BUILD=false
EXTRA="additional_commands: ['true']"
env_config
serve_fails "is out of date"
ok "auto_build false: out-of-date environment reported"

# --warm builds even with auto_build false: it is the explicit request.
t0=$(readlink "$ENVDIR")
warm || fail "--warm with auto_build false failed: $(tail -n 3 "$TMPD/warm.log")"
[ "$(readlink "$ENVDIR")" != "$t0" ] || fail "--warm with auto_build false did not rebuild"
ok "--warm builds an out-of-date environment even with auto_build false"

# A complete environment without a digest was prepared outside codeexecd:
# it is used as it is, whatever the configuration says.
mv "$ENVDIR/.env_build_digest" "$TMPD/digest.saved"
EXTRA="additional_commands: ['true', 'true']"
env_config
warm || fail "--warm failed: $(tail -n 3 "$TMPD/warm.log")"
grep -q "has no .env_build_digest: prepared outside codeexecd, used as it is" "$TMPD/warm.log" ||
	fail "an externally prepared environment was not used as it is"
[ "$(readlink "$ENVDIR")" != "$t0" ] && [ ! -f "$ENVDIR/.env_build_digest" ] ||
	fail "an externally prepared environment was rebuilt"
ok "marker without digest: an externally prepared environment, used as it is"
mv "$TMPD/digest.saved" "$ENVDIR/.env_build_digest"

# A failing additional_commands entry: no marker, the previous build stays.
AUTO_BUILD=true
t1=$(readlink "$ENVDIR")
EXTRA="additional_commands: ['true', 'echo about to fail; exit 3']"
env_config
warm && fail "--warm succeeded although a command failed"
grep -q "exit status 3: /bin/sh -c echo about to fail; exit 3 (additional_commands item 2)" \
	"$TMPD/warm.log" || fail "the failure is not reported: $(tail -n 2 "$TMPD/warm.log")"
grep -q "sh: about to fail" "$TMPD/warm.log" || fail "the command's output is not in the log"
[ "$(readlink "$ENVDIR")" = "$t1" ] && [ -f "$MARKER" ] || fail "the previous build was not kept"
ls "$TMPD/envs" | grep -v "^$t1\$" | grep -q '\.gen-' && fail "the failed build left its directory"
ok "failing additional_commands: exit non-zero with the reason, previous build kept"

# The same from nothing: nothing is left that could pass for an environment.
rm -rf "$TMPD/envs"
warm && fail "--warm succeeded although a command failed"
[ ! -e "$ENVDIR" ] || fail "a failed first build left $ENVDIR"
ls "$TMPD/envs" | grep -q '\.gen-' && fail "a failed first build left a build directory"
ok "failing additional_commands on a first build: no build_dir, no marker"

# no_process PATTERN: nothing runs whose command line matches PATTERN.
no_process() {
	! pgrep -f "$1" >/dev/null
}

# build_timeout_s kills the hanging step and what it started.
EXTRA="build_timeout_s: 5
additional_commands: ['sleep 47.25 & sleep 47.5']"
env_config
s=$(date +%s)
warm && fail "--warm succeeded although the build timed out"
e=$(($(date +%s) - s))
[ $e -le 20 ] || fail "the timed-out build took $e s"
grep -q "took longer than build_timeout_s (5 s)" "$TMPD/warm.log" ||
	fail "no timeout message: $(tail -n 1 "$TMPD/warm.log")"
wait_for 10 "the timed-out step's processes end" no_process 'sleep 47.[25]'
ok "build_timeout_s: step and its children killed, build failed in $e s"

# A step that exits but leaves a process holding its output is not waited for.
EXTRA="additional_commands: ['sleep 48.25 & echo left one']"
env_config
warm || fail "--warm failed: $(tail -n 3 "$TMPD/warm.log")"
wait_for 10 "a step's background process ends with the build" no_process 'sleep 48.25'
ok "a step's leftover background process is killed with its group"

# Build steps run in /, with nothing of the daemon's environment.
EXTRA="additional_commands: ['pwd > \$VIRTUAL_ENV/cwd.txt; env > \$VIRTUAL_ENV/env.txt']"
env_config
SECRET_TOKEN=build-secret warm || fail "--warm failed: $(tail -n 3 "$TMPD/warm.log")"
[ "$(cat "$ENVDIR/cwd.txt")" = / ] || fail "build step ran in $(cat "$ENVDIR/cwd.txt")"
grep -q SECRET_TOKEN "$ENVDIR/env.txt" && fail "the daemon's SECRET_TOKEN reached a build step"
grep -q "^PATH=$(readlink -f "$ENVDIR")/bin:" "$ENVDIR/env.txt" ||
	fail "the step's PATH does not start with the environment: $(grep ^PATH= "$ENVDIR/env.txt")"
ok "build steps: working directory /, sanitized environment, env bin first in PATH"

# Missing tools and bad conda files stop start-up with what to do.
rm -rf "$TMPD/envs"
EXTRA=
if ! command -v uv >/dev/null 2>&1; then
	ENV_TYPE=uv
	env_config
	warm && fail "type uv built without uv"
	grep -q "type uv needs the uv program, which is not in .*: install it" "$TMPD/warm.log" ||
		fail "no clear message for missing uv: $(tail -n 1 "$TMPD/warm.log")"
	ok "type uv without uv: $(sed -n 's/.*environment: //p' "$TMPD/warm.log" | cut -c1-60)..."
fi
ENV_TYPE=conda
DEPS="name: x
dependencies: python=3.11"
env_config
warm && fail "a bad environment.yml was accepted"
grep -q "line 2: dependencies must be a list" "$TMPD/warm.log" ||
	fail "no clear message for a bad environment.yml: $(tail -n 1 "$TMPD/warm.log")"
ok "type conda: environment.yml checked before use"
if ! command -v micromamba >/dev/null 2>&1 && ! command -v mamba >/dev/null 2>&1 &&
	! command -v conda >/dev/null 2>&1; then
	DEPS="name: x
channels: [conda-forge]
dependencies:
  - python=3.11"
	env_config
	warm && fail "type conda built without a conda tool"
	grep -q "type conda needs micromamba, mamba or conda, and none is in" "$TMPD/warm.log" ||
		fail "no clear message for a missing conda tool: $(tail -n 1 "$TMPD/warm.log")"
	ok "type conda without micromamba, mamba or conda: clear start-up error"
fi
[ ! -e "$ENVDIR" ] || fail "a refused build created $ENVDIR"

# A ready environment in a directory the daemon's user may not write (built
# by root with --warm, as seed 000 advises for immutable images) is used as
# it is; one that needs a build says why it cannot be built.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
	ENV_TYPE=pip
	DEPS=
	EXTRA="asset_cache_dir: $TMPD/nobody/assets"
	env_config
	config_set state_dir "$TMPD/nobody/state"
	config_set runtime_dir "$TMPD/nobody/run"
	warm || fail "--warm as root failed: $(tail -n 3 "$TMPD/warm.log")"
	rm -f "$ENVDIR.lock"
	mkdir -p "$TMPD/nobody"
	chmod 777 "$TMPD/nobody"
	chmod 755 "$TMPD" "$TMPD/envs"
	# A copy nobody can run even when the build tree is closed to it.
	cp "$CODEEXECD" "$TMPD/nobody/codeexecd"
	as_nobody() {
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
			"$TMPD/nobody/codeexecd" -d -f "$TMPD/codeexecd.yaml" --warm >"$TMPD/warm.log" 2>&1
	}
	as_nobody || fail "a ready read-only environment was refused: $(tail -n 2 "$TMPD/warm.log")"
	grep -q "environment $ENVDIR is ready" "$TMPD/warm.log" || fail "not reported ready"
	EXTRA="$EXTRA
additional_commands: ['true']"
	env_config
	config_set state_dir "$TMPD/nobody/state"
	config_set runtime_dir "$TMPD/nobody/run"
	as_nobody && fail "an out-of-date read-only environment was accepted"
	grep -q "Permission denied; environment $ENVDIR is out of date .* and cannot be built" \
		"$TMPD/warm.log" || fail "no clear message: $(tail -n 1 "$TMPD/warm.log")"
	ok "read-only build_dir: a ready environment is used, an out-of-date one reported"
fi
