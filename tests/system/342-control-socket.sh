#!/bin/sh
# 342-control-socket: who may use the control socket. It
# admits by uid alone: root; the daemon's user when kernels do not share it
# (kernel_uid_range); members of control_group; never a uid a kernel may
# run under, even one that is in control_group. A control_group that is
# the kernels' group stops start-up. (340 probes it from inside kernels.)
. "$(dirname "$0")/lib.sh"

require_cmd curl setpriv
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: the callers are other uids (setpriv)"
id nobody >/dev/null 2>&1 && getent group nogroup >/dev/null 2>&1 ||
	skip "no user nobody and group nogroup to play an operator"
CTL=$top_builddir/ctl/codeexecctl
[ -x "$CTL" ] || fail "$CTL not built"
setup_tmp
ensure_test_user
worker_for_other_uids
chmod 711 "$TMPD"
cp "$CTL" "$TMPD/libexec/" && CTL=$TMPD/libexec/codeexecctl
SOCK=$TMPD/run/control/codeexecd.sock
PORT=$(free_port)

# as UID GID [GROUPS] -- codeexecctl status; prints "rc output".
as() {
	uid=$1 gid=$2 groups=${3:-}
	if [ -n "$groups" ]; then
		out=$(setpriv --reuid="$uid" --regid="$gid" --groups="$groups" "$CTL" -s "$SOCK" status 2>&1)
	else
		out=$(setpriv --reuid="$uid" --regid="$gid" --clear-groups "$CTL" -s "$SOCK" status 2>&1)
	fi
	echo "$? $out"
}

# expect_admitted WHO RESULT / expect_refused WHO RESULT
expect_admitted() {
	case $2 in "0 "*codeexecd*) ok "$1: admitted" ;; *) fail "$1 was refused: $2" ;; esac
}
expect_refused() {
	case $2 in 0\ *) fail "$1 was admitted: $2" ;; *) ok "$1: refused (${2%%
*})" ;; esac
}

CFG_EXTRA='kernel_uid_range: "62400-62499"
user: codeexecd
control_group: nogroup'
write_config
start_daemon
wait_ready
expect_admitted root "$(as 0 0)"
cu=$(id -u codeexecd)
cg=$(id -g codeexecd)
expect_admitted "the daemon's user (kernels have other uids)" "$(as "$cu" "$cg")"
expect_admitted "nobody, in control_group nogroup" "$(as 65534 65534)"
r=$(as 62450 62450 65534)
expect_refused "a kernel uid of the range, even with nogroup" "$r"
case $r in *"not allowed"*) ok "... by the daemon, on its uid" ;;
*) fail "a kernel uid with nogroup should reach the socket and be refused by uid: $r" ;; esac
expect_refused "uid 12345, no operator" "$(as 12345 12345)"
stop_daemon

# Kernels share the daemon's user: it is a kernel's uid now, so refused,
# and its directory is root's.
CFG_EXTRA='user: codeexecd'
write_config
start_daemon
wait_ready
expect_admitted root "$(as 0 0)"
expect_refused "the daemon's user, which kernels share" "$(as "$cu" "$cg")"
[ "$(stat -c '%U %a' "$(dirname "$SOCK")")" = "root 700" ] ||
	fail "$(dirname "$SOCK") is $(stat -c '%U %a' "$(dirname "$SOCK")"), want root 700"
ok "the socket's directory is root's, 0700"
stop_daemon

# A control_group kernels run as is refused at start-up.
CFG_EXTRA="user: codeexecd
control_group: $(id -gn codeexecd)"
write_config
timeout 120 "$CODEEXECD" -d -f "$TMPD/codeexecd.yaml" -W "$WORKER" >"$TMPD/bad.log" 2>&1 &&
	fail "the daemon started with the kernels' group as control_group"
grep -q "is a group kernels run as" "$TMPD/bad.log" || fail "no reason given: $(cat "$TMPD/bad.log")"
ok "control_group = the kernels' group: start-up refused with the reason"
