"""probes.py - escape probes for kernel_network_mode, per-kernel identities
and resource limits (issue 5 "Tests"), shared by tests/system/3NN-*.sh.

In the style of bubblewrap's try-syscall: each probe is one small piece of
Python run inside a kernel, printing "PROBE <name> <outcome>" where the
outcome is "ok", the errno name, or a description. A probe that kills the
kernel (the seccomp filter's bad-architecture action) shows up as the
worker's KernelDied with SIGSYS.

Two ways to reach a kernel: Worker (this file) speaks common/ipc.h to
codeexec-worker over a socketpair, without the daemon; the MCP tests use
mcp.Client. Both feed run_probes() a function that executes code.
"""

import json
import os
import re
import socket
import struct
import subprocess
import tempfile
import time

# The version of the tree under test: common/ipc.h says it.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common",
                       "ipc.h")) as _h:
    IPC_VERSION = int(re.search(r"#define IPC_VERSION (\d+)", _h.read()).group(1))
START, EXECUTE, INTERRUPT, RESTART, SHUTDOWN = 1, 2, 3, 4, 5
NAMES = {32: "READY", 33: "OUTPUT", 34: "RESULT", 35: "KERNEL_DIED", 36: "LOG",
         37: "START_FAILED"}


class Worker:
    """One codeexec-worker driven over fd 3, as the supervisor would."""

    def __init__(self, exe, start, cwd=None, python="/usr/bin/python3"):
        a, b = socket.socketpair()
        self.sock = a
        self.cwd = cwd or tempfile.mkdtemp(prefix="cxw-cwd-")
        self.rt = tempfile.mktemp(prefix="cxw-rt-", dir="/tmp")
        fd = b.fileno() if b.fileno() != 3 else os.dup(3)

        def child():
            os.dup2(fd, 3, inheritable=True)
        self.p = subprocess.Popen([exe], pass_fds=(3,), preexec_fn=child,
                                  stdin=subprocess.DEVNULL)
        b.close()
        self.buf = b""
        self.logs = []
        p = {"argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
             "env": {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"},
             "cwd": self.cwd, "runtime_dir": self.rt, "interrupt_mode": "signal",
             "startup_timeout_s": 60}
        p.update(start)
        self.send(START, 0, p)
        self.kpid = None

    def send(self, t, i, payload):
        d = json.dumps(payload).encode()
        self.sock.sendall(struct.pack("!HHIII", IPC_VERSION, t, 0, i, len(d)) + d)

    def recv(self, timeout=60):
        self.sock.settimeout(timeout)
        while True:
            if len(self.buf) >= 16:
                _, t, _, i, n = struct.unpack("!HHIII", self.buf[:16])
                if len(self.buf) >= 16 + n:
                    d, self.buf = self.buf[16:16 + n], self.buf[16 + n:]
                    o = json.loads(d) if n else {}
                    if t == 36:
                        self.logs.append(o.get("message"))
                        continue
                    return NAMES.get(t, t), i, o
            c = self.sock.recv(1 << 20)
            if not c:
                return None, 0, None
            self.buf += c

    def ready(self, timeout=90):
        """READY's payload, or raise with START_FAILED's message."""
        end = time.time() + timeout
        while True:
            t, _, o = self.recv(max(0.1, end - time.time()))
            if t == "READY":
                self.kpid = o["kernel_pid"]
                return o
            if t in ("START_FAILED", None):
                raise RuntimeError("kernel did not start: %s" % (o or {}).get("message"))

    def execute(self, i, code, timeout=30, **kw):
        """The RESULT payload of `code` (OUTPUT chunks are dropped)."""
        p = {"code": code, "timeout_s": timeout}
        p.update(kw)
        self.send(EXECUTE, i, p)
        while True:
            t, j, o = self.recv(timeout + 30)
            if t in ("RESULT", None):
                return o or {}

    def close(self):
        try:
            self.send(SHUTDOWN, 0, {})
            self.p.wait(10)
        except Exception:
            self.p.kill()
            self.p.wait()


# A launcher that starts the worker as supervisor/parent/privdrop.c leaves it with
# kernel_uid_range: an ordinary uid holding CAP_SETUID, CAP_SETGID,
# CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER and CAP_KILL as ambient
# capabilities, with an empty bounding set. argv: uid, worker, args...
CAPS_LAUNCHER = r'''
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
CAPS = [7, 6, 0, 1, 3, 5]
mask = sum(1 << c for c in CAPS)
class Hdr(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
class Data(ctypes.Structure):
    _fields_ = [("eff", ctypes.c_uint32), ("perm", ctypes.c_uint32), ("inh", ctypes.c_uint32)]
def capset(d):
    if libc.capset(ctypes.byref(Hdr(0x20080522, 0)), d) != 0:
        raise OSError(ctypes.get_errno(), "capset")
cur = (Data * 2)()
libc.capget(ctypes.byref(Hdr(0x20080522, 0)), cur)
capset((Data * 2)(Data(cur[0].eff, cur[0].perm, mask), Data(cur[1].eff, cur[1].perm, 0)))
for c in range(64):
    if libc.prctl(24, c, 0, 0, 0) != 0:     # PR_CAPBSET_DROP
        break
libc.prctl(8, 1, 0, 0, 0)                   # PR_SET_KEEPCAPS
uid = int(sys.argv[1])
os.setgroups([])
os.setresgid(uid, uid, uid)
os.setresuid(uid, uid, uid)
capset((Data * 2)(Data(mask, mask, mask), Data(0, 0, 0)))
for c in CAPS:
    if libc.prctl(47, 2, c, 0, 0) != 0:     # PR_CAP_AMBIENT_RAISE
        raise OSError(ctypes.get_errno(), "ambient")
os.execv(sys.argv[2], sys.argv[2:])
'''


def caps_worker(path, uid, exe):
    """Write at path a worker executable that runs exe as CAPS_LAUNCHER says."""
    launcher = path + ".py"
    with open(launcher, "w") as f:
        f.write(CAPS_LAUNCHER)
    with open(path, "w") as f:
        f.write("#!/bin/sh\nexec /usr/bin/python3 %s %d %s \"$@\"\n" % (launcher, uid, exe))
    os.chmod(path, 0o755)
    return path


PRELUDE = r'''
import ctypes, errno, mmap, os, socket, subprocess
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
def _sc(*a):
    r = _libc.syscall(*[ctypes.c_long(x) for x in a])
    if r == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r
def _probe(name, fn):
    try:
        v = fn()
        out = v if isinstance(v, str) else "ok"
    except OSError as e:
        out = errno.errorcode.get(e.errno, str(e.errno))
    print("PROBE", name, out, flush=True)
def _ptrace():
    _sc(101, 16, SIB, 0, 0)                 # PTRACE_ATTACH
    os.waitpid(SIB, 0x40000000)             # __WALL
    _sc(101, 17, SIB, 0, 0)                 # PTRACE_DETACH
def _vm_readv():
    addr = 0x10000
    try:
        addr = int(open("/proc/%d/maps" % SIB).readline().split("-")[0], 16)
    except OSError:
        pass
    buf = ctypes.create_string_buffer(8)
    class iovec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
    loc, rem = iovec(ctypes.addressof(buf), 8), iovec(addr, 8)
    _sc(310, SIB, ctypes.addressof(loc), 1, ctypes.addressof(rem), 1, 0)
def _uring():
    p = ctypes.create_string_buffer(120)
    os.close(_sc(425, 4, ctypes.addressof(p)))
def _getfd():
    pfd = os.pidfd_open(SIB)
    try:
        os.close(_sc(438, pfd, 0, 0))
    finally:
        os.close(pfd)
def _int80():
    code = b"\xb8\x14\x00\x00\x00\xcd\x80\xc3"   # mov eax, 20 (i386 getpid); int 0x80; ret
    m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    m.write(code)
    r = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))()
    return "ok" if r == os.getpid() else "ret=%d" % r
def _tcp():
    socket.create_connection(("127.0.0.1", PORT), timeout=3).close()
def _abstract():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(3)
    try:
        s.connect(ABSTRACT)
    finally:
        s.close()
def _control():
    if CONTROL is None:
        return "skip"
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(3)
    try:
        s.connect(CONTROL)
    finally:
        s.close()
def _status(text):
    f = dict(l.split(":\t", 1) for l in text.splitlines() if ":\t" in l)
    caps = all(int(f[k].strip(), 16) == 0
               for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"))
    return "Seccomp=%s,NoNewPrivs=%s,caps_empty=%s" % (
        f["Seccomp"].strip(), f["NoNewPrivs"].strip(), caps)
'''

# A fork bomb for limits.pids (301, 320): forks up to 1000 sleeping
# children, prints "COUNT ERRNO" (ERRNO the name of what stopped it, or
# None), then kills and reaps them.
FORK_BOMB = r'''
import errno, os, time
pids, err = [], None
try:
    for i in range(1000):
        p = os.fork()
        if p == 0:
            time.sleep(20)
            os._exit(0)
        pids.append(p)
except OSError as e:
    err = e.errno
print(len(pids), errno.errorcode.get(err))
for p in pids:
    os.kill(p, 9)
    os.waitpid(p, 0)
'''


def fork_bomb_result(stdout):
    """FORK_BOMB's (count, errno name) from the end of its output."""
    n, err = (stdout or "0 None").split()[-2:]
    return int(n), err


# name, code calling _probe's function
PROBES = [
    ("socket_inet", "lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()"),
    ("socket_inet6", "lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM).close()"),
    ("tcp_host_loopback", "_tcp"),
    ("abstract_unix_host", "_abstract"),
    ("daemon_control_socket", "_control"),
    ("io_uring_setup", "_uring"),
    ("ptrace_sibling", "_ptrace"),
    ("process_vm_readv_sibling", "_vm_readv"),
    ("proc_mem_sibling", "lambda: open('/proc/%d/mem' % SIB, 'rb').close()"),
    ("proc_environ_sibling", "lambda: open('/proc/%d/environ' % SIB, 'rb').read()"),
    ("proc_cwd_sibling", "lambda: os.listdir('/proc/%d/cwd' % SIB)"),
    ("pidfd_getfd_sibling", "_getfd"),
    ("kill_sibling", "lambda: os.kill(SIB, 0)"),
    ("status_self", "lambda: _status(open('/proc/self/status').read())"),
    ("status_grandchild", "lambda: _status(subprocess.run(['/bin/sh', '-c', "
     "'cat /proc/self/status'], capture_output=True, text=True).stdout)"),
    ("x32_syscall", "lambda: _sc(0x40000000 | 39)"),
    ("int80_i386", "_int80"),
]

KILLED = "killed:SIGSYS"
LOCKED = "Seccomp=2,NoNewPrivs=1,caps_empty=True"
NS_ONLY = "Seccomp=0,NoNewPrivs=1,caps_empty=True"

# What each probe must give, per setting: "inherit" (the baseline: every
# probe reaches its target) and each mode with per-kernel identities (the
# probed kernel and its sibling under different uids). "skip" outcomes mean
# the host cannot run the probe at all (x32 ABI compiled out: ENOSYS).
EXPECT = {
    "inherit": {
        "socket_inet": "ok", "socket_inet6": "ok", "tcp_host_loopback": "ok",
        "abstract_unix_host": "ok", "daemon_control_socket": "ok",
        "io_uring_setup": "ok", "ptrace_sibling": "ok",
        "process_vm_readv_sibling": "ok", "proc_mem_sibling": "ok",
        "proc_environ_sibling": "ok", "proc_cwd_sibling": "ok",
        "pidfd_getfd_sibling": "ok", "kill_sibling": "ok",
        "x32_syscall": "ok", "int80_i386": "ok",
    },
    "seccomp": {
        "socket_inet": "EPERM", "socket_inet6": "EPERM", "tcp_host_loopback": "EPERM",
        "abstract_unix_host": "EPERM", "daemon_control_socket": "EPERM",
        "io_uring_setup": "EPERM", "ptrace_sibling": "EPERM",
        "process_vm_readv_sibling": "EPERM", "proc_mem_sibling": "EACCES",
        "proc_environ_sibling": "EACCES", "proc_cwd_sibling": "EACCES",
        "pidfd_getfd_sibling": "EPERM", "kill_sibling": "EPERM",
        "status_self": LOCKED, "status_grandchild": LOCKED,
        "x32_syscall": KILLED, "int80_i386": KILLED,
    },
    # Loopback inside the namespace is private and allowed; the host's is
    # unreachable. The namespace does not stop io_uring (its sockets live in
    # the namespace too) nor other architectures: that is seccomp's job.
    "isolated": {
        "socket_inet": "ok", "socket_inet6": "ok", "tcp_host_loopback": "ECONNREFUSED",
        "abstract_unix_host": "ECONNREFUSED", "io_uring_setup": "ok",
        # a filesystem socket: the namespace does not hide it, the uid does
        "daemon_control_socket": "EACCES",
        # the kernel is pid 1 of a pid namespace of its own, with its own
        # /proc: the sibling does not exist there
        "ptrace_sibling": "ESRCH", "process_vm_readv_sibling": "ESRCH",
        "proc_mem_sibling": "ENOENT", "proc_environ_sibling": "ENOENT",
        "proc_cwd_sibling": "ENOENT", "pidfd_getfd_sibling": "ESRCH", "kill_sibling": "ESRCH",
        "status_self": NS_ONLY, "status_grandchild": NS_ONLY,
        "x32_syscall": "ok", "int80_i386": "ok",
    },
}


class Targets:
    """A TCP listener on the host's loopback and a host abstract Unix socket."""

    def __init__(self):
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.port = self.tcp.getsockname()[1]
        self.abstract = "\0codeexecd-probe-%d" % os.getpid()
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(self.abstract)
        self.unix.listen(8)

    def consts(self, sib, control=None):
        return "SIB = %d\nPORT = %d\nABSTRACT = %r\nCONTROL = %r\n" % (
            sib, self.port, self.abstract, control)


def outcome(stdout, error):
    """The outcome of one probe from its execution's stdout and error."""
    for line in (stdout or "").splitlines():
        if line.startswith("PROBE "):
            return line.split(" ", 2)[2]
    error = error or {}
    msg = error.get("message") or ""
    if error.get("type") == "KernelDied" and "SIGSYS" in msg:
        return KILLED
    return "%s: %s" % (error.get("type"), msg)


def run_probes(execute, targets, sib, names=None, control=None):
    """{name: outcome}. execute(code) -> (stdout, error) in the probed kernel;
    control: the daemon's control socket, when there is a daemon."""
    res = {}
    prelude = PRELUDE + targets.consts(sib, control)
    execute(prelude)
    for name, fn in PROBES:
        if names and name not in names:
            continue
        out = outcome(*execute("_probe(%r, %s)" % (name, fn)))
        res[name] = out
        if out == KILLED or out.startswith("KernelDied"):
            execute(prelude)    # a fresh kernel needs the helpers again
    return res


def compare(results, mode, baseline):
    """(problems, notes): probes whose outcome differs from EXPECT[mode];
    probes the baseline could not reach do not count (notes say why)."""
    problems, notes = [], []
    for name, want in EXPECT[mode].items():
        got = results.get(name)
        if mode != "inherit" and name in EXPECT["inherit"] and baseline.get(name) != "ok":
            notes.append("%s not counted: with inherit it gave %s" % (name, baseline.get(name)))
            continue
        if got != want:
            problems.append("%s: want %s, got %s" % (name, want, got))
    return problems, notes
