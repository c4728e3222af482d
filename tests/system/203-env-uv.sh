#!/bin/sh
# 203-env-uv: type uv builds with `uv venv` and `uv pip install` from a local
# wheelhouse (offline), the kernel uses it, an unchanged restart does not
# rebuild. Skipped where uv is not installed.
. "$(dirname "$0")/lib.sh"

command -v uv >/dev/null 2>&1 ||
	skip "uv not found in PATH (install it: pipx install uv, or https://docs.astral.sh/uv/)"
require_cmd curl
require_py ipykernel
require_binaries
. "$(dirname "$0")/envlib.sh"

setup_tmp
PORT=$(free_port)
make_wheel "$TMPD/wheels" 1.0
ENVDIR=$TMPD/envs/py
ENV_TYPE=uv
DEPS="--no-index
--find-links $TMPD/wheels
tinypkg"
env_config
warm || fail "--warm failed: $(tail -n 5 "$TMPD/warm.log")"
grep -q "build: .*uv venv" "$TMPD/warm.log" || fail "the build did not use uv venv"
grep -q "build: .*uv pip install" "$TMPD/warm.log" || fail "the build did not use uv pip install"
[ -f "$ENVDIR/.env_build_complete" ] || fail "no marker"
m1=$(mtime "$ENVDIR/.env_build_complete")
start_daemon
wait_ready
[ "$(mtime "$ENVDIR/.env_build_complete")" = "$m1" ] || fail "an unchanged start rebuilt"
out=$(run_code 'import tinypkg, sys; print(tinypkg.VALUE, sys.prefix)') || fail "$out"
[ "$out" = "1.0 $ENVDIR" ] || fail "kernel printed '$out'"
ok "type uv: built offline with uv, used by the kernel, not rebuilt on restart"
