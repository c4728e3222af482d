#!/bin/sh
# 200-env-build: a real pip build from a local wheelhouse, offline
# (--no-index --find-links, a wheel made in the test), used by the kernel;
# then from --index-url (a loopback http.server) and from a local path;
# an unchanged restart does not rebuild (same marker mtime, same directory);
# a changed dependency_file does, and the kernel then sees the new package;
# `codeexecd --warm` builds and exits 0.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel venv pip
require_binaries
. "$(dirname "$0")/envlib.sh"

setup_tmp
HTTP_PID=
# The index server is the test's own: stop it before lib.sh looks for leftovers.
trap 'st=$?; set +e; [ -n "$HTTP_PID" ] && { kill "$HTTP_PID"; wait "$HTTP_PID"; } 2>/dev/null; (exit $st); cleanup' EXIT
PORT=$(free_port)
make_wheel "$TMPD/wheels" 1.0
make_wheel "$TMPD/wheels" 2.0
# A PEP 503 "simple" index is a directory listing: http.server serves one.
mkdir -p "$TMPD/index/simple/tinypkg"
cp "$TMPD/wheels/tinypkg-2.0-py3-none-any.whl" "$TMPD/index/simple/tinypkg/"
IPORT=$(free_port)
"$PY" -m http.server --bind 127.0.0.1 --directory "$TMPD/index" "$IPORT" >"$TMPD/index.log" 2>&1 &
HTTP_PID=$!
ENVDIR=$TMPD/envs/py
MARKER=$ENVDIR/.env_build_complete

# A fresh build by --warm: exit 0, the marker and bin/python, tinypkg 1.0.
DEPS="--no-index
--find-links $TMPD/wheels
tinypkg==1.0"
env_config
warm || fail "--warm failed: $(tail -n 5 "$TMPD/warm.log")"
[ -x "$ENVDIR/bin/python" ] && [ -f "$MARKER" ] || fail "no bin/python or marker after --warm"
[ -f "$ENVDIR/.env_build_digest" ] || fail "no .env_build_digest beside the marker"
grep -q "tinypkg" "$TMPD/warm.log" || fail "the pip install is not in the log"
v=$("$ENVDIR/bin/python" -c 'import tinypkg; print(tinypkg.VALUE)')
[ "$v" = 1.0 ] || fail "tinypkg is $v, want 1.0"
[ -L "$ENVDIR" ] || fail "$ENVDIR is not the symlink to a complete build"
ok "--warm: fresh offline build from a wheelhouse, exit 0"

# Unchanged: the daemon starts without rebuilding, and its kernel uses it.
m1=$(mtime "$MARKER")
t1=$(readlink "$ENVDIR")
start_daemon
wait_ready
[ "$(mtime "$MARKER")" = "$m1" ] && [ "$(readlink "$ENVDIR")" = "$t1" ] ||
	fail "an unchanged restart rebuilt the environment"
grep -q "environment $ENVDIR is ready" "$TMPD/daemon.log" || fail "no 'is ready' in the log"
grep -q "building the" "$TMPD/daemon.log" && fail "the daemon log shows a build"
out=$(run_code 'import sys, tinypkg; print(tinypkg.VALUE, sys.prefix)') ||
	fail "execution failed: $out"
[ "$out" = "1.0 $ENVDIR" ] || fail "kernel printed '$out', want '1.0 $ENVDIR'"
ok "unchanged restart: same marker mtime, kernel imports tinypkg 1.0 from $ENVDIR"
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"

# Changed dependency_file: rebuilt into a new directory, kernel sees 2.0,
# this time from a package index given by --index-url.
DEPS="--index-url http://127.0.0.1:$IPORT/simple/
tinypkg==2.0"
env_config
start_daemon
wait_ready
grep -q "out of date" "$TMPD/daemon.log" || fail "the log does not say the env is out of date"
[ "$(readlink "$ENVDIR")" != "$t1" ] || fail "the changed dependency_file did not rebuild"
[ ! -e "$TMPD/envs/$t1" ] || fail "the replaced build $t1 was not removed"
out=$(run_code 'import tinypkg; print(tinypkg.VALUE)') || fail "execution failed: $out"
[ "$out" = 2.0 ] || fail "kernel sees tinypkg $out after the change, want 2.0"
grep -q "GET /simple/tinypkg/tinypkg-2.0-py3-none-any.whl" "$TMPD/index.log" ||
	fail "the wheel did not come from the --index-url server"
ok "changed dependency_file: rebuilt from --index-url, old build removed, kernel sees 2.0"
stop_daemon

# additional_commands is part of what the digest covers; a requirement may
# be a local path.
t2=$(readlink "$ENVDIR")
DEPS="--no-index
$TMPD/wheels/tinypkg-1.0-py3-none-any.whl"
EXTRA="additional_commands: ['python -c \"import tinypkg\"']"
env_config
warm || fail "--warm failed: $(tail -n 5 "$TMPD/warm.log")"
[ "$(readlink "$ENVDIR")" != "$t2" ] || fail "a new additional_commands entry did not rebuild"
v=$("$ENVDIR/bin/python" -c 'import tinypkg; print(tinypkg.VALUE)')
[ "$v" = 1.0 ] || fail "the local-path requirement gave tinypkg $v"
m3=$(mtime "$MARKER")
warm || fail "--warm failed: $(tail -n 5 "$TMPD/warm.log")"
[ "$(mtime "$MARKER")" = "$m3" ] || fail "--warm rebuilt an unchanged environment"
ls "$TMPD/envs" | grep -q '\.gen-.*\.gen-' && fail "leftover build directories"
[ "$(ls -d "$TMPD"/envs/py.gen-* | wc -l)" = 1 ] || fail "more than one build directory left"
ok "a local wheel path as requirement; additional_commands changes rebuild; --warm again does not"
