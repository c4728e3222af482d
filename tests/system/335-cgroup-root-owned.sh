#!/bin/sh
# 335-cgroup-root-owned: with kernels sharing the daemon's user (user:, no
# kernel_uid_range) and the daemon started as root, the control-group tree
# is root's and closed to kernels: the daemon logs the two
# capabilities it keeps for that; every kernel group's directory and files
# are root's and its parent is root's with mode 0700; from inside a kernel,
# a detached grandchild can make no group below or beside its own, nor move
# into a sibling session's group (EACCES each), and is gone once its
# session's DELETE returns; a kernel started again in the same session
# (after a crash) is in the same group; the parent is removed at stop.
# Then a daemon that never was root (user nobody, in a v1 freezer group
# delegated to nobody): it warns that its kernels own their groups, and a
# kernel can indeed make a group beside its own, as codeexecd(8) says.
# Skips when not root or without a usable freezer (or v2) hierarchy.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: only a daemon started as root keeps the groups root's"
setup_tmp
"$WORKER" -p >"$TMPD/layout.json" || true
grep -q '"freezer"' "$TMPD/layout.json" ||
	skip "no cgroup v2 and no v1 freezer hierarchy usable here: $(cat "$TMPD/layout.json")"
PORT=$(free_port)
CFG_WARM=2
write_config
grep -q '^user: ' "$TMPD/codeexecd.yaml" || fail "the config sets no user"
start_daemon
wait_ready
for cap in dac_override chown; do
	grep -q "keeping CAP_$cap: .*control group" "$TMPD/daemon.log" ||
		fail "the daemon does not say it keeps CAP_$cap for control groups: $(grep keeping "$TMPD/daemon.log")"
done
ok "kept for the groups: $(grep -o 'keeping CAP_[a-z_]*' "$TMPD/daemon.log" | tr '\n' ' ')"

run_py "$URL" "$DAEMON_PID" "$TMPD/parents" <<'EOF'
import os, random, stat, sys
from mcp import check, ok
from probes_tenant import TENANT_PRELUDE, session, run, host_pids, wait_gone, outcomes
import escape_table as et

url, dpid, parents_out = sys.argv[1:4]
a, b = session(url), session(url)
run(b, "1")


def groups(c):
    """The kernel's freezer (or v2) group as the host names it."""
    out = []
    for l in run(c, "print(open('/proc/self/cgroup').read())")["stdout"].splitlines():
        if l.count(":") < 2:
            continue
        _h, ctls, path = l.split(":", 2)
        if "freezer" in ctls.split(","):
            out.append("/sys/fs/cgroup/freezer" + path)
        elif ctls == "" and path != "/":
            out.append("/sys/fs/cgroup" + path)
    return out


ga = groups(a)
check(ga and all(os.path.isdir(g) for g in ga), "a's kernel has a group", ga)
parents = sorted({os.path.dirname(g) for g in ga})
for p in parents:
    st = os.stat(p)
    check(st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o700,
          "the kernels' parent %s is root's, 0700" % p, (st.st_uid, oct(st.st_mode)))
for g in ga:
    owners = {n: os.lstat(os.path.join(g, n)).st_uid for n in os.listdir(g)}
    owners["."] = os.lstat(g).st_uid
    check(set(owners.values()) == {0}, "every file of %s is root's" % g,
          {n: u for n, u in owners.items() if u != 0})
ok("groups %s and their %d files root's, parents %s root's 0700"
   % (ga, len(os.listdir(ga[0])), parents))
open(parents_out, "w").write("\n".join(parents))

# From inside: no group below or beside its own, no move into b's group.
run(a, TENANT_PRELUDE + et.ESCAPE_GROUP)
res = {}
tags = {}
for where in ("own", "parent"):
    tags[where] = "%d" % random.randrange(10 ** 8, 10 ** 9)
    res[where] = outcomes(run(a, "_probe('g', lambda: _escape_group(%r, %r))"
                              % (tags[where], where))["stdout"])["g"]
res.update(outcomes(run(a, "\n".join("_probe(%r, %s)" % p for p in et.MOVE_PROBES))["stdout"]))
want = {"own": "EACCES", "parent": "EACCES", "parent_procs_move": "EACCES",
        "parent_tasks_move": "EACCES", "sibling_procs_move": "EACCES",
        "sibling_tasks_move": "EACCES"}
