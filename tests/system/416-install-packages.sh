#!/bin/sh
# 416-install-packages: per-session package installs.
# Two tiny pure-Python packages are made on the fly and built into wheels
# with `pip wheel` into a local wheelhouse (no index here), configured as
# `wheelhouse:`. py_install_packages installs the first in session A: it
# imports in A from A's own directory and raises ImportError in B; `%pip
# install` of the second in A lands there too; the install runs as the
# session's identity and is interrupted at the call's timeout. The shared environment's
# files (hashed) and recorded digest are unchanged; a name starting with
# '-' is refused as an option; an install may be a session's first call;
# a package the wheelhouse lacks fails with pip's output; after A is closed
# its directory, packages included, is gone. As root, the same in kernel_network_mode isolated and
# seccomp (kernels under uids of kernel_uid_range, reading the wheelhouse);
# without a wheelhouse seccomp refuses installs saying why, unless
# dependency_file's option lines say --no-index --find-links DIR. A
# wheelhouse that does not exist stops start-up.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel venv pip setuptools wheel
require_binaries
setup_tmp
PORT=$(free_port)

# The wheelhouse: two packages, each a module with a VALUE, as wheels.
mkdir -p "$TMPD/wheels"
for p in tinypkg_a tinypkg_b; do
	mkdir -p "$TMPD/src/$p"
	printf 'VALUE = "%s-1.0"\n' "$p" >"$TMPD/src/$p/$p.py"
	printf 'from setuptools import setup\nsetup(name="%s", version="1.0", py_modules=["%s"])\n' \
		"$p" "$p" >"$TMPD/src/$p/setup.py"
	(cd "$TMPD/src/$p" && "$PY" -m pip wheel --no-deps --no-build-isolation --no-index \
		-w "$TMPD/wheels" . >"$TMPD/wheel-$p.log" 2>&1) ||
		fail "pip wheel of $p failed: $(tail -n 5 "$TMPD/wheel-$p.log")"
done
ls "$TMPD"/wheels/tinypkg_a-1.0-*.whl "$TMPD"/wheels/tinypkg_b-1.0-*.whl >/dev/null ||
	fail "no wheels in $TMPD/wheels: $(ls "$TMPD/wheels")"
