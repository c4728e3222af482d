"""probes_tenant.py - probes that tenants stay apart (issue 11 items 1, 2, 3,
5 and 9), run from inside kernels through the real daemon by
tests/system/33N-*.sh, kept apart from probes.py so that an escape suite
can import them.

Each probe is a piece of Python run in a kernel that prints
"PROBE <name> <outcome>" through probes.PRELUDE's _probe(): "ok", the errno
name, or a description. EXPECT says what each must give per mode.

Standard library only (Debian's /usr/bin/python3), on top of mcp.py and
probes.py.
"""

import json
import os
import time
import urllib.request

from mcp import Client, check
from probes import PRELUDE

# The places every uid may write to: a tenant's leftovers there must not
# reach the next tenant of its uid.
SHARED_DIRS = ("/tmp", "/var/tmp", "/dev/shm")

# Helpers run once per kernel, after probes.PRELUDE.
TENANT_PRELUDE = PRELUDE + r'''
import json as _json, sys as _sys
def _in_child(fn):
    """fn() in a forked child (it may change the process for good): its outcome."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            v = fn()
            out = v if isinstance(v, str) else "ok"
        except OSError as e:
            out = errno.errorcode.get(e.errno, str(e.errno))
        except BaseException as e:
            out = "error:%s" % type(e).__name__
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    out = b""
    while True:
        c = os.read(r, 256)
        if not c:
            break
        out += c
    os.close(r)
    os.waitpid(pid, 0)
    return out.decode() or "child died"
def _cg_files():
    """{controller: (own group dir, parent dir)} of this process, v1 and v2."""
    mounts = {}
    for line in open("/proc/self/mountinfo"):
        pre, post = line.split(" - ", 1)
        fstype, _src, opts = post.split()[:3]
        root, mnt = pre.split()[3:5]
        if root != "/":
            continue
        if fstype == "cgroup2":
            mounts[""] = mnt
        elif fstype == "cgroup":
            for o in opts.split(","):
                mounts[o] = mnt
    out = {}
    for line in open("/proc/self/cgroup"):
        _hid, ctls, path = line.rstrip("\n").split(":", 2)
        for c in (ctls.split(",") if ctls else [""]):
            if c in mounts and path != "/":
                d = mounts[c] + path
                out[c or "v2"] = (d, os.path.dirname(d))
    return out
def _cg_open(ctl, v1, v2):
    g = _cg_files()
    if ctl in g:
        d = g[ctl][0] + "/" + v1
    elif "v2" in g:
        d = g["v2"][0] + "/" + v2
    else:
        return "no-group"
    os.close(os.open(d, os.O_WRONLY))
def _cg_parent_procs():
    g = _cg_files()
    for ctl in ("freezer", "memory", "pids", "v2"):
        if ctl in g:
            os.close(os.open(g[ctl][1] + "/cgroup.procs", os.O_WRONLY))
            return
    return "no-group"
def _cg_parent_mkdir():
    g = _cg_files()
    for ctl in ("freezer", "memory", "pids", "v2"):
        if ctl in g:
            os.mkdir(g[ctl][1] + "/escape-%d" % os.getpid())
            os.rmdir(g[ctl][1] + "/escape-%d" % os.getpid())
            return
    return "no-group"
def _shm_find(key):
    if _libc.shmget(key, 0, 0) == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
def _clone3_user():
    args = (ctypes.c_uint64 * 11)()
    args[0] = 0x10000000                    # flags: CLONE_NEWUSER
    args[4] = 17                            # exit_signal: SIGCHLD
    pid = _sc(435, ctypes.addressof(args), 88)
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
def _userns_mount():
    _sc(272, 0x10000000)                    # unshare(CLONE_NEWUSER)
    _sc(272, 0x00020000)                    # unshare(CLONE_NEWNS): root of the new userns
    m = _libc.mount
    if m(b"none", b"/tmp", b"tmpfs", 0, None) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
'''

# Probes of item 9: each in a forked child, since a success changes the process.
NESTED_PROBES = [
    ("unshare_user", "lambda: _sc(272, 0x10000000)"),
    ("unshare_net", "lambda: _sc(272, 0x40000000)"),
    ("unshare_mount", "lambda: _sc(272, 0x00020000)"),
    ("clone3_user", "_clone3_user"),
    ("userns_then_mount", "_userns_mount"),
    ("chroot", "lambda: os.chroot('/')"),
    ("raise_max_userns",
     "lambda: open('/proc/sys/user/max_user_namespaces', 'w').write('1000')"),
]

