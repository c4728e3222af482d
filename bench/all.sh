#!/bin/sh
# bench/all.sh - every benchmark of bench/, one after the other, each
# writing its own table into bench/README.md (with the machine, the load
# average and the commit): the round trips, new sessions, streaming and
# cancels (run.sh), many sessions at once (run.sh -s) and memory
# (run.sh -m). Takes about a quarter of an hour on 2 CPUs.
# usage: bench/all.sh [-n] [CODEEXECD [CODEEXEC_WORKER]]
#   -n   print the tables only; README.md is left as it is
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for mode in "" -s -m; do
	echo "== bench/run.sh $* $mode" >&2
	# shellcheck disable=SC2086 # $mode is empty or one option
	"$here/run.sh" $mode "$@"
done
