#!/bin/sh
# Replay each fuzz harness over its seed corpus (and the config fixtures):
# a regression run of the parsers of untrusted input. Real fuzzing:
# ./configure --enable-fuzzers CC=clang, then run a harness on a corpus dir.
set -e
t="$top_builddir/tests/fuzz"
c="$top_srcdir/tests/fuzz/corpus"
"$t/fuzz_ipc" "$c/ipc"
"$t/fuzz_config" "$c/config" "$top_srcdir/tests/unit/data/config"
"$t/fuzz_jupyter" "$c/jupyter"
"$t/fuzz_authority" "$c/authority"
"$t/fuzz_mcp" "$c/mcp"
"$t/fuzz_priv" "$c/priv"
"$t/fuzz_jwt" "$c/jwt"
"$t/fuzz_egress" "$c/egress"