# Probes of item 3: may the kernel write its own limits or leave its group?
CGROUP_PROBES = [
    ("memory_limit_writable",
     "lambda: _cg_open('memory', 'memory.limit_in_bytes', 'memory.max')"),
    ("pids_max_writable", "lambda: _cg_open('pids', 'pids.max', 'pids.max')"),
    ("cpu_quota_writable", "lambda: _cg_open('cpu', 'cpu.cfs_quota_us', 'cpu.max')"),
    ("freezer_state_writable",
     "lambda: _cg_open('freezer', 'freezer.state', 'cgroup.freeze')"),
    ("own_procs_writable",
     "lambda: _cg_open('freezer', 'cgroup.procs', 'cgroup.procs')"),
    ("parent_procs_writable", "_cg_parent_procs"),
    ("parent_mkdir", "_cg_parent_mkdir"),
]

# What they give. The probing kernels run under kernel_uid_range uids
# unless the key says "-shared" (the daemon's own uid, root in the tests).
EXPECT = {
    # A kernel of another uid than its group's owner writes nothing there.
    "cgroup": {name: "EACCES" for name, _ in CGROUP_PROBES},
    "nested": {
        # The baseline: an unprivileged uid may make a user namespace, and
        # be root there; nothing else without one.
        "inherit": {"unshare_user": "ok", "unshare_net": "EPERM", "unshare_mount": "EPERM",
                    "clone3_user": "ok", "userns_then_mount": "ok", "chroot": "EPERM",
                    "raise_max_userns": "EACCES"},
        # user.max_user_namespaces caps the kernel's outer namespace at the
        # kernel's own: any further one is ENOSPC, and without one no
        # capability, so no namespace, mount or chroot.
        "isolated": {"unshare_user": "ENOSPC", "unshare_net": "EPERM",
                     "unshare_mount": "EPERM", "clone3_user": "ENOSPC",
                     "userns_then_mount": "ENOSPC", "chroot": "EPERM",
                     "raise_max_userns": "EACCES"},
        # The filter: unshare denied, clone3 ENOSYS (libc falls back to clone,
        # whose namespace flags are denied).
        "seccomp": {"unshare_user": "EPERM", "unshare_net": "EPERM", "unshare_mount": "EPERM",
                    "clone3_user": "ENOSYS", "userns_then_mount": "EPERM", "chroot": "EPERM",
                    "raise_max_userns": "EACCES"},
    },
}
EXPECT["nested"]["isolated-shared"] = EXPECT["nested"]["isolated"]
# Landlock refuses a confined process every mount, in a namespace of its own too.
EXPECT["nested"]["inherit-landlock"] = dict(EXPECT["nested"]["inherit"], userns_then_mount="EPERM")
# Item 5, the /proc half: an isolated kernel is pid 1 of its own pid
# namespace with its own /proc; the other modes share the host's /proc.
EXPECT["proc"] = {
    "inherit": {"sibling_cmdline": "ok", "sibling_kill": "EPERM", "own_pid": "host",
                "proc_lists_only_own": "False"},
    "seccomp": {"sibling_cmdline": "ok", "sibling_kill": "EPERM", "own_pid": "host",
                "proc_lists_only_own": "False"},
    "isolated": {"sibling_cmdline": "ENOENT", "sibling_kill": "ESRCH", "own_pid": "one",
                 "proc_lists_only_own": "True"},
}
EXPECT["proc"]["isolated-shared"] = EXPECT["proc"]["isolated"]


def leave_files_code(token):
    """Code writing SECRET into TOKEN (0600) in every shared dir, and a tree."""
    return r'''
import os
for d in %r:
    fd = os.open(os.path.join(d, %r), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"SECRET")
    os.close(fd)
os.makedirs("/tmp/%s.d/sub", mode=0o700)
open("/tmp/%s.d/sub/f", "w").write("SECRET")
os.chmod("/tmp/%s.d/sub", 0)
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
assert libc.shmget(%d, 4096, 0o1000 | 0o600) != -1, "shmget"    # IPC_CREAT
print("LEFT", os.getuid())
''' % (SHARED_DIRS, token, token, token, token, ipc_key(token))


def ipc_key(token):
    """A System V IPC key for token."""
    return 0x33000000 + sum(token.encode()) * 7919 % 0xffffff


def read_files_code(token):
    """Probes reading what leave_files_code wrote: ENOENT when it is gone."""
    lines = ["_probe(%r, lambda: open(%r).read())" % ("read" + d.replace("/", "_"),
                                                     os.path.join(d, token))
             for d in SHARED_DIRS]
    lines.append("_probe('read_tmp_tree', lambda: os.listdir(%r))" % ("/tmp/%s.d" % token))
    lines.append("_probe('sysv_shm', lambda: _shm_find(%d))" % ipc_key(token))
    return "\n".join(lines)


