#!/bin/sh
# 200-env-build: a real pip build from a local wheelhouse, offline
# (--no-index --find-links, a wheel made in the test), used by the kernel;
# then from --index-url (a loopback http.server) and from a local path;
# an unchanged restart does not rebuild (same marker mtime, same directory);
# a changed dependency_file does, and the kernel then sees the new package;
# `codeexecd --warm` builds and exits 0.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel venv pip
require_binaries
# --- helpers of the 2NN environment tests (kept in each file: lib.sh is shared) ---

# make_wheel DIR VERSION: a pure-Python wheel of the tiny package tinypkg,
# built by hand with zipfile, so nothing is downloaded.
make_wheel() {
	mkdir -p "$1"
	"$PY" - "$1" "$2" <<'EOF'
import base64, hashlib, sys, zipfile
d, v = sys.argv[1], sys.argv[2]
di = "tinypkg-%s.dist-info" % v
files = {
    "tinypkg/__init__.py": "VALUE = %r\n" % v,
    di + "/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: %s\n" % v,
    di + "/WHEEL": "Wheel-Version: 1.0\nGenerator: codeexecd-test\n"
                   "Root-Is-Purelib: true\nTag: py3-none-any\n",
}
def rec(text):
    b = text.encode()
    h = base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
    return "sha256=%s,%d" % (h, len(b))
files[di + "/RECORD"] = "".join("%s,%s\n" % (p, rec(c)) for p, c in files.items()) + \
    di + "/RECORD,,\n"
with zipfile.ZipFile("%s/tinypkg-%s-py3-none-any.whl" % (d, v), "w") as z:
    for p, c in files.items():
        z.writestr(p, c)
EOF
}

# env_config [FILE]: a config whose environment lives in $TMPD/envs/py.
# DEPS: dependency_file lines; EXTRA: more YAML lines; AUTO_BUILD; ENV_TYPE.
env_config() {
	{
		echo "name: py"
		echo "type: ${ENV_TYPE:-pip}"
		echo "python: /usr/bin/python3"
		echo "system_site_packages: true"
		echo "build_dir: $TMPD/envs/py"
		echo "auto_build: ${AUTO_BUILD:-true}"
		echo "state_dir: $TMPD/state"
		echo "runtime_dir: $TMPD/run"
		echo "listen: \"127.0.0.1:${PORT:-0}\""
		echo "pool:"
		echo "  warm: 1"
		if [ -n "${DEPS:-}" ]; then
			echo "dependency_file: |"
			printf '%s\n' "$DEPS" | sed 's/^/  /'
		fi
		printf '%s\n' "${EXTRA:-}"
	} >"${1:-$TMPD/codeexecd.yaml}"
}

# warm: run codeexecd --warm on $TMPD/codeexecd.yaml; output in $TMPD/warm.log.
warm() {
	"$CODEEXECD" -d -f "$TMPD/codeexecd.yaml" --warm >"$TMPD/warm.log" 2>&1
}

# run_code CODE: execute CODE in a new session of the running daemon with a
# self-contained client; prints its stdout, fails if the code raised.
run_code() {
	"$PY" - "$URL" "$1" <<'EOF'
import json, sys, urllib.request
url, code = sys.argv[1], sys.argv[2]
def post(body, sid=None):
    h = {"Content-Type": "application/json", "MCP-Protocol-Version": "2025-11-25",
         "Accept": "application/json, text/event-stream"}
    if sid:
        h["Mcp-Session-Id"] = sid
    r = urllib.request.urlopen(urllib.request.Request(url, json.dumps(body).encode(), h),
                               timeout=120)
    raw = r.read().decode()
    if r.headers.get("Content-Type", "").startswith("text/event-stream"):
        msgs = [json.loads(l[5:]) for l in raw.splitlines() if l.startswith("data:")]
        msgs = [m for m in msgs if "id" in m]
        return r.headers.get("Mcp-Session-Id"), msgs[-1] if msgs else None
    return r.headers.get("Mcp-Session-Id"), json.loads(raw) if raw.strip() else None
sid, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "env-test", "version": "0"}}})
post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
_, res = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
    "name": "execute_py_code", "arguments": {"code": code}}}, sid)
sc = res["result"]["structuredContent"]
if not sc.get("success"):
    sys.exit("execution failed: " + json.dumps(sc))
sys.stdout.write(sc["stdout"])
EOF
}

# mtime of a file (following symlinks), in nanoseconds.
mtime() {
	stat -L -c %.9Y "$1"
}
# --- end of helpers ---

