#!/bin/sh
# 101-systemd-verify.sh - contrib's systemd units pass `systemd-analyze verify`.
#
# The generated units name the installed daemon, which need not exist yet;
# verify checks that every Exec path is executable, so the test verifies
# copies that point at the daemon of this build tree. Warnings (an unknown
# key, a bad value) make verify print but still exit 0, so any output fails.

. "$(dirname "$0")/lib.sh"

units="codeexecd.service codeexecd@.service"

command -v systemd-analyze >/dev/null 2>&1 ||
	skip "systemd-analyze not found (apt-get install systemd)"
[ -x "$CODEEXECD" ] || fail "$CODEEXECD not built"
setup_tmp

for u in $units; do
	src=$top_builddir/contrib/$u
	[ -r "$src" ] || fail "$src not generated (make -C contrib)"
	if grep -n '@[A-Za-z_][A-Za-z_]*@' "$src"; then
		check_failed "$u: placeholders left unsubstituted"
	fi
	# Every command of the daemon, wherever the prefix put it, becomes ours.
	sed "s|=[^ =]*/codeexecd |=$CODEEXECD |" "$src" >"$TMPD/$u"
	grep -q "^ExecStart=$CODEEXECD " "$TMPD/$u" || check_failed "$u: no ExecStart"
done

# Let verify check the Documentation= pages too, from the source tree.
if command -v man >/dev/null 2>&1; then
	mkdir -p "$TMPD/man/man5" "$TMPD/man/man8"
	cp "$top_srcdir"/man/*.8 "$TMPD/man/man8/"
	cp "$top_srcdir"/man/*.5 "$TMPD/man/man5/"
	man_opt=--man=yes
	MANPATH=$TMPD/man
	export MANPATH
else
	echo "note: man not found; Documentation= pages not checked"
	man_opt=--man=no
fi

for u in $units; do
	out=$(cd "$TMPD" && systemd-analyze verify "$man_opt" "./$u" 2>&1) && rc=0 || rc=$?
	if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
		check_failed "systemd-analyze verify $u (exit $rc):"
		echo "$out"
	else
		ok "$u"
	fi
done
exit "$FAILED"
