#!/bin/sh
# 332-cgroup-limits-owned: a kernel cannot lift its own limits.
# limits without kernel_uid_range are refused at start-up, naming
# the reason (kernels of the daemon's own uid get none). With kernel_uid_range, in inherit, isolated and seccomp (and
# isolated once more with the daemon dropped to user nobody), the kernel
# can open none of memory.limit_in_bytes, pids.max, cpu.cfs_quota_us (or
# their v2 names), freezer.state, its group's cgroup.procs, its parent's
# cgroup.procs, nor make a group beside its own: EACCES for each. Two daemons
# at once get a parent each (codeexecd/<pid>), owned by their own users,
# under a codeexecd/ that stays root's; both parents are gone after stop.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root to create the kernels' cgroups"
setup_tmp
worker_for_other_uids
chmod 711 "$TMPD" # kernels under other uids reach their session directories
"$WORKER" -p >"$TMPD/layout.json" ||
	skip "not every cgroup controller is usable here: $(cat "$TMPD/layout.json")"
PORT=$(free_port)
LIMITS='limits:
  memory_mb: 256
  pids: 64
  cpu: 0.5
  required: true'

# 1. Refused without kernel_uid_range.
CFG_EXTRA=$LIMITS
write_config
start_daemon
daemon_gone() { ! kill -0 "$DAEMON_PID" 2>/dev/null; }
wait_for 60 "a daemon with limits and no kernel_uid_range exits" daemon_gone
wait "$DAEMON_PID" && rc=0 || rc=$?
DAEMON_PID=
[ $rc -ne 0 ] || fail "a daemon with limits and no kernel_uid_range started"
grep -q "need kernel_uid_range: limits are not offered to kernels of the daemon's own uid" \
	"$TMPD/daemon.log" || fail "the refusal does not say why: $(tail -n 3 "$TMPD/daemon.log")"
ok "limits without kernel_uid_range: refused at start-up ($(grep -o 'limits.memory_mb, limits.pids and limits.cpu need kernel_uid_range' "$TMPD/daemon.log"))"

# 2. With kernel_uid_range, the kernel writes nothing of its group.
for round in inherit isolated seccomp isolated:nobody; do
	mode=${round%:*}
	user=
	[ "$round" != "$mode" ] && user="user: ${round#*:}"
	if [ $mode = isolated ] && ! unshare -U -n -m true 2>/dev/null; then
		echo "# isolated: this host refuses user namespaces; not run"
		continue
	fi
	CFG_EXTRA="$LIMITS
kernel_network_mode: $mode
kernel_uid_range: \"63350-63359\"
$user"
	write_config
	start_daemon
	wait_ready
	run_py "$URL" "$round" "$DAEMON_PID" <<'EOF2'
import sys
from mcp import check, ok
from probes_tenant import CGROUP_PROBES, EXPECT, session, run, probe, compare

url, rnd, dpid = sys.argv[1:4]
c = session(url)
got = probe(c, CGROUP_PROBES)
for n, g in sorted(got.items()):
    print("# %-16s %-24s %s" % (rnd, n, g))
problems = compare(got, EXPECT["cgroup"])
check(not problems, "%s: the kernel can write nothing of its control group" % rnd, problems)
own = run(c, "print(open('/proc/self/cgroup').read())")["stdout"].splitlines()
v1 = [l.split(":", 2)[2].strip() for l in own
      if l.count(":") >= 2 and l.split(":")[1] in ("memory", "pids", "cpu", "freezer")]
check(v1 and all("/codeexecd/%s/" % dpid in p for p in v1),
      "%s: the kernel's v1 groups lie in this daemon's own parent codeexecd/%s" % (rnd, dpid), v1)
ok("%s: %d probes EACCES; groups %s" % (rnd, len(got), sorted(set(v1))))
EOF2
	stop_daemon
done

# 3. Two daemons at once: a parent each, each its daemon's user's, gone at stop.
tops=$("$PY" -c 'import json, os, sys
l = json.load(open(sys.argv[1]))
print(" ".join(os.path.dirname(l[c]["parent"]) for c in ("memory", "pids", "cpu", "freezer")
               if l.get(c, {}).get("version") == 1))' "$TMPD/layout.json")
[ -n "$tops" ] || { ok "no v1 hierarchy: per-instance parents not checked"; exit 0; }
CFG_EXTRA="$LIMITS
kernel_uid_range: \"63350-63359\""
write_config
start_daemon
wait_ready
PID_A=$DAEMON_PID
PORT_A=$PORT
mkdir -p "$TMPD/b/state" "$TMPD/b/run"
PORT=$(free_port)
CFG_EXTRA="$LIMITS
kernel_uid_range: \"63360-63369\"
user: nobody"
write_config "$TMPD/b.yaml"
config_set state_dir "$TMPD/b/state" "$TMPD/b.yaml"
config_set runtime_dir "$TMPD/b/run" "$TMPD/b.yaml"
"$CODEEXECD" -d -f "$TMPD/b.yaml" -W "$WORKER" >>"$TMPD/b.log" 2>&1 &
PID_B=$!
BASE=http://127.0.0.1:$PORT
wait_ready
for top in $tops; do
	[ "$(stat -c %U "$top")" = root ] || fail "$top was given to $(stat -c %U "$top")"
	[ "$(stat -c %U "$top/$PID_A")" = root ] || fail "$top/$PID_A is not root's"
	[ "$(stat -c %U "$top/$PID_B")" = nobody ] || fail "$top/$PID_B is not nobody's"
done
ok "two daemons: parents codeexecd/$PID_A (root) and codeexecd/$PID_B (nobody) under root's codeexecd/"
kill -TERM "$PID_B"
wait "$PID_B" || true
stop_daemon
for top in $tops; do
	for p in $PID_A $PID_B; do
		[ ! -e "$top/$p" ] || fail "$top/$p is left after its daemon stopped"
	done
done
ok "both parents removed at stop"
