#!/bin/sh
# check-boundary.sh - the privileged parent and the unprivileged front stay
# apart in the source (doc/README.privsep, "Splitting the supervisor").
#
# The front is a fork of the parent without exec, so one program holds
# both and the linker cannot tell them apart: the folders and the build
# list are what can. This fails when
#   - a file of supervisor/parent/ includes a header of supervisor/front/,
#     or the reverse;
#   - a file at supervisor/'s root other than main.c (which starts up and
#     splits the two) includes a header of either;
#   - a header at the root is not included from both folders: it is then
#     one side's, and belongs in that side's folder;
#   - a header's name is found in two of supervisor/, parent/, front/ and
#     common/ (headers are included by their names alone);
#   - a source lies anywhere but in those three folders of supervisor/;
#   - supervisor/Makefile.am's PARENT_SOURCES, FRONT_SOURCES or
#     SHARED_SOURCES names a file of another folder.
#
# Usage: tests/check-boundary.sh [SUPERVISOR_DIR]; make check runs it.
set -eu

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
sup=${1:-$top_srcdir/supervisor}
common=$sup/../common
failed=0

fail() {
	echo "FAIL: $*" >&2
	failed=1
}

# The headers `file` includes, one a line, as it writes them.
includes() {
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]\([^">]*\)[">].*/\1/p' "$1"
}

# Where the compiler finds header `name` included from `dir`: root,
# parent, front, or other (common/, the system). Its own folder first,
# then -I's order (the root, common/, parent/, front/).
side_of() {
	name=$1 dir=$2
	case $name in
	*/*)
		f=$dir/$name
		[ -f "$f" ] || f=$sup/$name
		[ -f "$f" ] || { echo other; return; }
		d=$(cd "$(dirname "$f")" && pwd)
		;;
	*)
		if [ -f "$dir/$name" ]; then d=$(cd "$dir" && pwd)
		elif [ -f "$sup/$name" ]; then d=$(cd "$sup" && pwd)
		elif [ -f "$common/$name" ]; then d=common
		elif [ -f "$sup/parent/$name" ]; then d=$(cd "$sup/parent" && pwd)
		elif [ -f "$sup/front/$name" ]; then d=$(cd "$sup/front" && pwd)
		else d=other
		fi
		;;
	esac
	case $d in
	"$root") echo root ;;
	"$root/parent") echo parent ;;
	"$root/front") echo front ;;
	*) echo other ;;
	esac
}

[ -d "$sup/parent" ] && [ -d "$sup/front" ] || {
	echo "FAIL: $sup has no parent/ and front/" >&2
	exit 1
}
root=$(cd "$sup" && pwd)

# Sources only at the root, in parent/ and in front/, one level deep.
for f in $(find "$sup" -name '.*' -prune -o -name '*.[ch]' -print); do
	rel=${f#"$sup"/}
	case $rel in
	parent/*/* | front/*/*) ;;
	parent/* | front/*) continue ;;
	*/*) ;;
	*) continue ;;
	esac
	fail "supervisor/$rel is outside supervisor/, supervisor/parent/ and supervisor/front/"
done

# A header's name in one folder only.
for n in $(cd "$sup" && ls *.h parent/*.h front/*.h 2>/dev/null | sed 's|.*/||' | sort -u); do
	c=0
	for d in "$sup" "$sup/parent" "$sup/front" "$common"; do
		[ -f "$d/$n" ] && c=$((c + 1))
	done
	[ "$c" -le 1 ] || fail "$n is a header of two folders: '#include \"$n\"' finds either"
done

# Who includes whom across the boundary.
for rel in $(cd "$sup" && ls *.c *.h parent/*.c parent/*.h front/*.c front/*.h 2>/dev/null); do
	case $rel in
	main.c) continue ;;
	parent/*) from=parent dir=$sup/parent ;;
	front/*) from=front dir=$sup/front ;;
	*) from=root dir=$sup ;;
	esac
	for name in $(includes "$sup/$rel"); do
		to=$(side_of "$name" "$dir")
		case $from:$to in
		parent:front | front:parent | root:parent | root:front)
			fail "supervisor/$rel includes \"$name\", a header of supervisor/$to/" ;;
		esac
	done
done

# A header at the root is both sides'.
for h in $(cd "$sup" && ls *.h 2>/dev/null); do
	for where in parent front; do
		used=0
		for f in $(cd "$sup/$where" && ls *.c *.h 2>/dev/null); do
			if includes "$sup/$where/$f" | grep -qx "$h"; then
				used=1
				break
			fi
		done
		[ $used = 1 ] ||
			fail "supervisor/$h is at the root, but no file of $where/ includes it:" \
				"it is one side's"
	done
done

# The build list's groups hold their own folder's files.
am=$sup/Makefile.am
for group in SHARED PARENT FRONT; do
	var=${group}_SOURCES
	names=$(awk -v v="$var" '
		$1 == v && $2 == "=" { on = 1; $1 = ""; $2 = "" }
		on { l = $0; sub(/\\$/, "", l); printf "%s ", l; if ($0 !~ /\\$/) on = 0 }
	' "$am")
	[ -n "$names" ] || fail "supervisor/Makefile.am has no $var"
	for n in $names; do
		case $group:$n in
		SHARED:*/*) fail "supervisor/Makefile.am: $var names $n, not of the root" ;;
		PARENT:parent/* | FRONT:front/* | SHARED:*) ;;
		*) fail "supervisor/Makefile.am: $var names $n, of another folder" ;;
		esac
		[ -f "$sup/$n" ] || fail "supervisor/Makefile.am: $var names $n, which is not there"
	done
done

[ $failed = 0 ] || exit 1
echo "ok - supervisor/parent/ and supervisor/front/ include none of each other's headers"
echo "ok - the root's headers are both sides', and main.c alone includes either side"
echo "ok - every header's name is found in one folder; the build list's groups hold their folders"
