#!/bin/sh
# 101-systemd-verify.sh - contrib's systemd units pass `systemd-analyze verify`.
#
# The generated units name the installed daemon, which need not exist yet;
# verify checks that every Exec path is executable, so the test verifies
# copies that point at the daemon of this build tree. Warnings (an unknown
# key, a bad value) make verify print but still exit 0, so any output fails.
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
daemon=$top_builddir/supervisor/codeexecd
units="codeexecd.service codeexecd@.service"

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "SKIP: systemd-analyze not found (apt-get install systemd)"
	exit 77
fi
[ -x "$daemon" ] || { echo "FAIL: $daemon not built"; exit 1; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

for u in $units; do
	src=$top_builddir/contrib/$u
	[ -r "$src" ] || { echo "FAIL: $src not generated (make -C contrib)"; exit 1; }
	if grep -n '@[A-Za-z_][A-Za-z_]*@' "$src"; then
		echo "FAIL: $u: placeholders left unsubstituted"
		fail=1
	fi
	# Every command of the daemon, wherever the prefix put it, becomes ours.
	sed "s|=[^ =]*/codeexecd |=$daemon |" "$src" >"$tmp/$u"
	grep -q "^ExecStart=$daemon " "$tmp/$u" || { echo "FAIL: $u: no ExecStart"; fail=1; }
done

# Let verify check the Documentation= pages too, from the source tree.
if command -v man >/dev/null 2>&1; then
	mkdir -p "$tmp/man/man5" "$tmp/man/man8"
	cp "$top_srcdir"/man/*.8 "$tmp/man/man8/"
	cp "$top_srcdir"/man/*.5 "$tmp/man/man5/"
	man_opt=--man=yes
	MANPATH=$tmp/man
	export MANPATH
else
	echo "note: man not found; Documentation= pages not checked"
	man_opt=--man=no
fi

for u in $units; do
	out=$(cd "$tmp" && systemd-analyze verify "$man_opt" "./$u" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
		echo "FAIL: systemd-analyze verify $u (exit $rc):"
		echo "$out"
		fail=1
	else
		echo "ok: $u"
	fi
done
exit "$fail"
