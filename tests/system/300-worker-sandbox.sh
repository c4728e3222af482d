#!/bin/sh
# 300-worker-sandbox: the escape probes of probes.py, run straight against
# codeex-worker (no daemon): inherit first (every probe must reach its
# target, else it does not count), then isolated and seccomp with per-kernel
# identities (the probed kernel and its sibling under different uids), each
# probe giving exactly the errno of probes.EXPECT or being killed; again with
# the worker as supervisor/parent/privdrop.c leaves it (an ordinary uid with ambient
# capabilities). Then the network probes with the worker unprivileged (the
# seed's setup: no per-kernel uids), where isolated needs no root at all.
# First, every descriptor of a running worker must be close-on-exec.
# Needs root (uids, cgroups) and user namespaces; skips saying which is missing.
. "$(dirname "$0")/lib.sh"

require_py ipykernel
[ -x "$WORKER" ] || fail "$WORKER not built"
[ "$(id -u)" = 0 ] || skip "needs root: kernels run under their own uids, which only root can give"
unshare -U -n true 2>/dev/null || skip "this host refuses unprivileged user and network namespaces"
setup_tmp
worker_for_other_uids

run_py "$WORKER" "$TMPD" <<'PYEOF'
import os, sys, tempfile
from probes import Worker, Targets, run_probes, compare, caps_worker, EXPECT
from mcp import check, ok

exe, tmp = sys.argv[1], sys.argv[2]
os.chmod(tmp, 0o711)    # kernels under other uids reach their directories in it
# Below 62000: daemons of other tests sweep (kill) whole kernel_uid_ranges from 62000 up.
UID = 60000 + os.getpid() % 1000 * 2


def kernel(mode, uid, worker=exe):
    cwd = tempfile.mkdtemp(prefix="cwd-%s-%d-" % (mode, uid), dir=tmp)
    start = {"network_mode": mode}
    if uid:
        os.chown(cwd, uid, uid)
        start.update(uid=uid, gid=uid)
    w = Worker(worker, start, cwd=cwd)
    w.ready()
    return w


def probe(mode, uid, worker=exe):
    t = Targets()
    sib = kernel(mode, uid + 1 if uid else 0, worker)
    w = kernel(mode, uid, worker)
    n = [0]

    def execute(code):
        n[0] += 1
        r = w.execute(n[0], code)
        return r.get("stdout"), r.get("error")
    try:
        return run_probes(execute, t, sib.kpid)
    finally:
        w.close()
        sib.close()


# Every descriptor of the worker is close-on-exec: a kernel inherits none.
w = Worker(exe, {})
w.ready()
open_fds = []
for fd in os.listdir("/proc/%d/fdinfo" % w.p.pid):
    with open("/proc/%d/fdinfo/%s" % (w.p.pid, fd)) as f:
        flags = int(f.read().split("flags:")[1].split()[0], 8)
    if int(fd) > 2 and not flags & 0o2000000:
        open_fds.append((fd, os.readlink("/proc/%d/fd/%s" % (w.p.pid, fd))))
w.close()
check(not open_fds, "every descriptor of the worker above 2 is close-on-exec", open_fds)
ok("every descriptor of a running worker is close-on-exec")

base = probe("inherit", 0)
for name, got in sorted(base.items()):
    print("# inherit  %-26s %s" % (name, got))
for mode in ("isolated", "seccomp"):
    res = probe(mode, UID)
    for name, got in sorted(res.items()):
        print("# %-8s %-26s %s" % (mode, name, got))
    problems, notes = compare(res, mode, base)
    for n in notes:
        print("# " + n)
    check(not problems, "%s: every probe gives its expected outcome" % mode, problems)
    ok("%s: %d probes as expected (%d not counted)" % (mode, len(EXPECT[mode]) - len(notes), len(notes)))

# The worker as the supervisor's privilege drop leaves it: an ordinary uid
# with ambient capabilities for the kernels' identities.
capsw = caps_worker(os.path.join(tmp, "worker-with-caps"), UID + 50, exe)
for mode in ("isolated", "seccomp"):
    res = probe(mode, UID + 10, capsw)
    problems, notes = compare(res, mode, base)
    check(not problems, "worker with ambient capabilities, %s: expected outcomes" % mode, problems)
    ok("worker with ambient capabilities, %s: %d probes as expected" % (mode, len(EXPECT[mode]) - len(notes)))

# The worker as an unprivileged user: kernels share its uid.
USER = UID + 100
wrapper = os.path.join(tmp, "worker-as-user")
with open(wrapper, "w") as f:
    f.write("#!/bin/sh\nexec setpriv --reuid %d --regid %d --clear-groups %s \"$@\"\n"
            % (USER, USER, exe))
os.chmod(wrapper, 0o755)
NET = ("socket_inet", "socket_inet6", "tcp_host_loopback", "abstract_unix_host",
       "io_uring_setup", "status_self", "status_grandchild")
for mode in ("isolated", "seccomp"):
    cwd = tempfile.mkdtemp(prefix="cwd-user-", dir=tmp)
    os.chown(cwd, USER, USER)
    w = Worker(wrapper, {"network_mode": mode}, cwd=cwd)
    w.ready()
    n = [0]

    def execute(code):
        n[0] += 1
        r = w.execute(n[0], code)
        return r.get("stdout"), r.get("error")
    res = run_probes(execute, Targets(), w.kpid, NET)
    w.close()
    want = {k: v for k, v in EXPECT[mode].items() if k in NET}
    if mode == "seccomp":   # the bounding set stays full without CAP_SETPCAP
        want["status_self"] = want["status_grandchild"] = "Seccomp=2,NoNewPrivs=1,caps_empty=False"
    bad = ["%s: want %s, got %s" % (k, v, res.get(k)) for k, v in want.items() if res.get(k) != v]
    check(not bad, "unprivileged worker, %s: network probes as expected" % mode, bad)
    ok("unprivileged worker, %s: %d network probes as expected" % (mode, len(want)))
PYEOF
