#!/bin/sh
# 105-install: `make install` into a DESTDIR puts the daemon, the worker,
# the client, the man pages and the sample configuration where the layout
# says, nothing outside the prefix; the installed daemon runs code from
# there; a reinstall keeps an edited configuration and uninstall leaves it.
. "$(dirname "$0")/lib.sh"

require_cmd curl make
require_py ipykernel
require_binaries
[ -f "$top_builddir/Makefile" ] || skip "no configured build tree at $top_builddir"
setup_tmp

dest=$TMPD/dest
make -s -C "$top_builddir" install DESTDIR="$dest" >"$TMPD/install.log" 2>&1 ||
	{ cat "$TMPD/install.log"; fail "make install DESTDIR failed"; }
prefix=$(sed -n 's/^prefix = //p' "$top_builddir/Makefile")
sysconfdir=$(sed -n 's/^sysconfdir = //p' "$top_builddir/Makefile" | sed "s|\${prefix}|$prefix|")
root=$dest$prefix
for f in "$root/sbin/codeexecd" "$root/sbin/codeexecctl" \
	"$root/libexec/codeexecd/codeexec-worker" "$root/share/man/man8/codeexecd.8" \
	"$root/share/man/man5/codeexecd.yaml.5" "$dest$sysconfdir/codeexecd/codeexecd.yaml"; do
	[ -f "$f" ] || fail "make install did not install $f"
done
ok "make install DESTDIR: daemon, worker, codeexecctl, man pages, sample configuration"
outside=$(cd "$dest" && find . -type f | grep -v "^\.$prefix/" | grep -v "^\.$sysconfdir/" || true)
[ -z "$outside" ] || fail "make install wrote outside the prefix: $outside"
ok "nothing installed outside the prefix and sysconfdir"

# The installed daemon, with its installed worker, runs code.
CODEEXECD=$root/sbin/codeexecd
WORKER=$root/libexec/codeexecd/codeexec-worker
PORT=$(free_port)
write_config
start_daemon
wait_ready
run_py "$URL" <<'PY'
import sys
from mcp import Client, check, ok
c = Client(sys.argv[1])
c.initialize()
r = c.execute("print(6 * 7)")
check(r["structuredContent"]["stdout"] == "42\n", "the installed daemon runs code", r)
ok("the installed daemon and worker run code")
PY
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "installed daemon exited $DAEMON_RC on SIGTERM"

# An operator's configuration survives reinstall and uninstall.
conf=$dest$sysconfdir/codeexecd/codeexecd.yaml
echo "# edited by the operator" >>"$conf"
make -s -C "$top_builddir" install DESTDIR="$dest" >>"$TMPD/install.log" 2>&1 ||
	fail "second make install failed"
tail -n 1 "$conf" | grep -q "edited by the operator" || fail "reinstall overwrote the configuration"
ok "reinstall keeps the operator's configuration"
make -s -C "$top_builddir" uninstall DESTDIR="$dest" >>"$TMPD/install.log" 2>&1 ||
	fail "make uninstall failed"
[ ! -e "$root/sbin/codeexecd" ] || fail "uninstall left $root/sbin/codeexecd"
[ ! -e "$WORKER" ] || fail "uninstall left the worker"
[ -f "$conf" ] || fail "uninstall removed the operator's configuration"
ok "uninstall removes the programs and keeps the operator's configuration"
