# envlib.sh - helpers of the 2NN environment tests, sourced after lib.sh:
# a wheel made offline, a config for an environment, --warm, running code.

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
	config_user_line
	{
		[ -z "$USER_LINE" ] || echo "$USER_LINE"
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