setup_tmp
HTTP_PID=
# The index server is the test's own: stop it before lib.sh looks for leftovers.
trap 'st=$?; set +e; [ -n "$HTTP_PID" ] && { kill "$HTTP_PID"; wait "$HTTP_PID"; } 2>/dev/null; (exit $st); cleanup' EXIT
PORT=$(free_port)
make_wheel "$TMPD/wheels" 1.0
make_wheel "$TMPD/wheels" 2.0
# A PEP 503 "simple" index is a directory listing: http.server serves one.
mkdir -p "$TMPD/index/simple/tinypkg"
cp "$TMPD/wheels/tinypkg-2.0-py3-none-any.whl" "$TMPD/index/simple/tinypkg/"
IPORT=$(free_port)
"$PY" -m http.server --bind 127.0.0.1 --directory "$TMPD/index" "$IPORT" >"$TMPD/index.log" 2>&1 &
HTTP_PID=$!
ENVDIR=$TMPD/envs/py
MARKER=$ENVDIR/.env_build_complete

# A fresh build by --warm: exit 0, the marker and bin/python, tinypkg 1.0.
DEPS="--no-index
--find-links $TMPD/wheels
tinypkg==1.0"
env_config
warm || fail "--warm failed: $(tail -n 5 "$TMPD/warm.log")"
[ -x "$ENVDIR/bin/python" ] && [ -f "$MARKER" ] || fail "no bin/python or marker after --warm"
[ -f "$ENVDIR/.env_build_digest" ] || fail "no .env_build_digest beside the marker"
grep -q "tinypkg" "$TMPD/warm.log" || fail "the pip install is not in the log"
v=$("$ENVDIR/bin/python" -c 'import tinypkg; print(tinypkg.VALUE)')
[ "$v" = 1.0 ] || fail "tinypkg is $v, want 1.0"
[ -L "$ENVDIR" ] || fail "$ENVDIR is not the symlink to a complete build"
ok "--warm: fresh offline build from a wheelhouse, exit 0"

# Unchanged: the daemon starts without rebuilding, and its kernel uses it.
m1=$(mtime "$MARKER")
t1=$(readlink "$ENVDIR")
start_daemon
wait_ready
[ "$(mtime "$MARKER")" = "$m1" ] && [ "$(readlink "$ENVDIR")" = "$t1" ] ||
	fail "an unchanged restart rebuilt the environment"
grep -q "environment $ENVDIR is ready" "$TMPD/daemon.log" || fail "no 'is ready' in the log"
grep -q "building the" "$TMPD/daemon.log" && fail "the daemon log shows a build"
out=$(run_code 'import sys, tinypkg; print(tinypkg.VALUE, sys.prefix)') ||
	fail "execution failed: $out"
[ "$out" = "1.0 $ENVDIR" ] || fail "kernel printed '$out', want '1.0 $ENVDIR'"
ok "unchanged restart: same marker mtime, kernel imports tinypkg 1.0 from $ENVDIR"
stop_daemon
[ "$DAEMON_RC" = 0 ] || fail "daemon exit status $DAEMON_RC"

# Changed dependency_file: rebuilt into a new directory, kernel sees 2.0,
# this time from a package index given by --index-url.
DEPS="--index-url http://127.0.0.1:$IPORT/simple/
tinypkg==2.0"
env_config
start_daemon
wait_ready
grep -q "out of date" "$TMPD/daemon.log" || fail "the log does not say the env is out of date"
[ "$(readlink "$ENVDIR")" != "$t1" ] || fail "the changed dependency_file did not rebuild"
[ ! -e "$TMPD/envs/$t1" ] || fail "the replaced build $t1 was not removed"
out=$(run_code 'import tinypkg; print(tinypkg.VALUE)') || fail "execution failed: $out"
[ "$out" = 2.0 ] || fail "kernel sees tinypkg $out after the change, want 2.0"
grep -q "GET /simple/tinypkg/tinypkg-2.0-py3-none-any.whl" "$TMPD/index.log" ||
	fail "the wheel did not come from the --index-url server"
ok "changed dependency_file: rebuilt from --index-url, old build removed, kernel sees 2.0"
stop_daemon

# additional_commands is part of what the digest covers; a requirement may
# be a local path.
t2=$(readlink "$ENVDIR")
DEPS="--no-index
$TMPD/wheels/tinypkg-1.0-py3-none-any.whl"
EXTRA="additional_commands: ['python -c \"import tinypkg\"']"
env_config
warm || fail "--warm failed: $(tail -n 5 "$TMPD/warm.log")"
[ "$(readlink "$ENVDIR")" != "$t2" ] || fail "a new additional_commands entry did not rebuild"
v=$("$ENVDIR/bin/python" -c 'import tinypkg; print(tinypkg.VALUE)')
[ "$v" = 1.0 ] || fail "the local-path requirement gave tinypkg $v"
m3=$(mtime "$MARKER")
warm || fail "--warm failed: $(tail -n 5 "$TMPD/warm.log")"
[ "$(mtime "$MARKER")" = "$m3" ] || fail "--warm rebuilt an unchanged environment"
ls "$TMPD/envs" | grep -q '\.gen-.*\.gen-' && fail "leftover build directories"
[ "$(ls -d "$TMPD"/envs/py.gen-* | wc -l)" = 1 ] || fail "more than one build directory left"
ok "a local wheel path as requirement; additional_commands changes rebuild; --warm again does not"