# Kernels under other uids read it (and pass through $TMPD, 0711 as root).
chmod 755 "$TMPD/wheels" "$TMPD/src"
chmod 644 "$TMPD"/wheels/*.whl
ok "wheelhouse: $(cd "$TMPD/wheels" && ls | tr '\n' ' ')"

# round MODE [EXTRA]: one daemon in MODE with the wheelhouse, the checks.
round() {
	CFG_EXTRA="wheelhouse: $TMPD/wheels
kernel_network_mode: $1
${2:-}"
	write_config
	start_daemon
	wait_ready
	run_py "$URL" "$1" "$TMPD/env" <<'EOF2'
import hashlib, os, sys, time
from mcp import Client, check, ok, value_of
from calls import tool, sc

url, mode, env = sys.argv[1:4]


def tree_hash(top):
    """sha256 over the paths, modes and contents of every file under top."""
    h = hashlib.sha256()
    top = os.path.realpath(top)
    for d, dirs, files in os.walk(top):
        dirs.sort()
        for f in sorted(files + [x for x in dirs if os.path.islink(os.path.join(d, x))]):
            p = os.path.join(d, f)
            st = os.lstat(p)
            h.update(("%s %o\n" % (os.path.relpath(p, top), st.st_mode)).encode())
            if os.path.islink(p):
                h.update(os.readlink(p).encode())
            else:
                with open(p, "rb") as fh:
                    h.update(fh.read())
    return h.hexdigest()


digest_file = os.path.join(env, ".env_build_digest")
before = (tree_hash(env), open(digest_file).read())

a, b = Client(url), Client(url)
a.initialize()
b.initialize()
names = [t["name"] for t in a.result("tools/list")["tools"]]
check("py_install_packages" in names, "tools/list has py_install_packages", names)
cwd_a = value_of(a.execute("import os; os.getcwd()")).strip("'")
b.execute("1")

r = tool(a, "py_install_packages", {"packages": ["tinypkg_a"]})
s = sc(r)
check(r.get("isError") is False and s.get("success") is True, "%s: the install succeeds" % mode, r)
check("tinypkg_a" in (s.get("stdout") or ""), "%s: pip's output names the package" % mode, s)
pk = s.get("target_directory")
check(pk == os.path.join(cwd_a, ".packages"), "%s: target_directory is in A's directory" % mode,
      [pk, cwd_a])
r = a.execute("import tinypkg_a, sys\n(tinypkg_a.VALUE, tinypkg_a.__file__, "
              "sys.path.index(%r) < min(i for i, p in enumerate(sys.path) "
              "if p.endswith('-packages') and p != %r))" % (pk, pk))
got = eval(value_of(r) or "None")
check(got is not None and got[0] == "tinypkg_a-1.0" and got[1].startswith(pk + "/"),
      "%s: A imports tinypkg_a from its own directory" % mode, r)
check(got[2] is True, "%s: A's directory is ahead of the site-packages on sys.path" % mode, r)
r = b.execute("import tinypkg_a")
err = sc(r).get("error") or {}
check(err.get("type") == "ModuleNotFoundError", "%s: B cannot import tinypkg_a" % mode, r)
owner = os.stat(os.path.join(pk, "tinypkg_a.py")).st_uid
check(owner == os.stat(cwd_a).st_uid, "%s: the install ran as the session's identity" % mode,
      [owner, os.stat(cwd_a).st_uid])
ok("%s: the tool installed tinypkg_a into %s as uid %d; A imports it, B does not"
   % (mode, pk, owner))

# The call's timeout bounds the install: pip is interrupted, the kernel lives.
r = tool(a, "py_install_packages", {"packages": ["tinypkg_b"], "timeout": 0.05})
check((sc(r).get("error") or {}).get("type") == "TimeoutError",
      "%s: an install past its timeout is a TimeoutError" % mode, r)
r = a.execute("tinypkg_a.VALUE")
check(value_of(r) == "'tinypkg_a-1.0'", "%s: the kernel lives on after it" % mode, r)
ok("%s: an install past its timeout is interrupted" % mode)

r = a.execute("%pip install tinypkg_b")
out = sc(r).get("stdout") or ""
check(sc(r).get("success") is True and "Successfully installed tinypkg" in out,
      "%s: %%pip install tinypkg_b succeeds" % mode, r)
r = a.execute("import tinypkg_b\ntinypkg_b.__file__")
check((value_of(r) or "").strip("'").startswith(pk + "/"),
      "%s: %%pip installed tinypkg_b into A's directory" % mode, r)
r = b.execute("import tinypkg_b")
check((sc(r).get("error") or {}).get("type") == "ModuleNotFoundError",
      "%s: B cannot import tinypkg_b" % mode, r)
ok("%s: %%pip install went to A's directory too" % mode)

for bad in ["--index-url=http://127.0.0.1:9/simple", "-e.", ""]:
    resp = a.request("tools/call", {"name": "py_install_packages",
                                    "arguments": {"packages": ["tinypkg_a", bad]}})
    e = (resp.json or {}).get("error") or {}
    check(e.get("code") == -32602, "%s: %r is refused as invalid params" % (mode, bad), resp.json)
check("options are refused" in e.get("message", "") or bad == "", "the refusal says why", e)
resp = a.request("tools/call", {"name": "py_install_packages", "arguments": {"packages": []}})
check(((resp.json or {}).get("error") or {}).get("code") == -32602, "empty list refused", resp.json)
ok("%s: names starting with '-' and empty lists are refused" % mode)

# A session's first call may be the install: it gets its kernel first.
c = Client(url)
c.initialize()
r = tool(c, "py_install_packages", {"packages": ["tinypkg_b==1.0"]})
check(sc(r).get("success") is True, "%s: install as a session's first call" % mode, r)
r = c.execute("import tinypkg_b, os\ntinypkg_b.__file__.startswith(os.getcwd() + '/.packages/')")
check(value_of(r) == "True", "%s: the fresh session imports it from its own directory" % mode, r)
# A requirement the wheelhouse lacks: pip's failure, said, nothing installed.
r = tool(c, "py_install_packages", {"packages": ["tinypkg_missing"]})
s = sc(r)
check(r.get("isError") is True and (s.get("error") or {}).get("type") == "RuntimeError" and
      "tinypkg_missing" in (s.get("stdout") or ""), "%s: a failed install says so" % mode, r)
ok("%s: install as a first call; a missing package fails with pip's output" % mode)

after = (tree_hash(env), open(digest_file).read())
check(after == before, "%s: the shared environment's files and digest are unchanged" % mode,
      [before, after])
ok("%s: shared environment unchanged (%s...)" % (mode, before[0][:16]))

r = tool(a, "py_close_session", {})
check(sc(r).get("closed") is True, "close_session answers", r)
end = time.time() + 30
while os.path.exists(cwd_a) and time.time() < end:
    time.sleep(0.2)
check(not os.path.exists(cwd_a), "%s: A's directory, packages included, is gone" % mode, cwd_a)
ok("%s: closing A removed %s" % (mode, pk))
EOF2
	stop_daemon
}

# A wheelhouse that is not a directory stops start-up, naming it.
CFG_EXTRA="wheelhouse: $TMPD/no-such-wheelhouse"
write_config
timeout 120 "$CODEEXECD" -d -f "$TMPD/codeexecd.yaml" -W "$WORKER" >"$TMPD/bad.log" 2>&1 &&
	fail "the daemon started with a missing wheelhouse"
grep -q "wheelhouse $TMPD/no-such-wheelhouse: No such file or directory" "$TMPD/bad.log" ||
	fail "no clear start-up error for a missing wheelhouse: $(tail -n 3 "$TMPD/bad.log")"
ok "a missing wheelhouse stops start-up: $(grep wheelhouse "$TMPD/bad.log" | tail -n 1)"

round inherit
if [ "$(id -u)" != 0 ] || ! unshare -U -n true 2>/dev/null; then
	ok "isolated and seccomp rounds skipped (need root and user namespaces)"
	exit 0
fi
worker_for_other_uids
for mode in isolated seccomp; do
	round $mode 'kernel_uid_range: "63720-63739"'
done

# Without a wheelhouse a kernel with no network refuses installs, saying why.
CFG_EXTRA='kernel_network_mode: seccomp
kernel_uid_range: "63720-63739"'
write_config
start_daemon
wait_ready
run_py "$URL" <<'EOF2'
import sys
from mcp import Client, check, ok
from calls import tool, sc

a = Client(sys.argv[1])
a.initialize()
r = tool(a, "py_install_packages", {"packages": ["tinypkg_a"]})
e = sc(r).get("error") or {}
check(r.get("isError") is True and e.get("type") == "NoPackageIndex" and
      "reachable package index" in e.get("message", "") and "wheelhouse" in e["message"],
      "seccomp without a wheelhouse: a clear refusal", r)
ok("seccomp without a wheelhouse: %s" % e["message"])
EOF2
stop_daemon

# ...unless dependency_file's own option lines install with no index: then
# the install takes them (--no-index --find-links), in seccomp too.
write_config
"$PY" - "$TMPD/codeexecd.yaml" "$TMPD/wheels" <<'EOF2'
import sys
path, wheels = sys.argv[1:3]
text = open(path).read().replace('dependency_file: ""',
                                 'dependency_file: "--no-index\\n--find-links %s\\n"' % wheels)
open(path, "w").write(text)
EOF2
grep -q -- "--find-links $TMPD/wheels" "$TMPD/codeexecd.yaml" || fail "dependency_file not set"
start_daemon
wait_ready
run_py "$URL" <<'EOF2'
import sys
from mcp import Client, check, ok, value_of
from calls import tool, sc

a = Client(sys.argv[1])
a.initialize()
r = tool(a, "py_install_packages", {"packages": ["tinypkg_a"]})
check(sc(r).get("success") is True and "Looking in links" in (sc(r).get("stdout") or ""),
      "seccomp, dependency_file --no-index --find-links: the install uses them", r)
r = a.execute("import tinypkg_a\ntinypkg_a.VALUE")
check(value_of(r) == "'tinypkg_a-1.0'", "seccomp: the package imports", r)
ok("seccomp with dependency_file's --no-index --find-links: installed from there")
EOF2
stop_daemon
