#!/bin/sh
# 204-env-conda: type conda builds an environment.yml with micromamba, mamba
# or conda, adding ipykernel, and the kernel runs in it with CONDA_PREFIX.
# Skipped where no such tool is installed, or where conda-forge cannot be
# reached (conda has no offline wheelhouse equivalent this test could make).
. "$(dirname "$0")/lib.sh"

tool=
for t in micromamba mamba conda; do
	command -v "$t" >/dev/null 2>&1 && tool=$t && break
done
[ -n "$tool" ] ||
	skip "none of micromamba, mamba, conda in PATH (see https://mamba.readthedocs.io)"
require_cmd curl
require_binaries
. "$(dirname "$0")/envlib.sh"

setup_tmp
PORT=$(free_port)
ENVDIR=$TMPD/envs/py
ENV_TYPE=conda
DEPS="name: test
channels:
  - conda-forge
dependencies:
  - python=3.11"
EXTRA="build_timeout_s: 900"
env_config
if ! warm; then
	grep -qiE "connection|resolve|network|timed out|ssl|http" "$TMPD/warm.log" &&
		skip "$tool could not reach conda-forge: $(tail -n 1 "$TMPD/warm.log" | cut -c1-120)"
	fail "--warm failed: $(tail -n 5 "$TMPD/warm.log")"
fi
grep -q "adding it" "$TMPD/warm.log" || fail "ipykernel was not added to dependencies"
grep -q "^- ipykernel" "$ENVDIR/.codeexecd-environment.yml" ||
	fail "ipykernel is not in the environment file given to $tool"
start_daemon
wait_ready
out=$(run_code 'import os, sys; print(os.environ["CONDA_PREFIX"], sys.prefix)') || fail "$out"
[ "$out" = "$ENVDIR $(readlink -f "$ENVDIR")" ] || [ "$out" = "$ENVDIR $ENVDIR" ] ||
	fail "kernel printed '$out'"
ok "type conda: built with $tool, ipykernel added, kernel runs with CONDA_PREFIX"
