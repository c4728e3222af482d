#!/bin/sh
# toolsearch_recall.sh - issue 31, item 4, in one run: recall@1, recall@5
# and MRR of the built-in search (toolreg_search() of a toolreg.c) and of
# SQLite FTS5 with its porter tokenizer, on the labelled set
# bench/toolsearch (150+ tools, 300+ queries), and the time per query at
# the set's size and at 10,000 tools.
#
# Usage, from a configured and built tree (bench/README.md):
#   bench/toolsearch_recall.sh [-v] [SOURCE [DATADIR]]
# SOURCE: what search is measured: a source tree (a directory), or a git
# revision of this repository (a branch such as main or search, extracted
# with git archive into a temporary directory); default: this tree. Its
# supervisor/front/toolreg*.c (but toolreg_azure.c, the remote backend) are
# compiled with this tree's common/libcommon.a and autoconf.h into a
# temporary directory, so SOURCE is only read; -lstemmer is added when
# they include libstemmer.h, -lwordnet when they include wn.h;
# BENCH_CFLAGS (e.g. -DW_SYN=0.1) is passed to the compiler, to override
# toolreg.c's weights. DATADIR: default bench/toolsearch (this
# tree's). -v: list the queries not ranked first.
set -e
verbose=
if [ "$1" = -v ]; then verbose=-v; shift; fi
here=$(cd "$(dirname "$0")/.." && pwd)
data=${2:-$here/bench/toolsearch}
build=$(pwd)
[ -f "$build/common/libcommon.a" ] || { echo "run from a built tree (no common/libcommon.a)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$1" ] || [ -d "$1" ]; then
	src=$(cd "${1:-$here}" && pwd)
	what="$src ($(git -C "$src" log -1 --format='%h %s' 2>/dev/null || echo 'not git'), with its uncommitted changes)"
else
	mkdir "$tmp/src"
	git -C "$here" archive "$1" supervisor/front | tar -x -C "$tmp/src"
	src=$tmp/src
	what="revision $1 ($(git -C "$here" log -1 --format='%h %s' "$1"))"
fi
files=$(ls "$src"/supervisor/front/toolreg*.c | grep -v '/toolreg_azure\.c$')
libs=
grep -q 'libstemmer\.h' $files && libs="-lstemmer -pthread"
grep -q '<wn\.h>' $files && libs="$libs -lwordnet"
echo "== built-in search: $what: $(echo "$files" | sed 's|.*/supervisor/|supervisor/|' | tr '\n' ' ')"
${CC:-cc} -O2 $BENCH_CFLAGS -I"$src/supervisor/front" -I"$build/common" -I"$here/common" -I"$build" \
	"$here/bench/toolsearch_recall.c" $files \
	"$build/common/libcommon.a" $(pkg-config --libs yaml-0.1 json-c) $libs -lm \
	-o "$tmp/toolsearch_recall"
"$tmp/toolsearch_recall" $verbose "$data"
echo "== SQLite FTS5, tokenizer porter unicode61 ($(/usr/bin/python3 -c 'import sqlite3; print(sqlite3.sqlite_version)'))"
n=$(/usr/bin/python3 -c 'import sys, yaml; print(len(yaml.safe_load(open(sys.argv[1]))["tools"]))' "$data/registry.yaml")
/usr/bin/python3 "$here/bench/toolsearch_fts5.py" $([ -n "$verbose" ] || echo -q) "$data" "$n" 10000
