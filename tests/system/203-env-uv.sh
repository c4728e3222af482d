#!/bin/sh
# 203-env-uv: type uv builds with `uv venv` and `uv pip install` from a local
# wheelhouse (offline), the kernel uses it, an unchanged restart does not
# rebuild. Skipped where uv is not installed.
. "$(dirname "$0")/lib.sh"

command -v uv >/dev/null 2>&1 ||
	skip "uv not found in PATH (install it: pipx install uv, or https://docs.astral.sh/uv/)"
require_cmd curl
require_py ipykernel
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
PORT=$(free_port)
make_wheel "$TMPD/wheels" 1.0
ENVDIR=$TMPD/envs/py
ENV_TYPE=uv
DEPS="--no-index
--find-links $TMPD/wheels
tinypkg"
env_config
warm || fail "--warm failed: $(tail -n 5 "$TMPD/warm.log")"
grep -q "build: .*uv venv" "$TMPD/warm.log" || fail "the build did not use uv venv"
grep -q "build: .*uv pip install" "$TMPD/warm.log" || fail "the build did not use uv pip install"
[ -f "$ENVDIR/.env_build_complete" ] || fail "no marker"
m1=$(mtime "$ENVDIR/.env_build_complete")
start_daemon
wait_ready
[ "$(mtime "$ENVDIR/.env_build_complete")" = "$m1" ] || fail "an unchanged start rebuilt"
out=$(run_code 'import tinypkg, sys; print(tinypkg.VALUE, sys.prefix)') || fail "$out"
[ "$out" = "1.0 $ENVDIR" ] || fail "kernel printed '$out'"
ok "type uv: built offline with uv, used by the kernel, not rebuilt on restart"
