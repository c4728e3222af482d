#!/bin/sh
# 345-seccomp-env-links: seccomp's immutable-environment rule holds through
# symbolic links in the middle of a path. A kernel_network_mode
# seccomp kernel of its own uid is started straight from codeexec-worker
# from a Python virtual environment reached through a link, as a build_dir
# that is a link would be: through a link to a root-owned tree it starts;
# through a link whose target, or a directory above that target, the
# kernel's uid owns (so the kernel could rename the environment away and
# put its own code in its place for every later kernel) the START fails
# naming that directory, as it does when the same tree is named without a
# link. Likewise an LD_LIBRARY_PATH entry and a link to a link.
. "$(dirname "$0")/lib.sh"

require_py ipykernel
[ -x "$WORKER" ] || fail "$WORKER not built"
[ "$(id -u)" = 0 ] || skip "needs root: the kernel runs under a uid of its own"
setup_tmp
worker_for_other_uids
chmod 711 "$TMPD" # the kernel's uid reaches its working directory and the environments

run_py "$WORKER" "$TMPD" <<'PYEOF'
import os, shutil, subprocess, sys, tempfile
from probes import Worker
from mcp import check, ok

exe, tmp = sys.argv[1], sys.argv[2]
# Below 62000: daemons of other tests sweep (kill) whole kernel_uid_ranges from 62000 up.
UID = 61000 + os.getpid() % 500 * 2

# A root-owned environment (bin/python links to /usr/bin/python3), copied
# into a directory the kernel's uid owns and into one it is the owner of.
good = os.path.join(tmp, "good", "env")
os.makedirs(os.path.dirname(good))
subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", "--system-site-packages",
                good], check=True)
kw = os.path.join(tmp, "kw")            # owned by the kernel's uid
os.mkdir(kw)
shutil.copytree(good, os.path.join(kw, "env"), symlinks=True)
os.chown(kw, UID, UID)
own = os.path.join(tmp, "own", "env")   # itself owned by the kernel's uid
shutil.copytree(good, own, symlinks=True)
os.chown(own, UID, UID)
links = {"goodlink": good, "badlink": os.path.join(kw, "env"), "ownlink": own,
         "linklink": os.path.join(tmp, "badlink")}
for name, target in links.items():
    os.symlink(target, os.path.join(tmp, name))


def start(python, env=None):
    """'READY', or the START_FAILED message."""
    cwd = tempfile.mkdtemp(prefix="cwd-", dir=tmp)
    os.chown(cwd, UID, UID)
    s = {"network_mode": "seccomp", "uid": UID, "gid": UID}
    if env:
        s["env"] = dict({"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}, **env)
    w = Worker(exe, s, cwd=cwd, python=python)
    try:
        w.ready()
        return "READY"
    except RuntimeError as e:
        return str(e)
    finally:
        w.close()


def py(d):
    return os.path.join(tmp, d, "bin", "python")


cases = [
    ("a root-owned environment", good + "/bin/python", None, "READY"),
    ("the same through a link", py("goodlink"), None, "READY"),
    ("an environment in a directory of the kernel's uid", kw + "/env/bin/python", None,
     "seccomp: %s is owned by the kernel's identity" % kw),
    ("the same through a link", py("badlink"), None,
     "seccomp: %s is owned by the kernel's identity" % kw),
    ("the same through a link to that link", py("linklink"), None,
     "seccomp: %s is owned by the kernel's identity" % kw),
    ("a link to an environment the kernel's uid owns", py("ownlink"), None,
     "seccomp: %s is owned by the kernel's identity" % own),
    ("an LD_LIBRARY_PATH entry through a link", "/usr/bin/python3",
     {"LD_LIBRARY_PATH": os.path.join(tmp, "badlink", "lib")},
     "seccomp: %s is owned by the kernel's identity" % kw),
]
bad = []
for what, python, env, want in cases:
    got = start(python, env)
    print("# %-50s %s" % (what, got))
    if want not in got:
        bad.append("%s: want %r, got %r" % (what, want, got))
check(not bad, "seccomp's immutable-environment rule holds through links", bad)
ok("%d environments: started or refused as they should" % len(cases))
PYEOF