check(res == want, "the kernel can make no group and move into none", res)
ok("from inside: %s" % res)
escapers = host_pids(tags["own"], want=1) + host_pids(tags["parent"], want=1)
check(len(escapers) == 2, "the two grandchildren that tried run", escapers)

# A kernel started again in the session enters the same group.
s = a.execute("import os; os._exit(1)")["structuredContent"]
check(not s.get("success"), "the kernel dies", s)
ga2 = groups(a)
check(ga2 == ga, "the restarted kernel is in its session's group", (ga, ga2))
check(all(os.lstat(g).st_uid == 0 for g in ga2), "the group is still root's")
ok("restarted kernel back in %s" % ga2)
a.delete()
left = wait_gone(escapers)
check(not left, "the grandchildren end with their session's DELETE", left)
ok("%s gone after DELETE" % escapers)
b.delete()
EOF
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"
for p in $(cat "$TMPD/parents"); do
	[ ! -e "$p" ] || fail "the parent $p is left after stop"
done
ok "parents removed at stop"

# --- A daemon that was never root ---------------------------------------------
# Its own freezer group, delegated to nobody, is where it makes codeexecd/<pid>.
own=$("$PY" -c 'import json, sys
f = json.load(open(sys.argv[1]))["freezer"]
print(f["parent"][:-len("/codeexecd/probe")] if f["version"] == 1 and
      f["parent"].endswith("/codeexecd/probe") else "")' "$TMPD/layout.json")
if [ -z "$own" ] || ! command -v setpriv >/dev/null 2>&1; then
	ok "no v1 freezer hierarchy or no setpriv: the never-root daemon is not checked"
	exit 0
fi
G=$own/cxd335-$$
# The delegated group goes when the test ends, whatever its outcome.
cg_cleanup() {
	rc0=$?
	set +e
	[ -z "$DAEMON_PID" ] || stop_daemon
	[ ! -d "$G" ] || find "$G" -depth -type d -exec rmdir {} + 2>/dev/null
	(exit $rc0)
	cleanup
}
trap cg_cleanup EXIT
mkdir "$G"
chown -R nobody "$G"
mkdir -p "$TMPD/nobody/state" "$TMPD/nobody/run"
chown -R nobody "$TMPD/nobody"
cp "$CODEEXECD" "$TMPD/nobody/codeexecd"
rm -f "$TMPD/env.lock"
sed -e '/^user: /d' -e "s#^state_dir: .*#state_dir: $TMPD/nobody/state#" \
	-e "s#^runtime_dir: .*#runtime_dir: $TMPD/nobody/run#" \
	-e "s#^  warm: .*#  warm: 1#" "$TMPD/codeexecd.yaml" >"$TMPD/nobody.yaml"
echo "asset_cache_dir: $TMPD/nobody/state/assets" >>"$TMPD/nobody.yaml"
: >"$TMPD/daemon.log"
LOG=$TMPD/daemon.log
sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$G" \
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$TMPD/nobody/codeexecd" -d -f "$TMPD/nobody.yaml" -W "$WORKER" >>"$LOG" 2>&1 &
DAEMON_PID=$!
wait_ready
grep -q "kernels share the daemon's uid, which owns their control groups (not started as root)" \
	"$LOG" || fail "a never-root daemon with groups gives no warning: $(grep -i group "$LOG")"
[ "$(stat -c %U "$G/codeexecd/$DAEMON_PID")" = nobody ] ||
	fail "the never-root daemon's parent is not its own"
run_py "$URL" <<'EOF'
import sys
from mcp import check, ok
from probes_tenant import TENANT_PRELUDE, session, run, outcomes

a = session(sys.argv[1])
got = outcomes(run(a, TENANT_PRELUDE + "_probe('parent_mkdir', _cg_parent_mkdir)")["stdout"])
check(got == {"parent_mkdir": "ok"}, "a kernel of a never-root daemon makes a group beside its own",
      got)
ok("never root: the daemon warns, and a kernel makes a group beside its own: %s" % got)
a.delete()
EOF
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "the never-root daemon's exit status is $DAEMON_RC"