# Leaves two processes behind: one in a new session (Popen), one double-forked
# and detached (its parent gone), each a sleep of a duration no other process
# has. Prints "LEFT <tag>"; host_pids(tag) finds them from outside (an
# isolated kernel sees its own pid namespace only).
LEAVE_PROCS = r'''
import os, random, subprocess
tag = "%d" % random.randrange(10 ** 8, 10 ** 9)
subprocess.Popen(["sleep", "1000." + tag], start_new_session=True)
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(w, b"x")
        os.execvp("sleep", ["sleep", "1001." + tag])
    os._exit(0)
os.close(w)
os.read(r, 1)
os.wait()
print("LEFT", tag)
'''


def host_pids(tag, want=2, timeout=10):
    """Host pids of the sleeps LEAVE_PROCS started with tag (waits for want)."""
    end = time.time() + timeout
    while True:
        found = []
        for p in os.listdir("/proc"):
            try:
                cmd = open("/proc/%s/cmdline" % p, "rb").read().split(b"\0")
            except OSError:
                continue
            if len(cmd) > 1 and cmd[0].endswith(b"sleep") and cmd[1].endswith(
                    b"." + tag.encode()) and pid_alive(int(p)):
                found.append(int(p))
        if len(found) >= want or time.time() > end:
            return sorted(found)
        time.sleep(0.05)


def host_pid_of_cwd(cwd):
    """Host pid of the kernel running in cwd (the lowest pid there)."""
    want = os.path.realpath(cwd)
    pids = []
    for p in os.listdir("/proc"):
        try:
            if p.isdigit() and os.readlink("/proc/%s/cwd" % p) == want:
                pids.append(int(p))
        except OSError:
            pass
    return min(pids) if pids else None


def worker_of(cwd):
    """Host pid of the codeexec-worker (the daemon's child) whose kernel runs in cwd."""
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            if os.readlink("/proc/%s/cwd" % p) != os.path.realpath(cwd):
                continue
        except OSError:
            continue
        pid = int(p)
        while pid > 1:
            ppid = int(open("/proc/%d/stat" % pid).read().rsplit(") ", 1)[1].split()[1])
            if open("/proc/%d/comm" % ppid).read().strip() == "codeexecd":
                return pid
            pid = ppid
    return None


def session(url):
    c = Client(url)
    c.initialize()
    return c


def run(c, code, timeout=30):
    """structuredContent of executing code in c's kernel; fail on an error."""
    s = c.execute(code, timeout=timeout)["structuredContent"]
    check(s.get("success") and not s.get("error"), "execute succeeds", s)
    return s


def outcomes(stdout):
    """{name: outcome} of the PROBE lines in stdout."""
    res = {}
    for line in (stdout or "").splitlines():
        if line.startswith("PROBE "):
            _, name, out = line.split(" ", 2)
            res[name] = out
    return res


def probe(c, probes, in_child=False):
    """Run (name, fn) probes in c's kernel (each in a child when asked)."""
    run(c, TENANT_PRELUDE)
    code = "\n".join(
        ("print('PROBE', %r, _in_child(%s), flush=True)" % (n, f)) if in_child
        else "_probe(%r, %s)" % (n, f) for n, f in probes)
    return outcomes(run(c, code)["stdout"])


def idle_kernels(base):
    with urllib.request.urlopen(base + "/health", timeout=10) as r:
        return json.loads(r.read()).get("idle_kernels", 0)


def wait_idle(base, n=1, timeout=90):
    """Wait (bounded) until the pool holds n idle kernels."""
    end = time.time() + timeout
    while idle_kernels(base) < n:
        check(time.time() < end, "%d idle kernel(s) within %d s" % (n, timeout))
        time.sleep(0.1)


def pid_alive(pid):
    """True if pid runs and is not a zombie."""
    try:
        st = open("/proc/%d/stat" % pid).read()
    except OSError:
        return False
    return st.rsplit(") ", 1)[1].split()[0] not in ("Z", "X")


def wait_gone(pids, timeout=20):
    """Wait (bounded) until no pid of pids is alive; those still alive."""
    end = time.time() + timeout
    while True:
        left = [p for p in pids if pid_alive(p)]
        if not left or time.time() > end:
            return left
        time.sleep(0.1)


def uid_alive(uid):
    """Pids of live processes whose real uid is uid."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            st = os.stat("/proc/" + d)
        except OSError:
            continue
        if st.st_uid == uid and pid_alive(int(d)):
            out.append(int(d))
    return out


def compare(got, want):
    """Problems: probes whose outcome differs from want."""
    return ["%s: want %s, got %s" % (n, w, got.get(n)) for n, w in want.items()
            if got.get(n) != w]
