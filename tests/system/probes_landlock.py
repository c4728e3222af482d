"""probes_landlock.py - what kernel_landlock keeps a kernel from, probed
from inside a kernel (346-landlock.sh).

Each probe prints "PROBE name outcome": "ok" when the kernel reached its
target, else the errno's name. TABLE gives the outcome each must have per
kernel_network_mode, with Landlock on and off; the Landlock-off column is
the baseline that shows what Landlock stops.
"""

# Run in the sibling kernel: a file of its own, an abstract socket it
# listens on, and where it is. The socket stays bound while the kernel
# lives. A seccomp kernel may not bind (seccomp_filter.c): "abstract" is
# then "", and the harness listens in its stead.
SIBLING = r"""
import json, os, socket
open("mine.txt", "w").write("sibling's")
_ab = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    _ab.bind("\0codeexecd-landlock-%d" % os.getpid())
    _ab.listen(4)
    _name = _ab.getsockname().decode()[1:]
except OSError:
    _name = ""
print(json.dumps({"cwd": os.getcwd(), "abstract": _name}))
"""

# Run in the probed kernel, after PRELUDE % consts.
PRELUDE = r"""
import errno, os, signal, socket
SIB_CWD, SIB_ABSTRACT, SIB_PID, WORKER_PID, FRONT_PID, CONFIG = %r, %r, %d, %d, %d, %r


def _probe(name, fn):
    try:
        fn()
        out = "ok"
    except OSError as e:
        out = errno.errorcode.get(e.errno, str(e.errno))
    print("PROBE", name, out, flush=True)


def _abstract():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect("\0" + SIB_ABSTRACT)
    finally:
        s.close()


def _own():
    open("own.txt", "w").write("mine")
    assert open("own.txt").read() == "mine"
    os.makedirs("d/e", exist_ok=True)
    os.rename("own.txt", "d/e/own.txt")
    os.unlink("d/e/own.txt")
"""

PROBES = [
    ("read_sibling_dir", "lambda: os.listdir(SIB_CWD)"),
    ("read_sibling_file", "lambda: open(SIB_CWD + '/mine.txt').read()"),
    ("write_sibling_dir", "lambda: open(SIB_CWD + '/intruder.txt', 'w').write('x')"),
    ("kill_sibling_kernel", "lambda: os.kill(SIB_PID, 0)"),
    ("kill_worker", "lambda: os.kill(WORKER_PID, 0)"),
    ("kill_front", "lambda: os.kill(FRONT_PID, 0)"),
    ("connect_sibling_abstract", "_abstract"),
    ("read_config", "lambda: open(CONFIG).read()"),
    ("own_files", "_own"),
    ("read_system", "lambda: open('/etc/passwd').read() and os.listdir('/usr/lib')"),
]

# Reached in every column: what a kernel must keep doing.
WORKS = {"own_files": "ok", "read_system": "ok"}

# mode -> landlock on? -> probe -> outcome. An isolated kernel has its own
# pid and network namespaces: no pid outside exists for it (ESRCH), and no
# abstract socket outside answers it (ECONNREFUSED), with Landlock or not;
# its mount namespace covers state_dir, keeping only its own session's
# directory there: the sibling's does not exist for it (ENOENT).
_OFF = {"read_sibling_dir": "ok", "read_sibling_file": "ok", "write_sibling_dir": "ok",
        "kill_sibling_kernel": "ok", "kill_worker": "ok", "kill_front": "ok",
        "connect_sibling_abstract": "ok", "read_config": "ok"}
_ON = {"read_sibling_dir": "EACCES", "read_sibling_file": "EACCES",
       "write_sibling_dir": "EACCES", "kill_sibling_kernel": "EPERM", "kill_worker": "EPERM",
       "kill_front": "EPERM", "connect_sibling_abstract": "EPERM", "read_config": "EACCES"}
_NS = {"kill_sibling_kernel": "ESRCH", "kill_worker": "ESRCH", "kill_front": "ESRCH",
       "connect_sibling_abstract": "ECONNREFUSED", "read_sibling_dir": "ENOENT",
       "read_sibling_file": "ENOENT", "write_sibling_dir": "ENOENT"}


def _col(base, extra=None):
    d = dict(base, **WORKS)
    d.update(extra or {})
    return d


# A seccomp kernel's filter refuses every connect() (seccomp_filter.c).
_SC = {"connect_sibling_abstract": "EPERM"}

TABLE = {
    "inherit": {False: _col(_OFF), True: _col(_ON)},
    "isolated": {False: _col(_OFF, _NS), True: _col(_ON, _NS)},
    "seccomp": {False: _col(_OFF, _SC), True: _col(_ON)},
}


def consts(sib_cwd, sib_abstract, sib_pid, worker_pid, front_pid, config):
    return PRELUDE % (sib_cwd, sib_abstract, sib_pid, worker_pid, front_pid, config)


def outcomes(stdout):
    res = {}
    for line in (stdout or "").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "PROBE":
            res[parts[1]] = parts[2]
    return res


def table_problems(res, modes=None):
    """Each outcome of res ("MODE/auto" or "MODE/off" -> probe -> outcome)
    that differs from TABLE, for the given modes (default: all), as lines."""
    bad = []
    for mode in modes or TABLE:
        for on, want in TABLE[mode].items():
            got = res["%s/%s" % (mode, "auto" if on else "off")]
            for name, w in want.items():
                if got.get(name) != w:
                    bad.append("%s landlock %s: %s is %s, want %s"
                               % (mode, "on" if on else "off", name, got.get(name), w))
    return bad
