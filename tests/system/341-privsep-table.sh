#!/bin/sh
# 341-privsep-table: doc/README.privsep's table of what holds in each mode
# is escape_table.TABLE, the table 340-escape-suite checks every probe
# against, rendered (python3 tests/system/escape_table.py --render prints
# it), so the documentation and the tests cannot drift apart.
. "$(dirname "$0")/lib.sh"

[ -x "$PY" ] || skip "$PY not found (apt-get install python3)"
doc=$top_srcdir/doc/README.privsep
[ -f "$doc" ] || fail "$doc is missing"
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/cxd-$test_name.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT
(cd "$sysdir" && "$PY" escape_table.py --render) >"$TMPD/want" || fail "cannot render the table"
# The block between the two marker lines of README.privsep.
awk '/^    -- begin: escape_table.py --render/ { on = 1; next }
	/^    -- end: escape_table.py --render/ { on = 0 }
	on' "$doc" >"$TMPD/got"
[ -s "$TMPD/got" ] || fail "no table between the escape_table.py markers in $doc"
if ! diff -u "$TMPD/got" "$TMPD/want"; then
	fail "README.privsep's table differs from escape_table.TABLE (render it with: cd tests/system && python3 escape_table.py --render)"
fi
ok "README.privsep's table is escape_table.TABLE"
