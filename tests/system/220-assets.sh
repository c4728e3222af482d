#!/bin/sh
# 220-assets: assets provisioned at start-up from a local HTTP server the
# test starts (python3 -m http.server on loopback) and from file:// URLs and
# paths: a good checksum installs the file, a second start does not fetch it
# again, a bad one leaves nothing in place; traversal, absolute, symlinked and
# non-loopback http destinations or sources are refused; the size cap and
# redirects to plain http are enforced; kernels find the cache in
# MCP_ASSET_CACHE_DIR.
. "$(dirname "$0")/lib.sh"

require_cmd curl sha256sum
require_py ipykernel http.server
require_binaries
. "$(dirname "$0")/envlib.sh"

setup_tmp
HTTP_PID=
# The HTTP server is the test's own: stop it before lib.sh looks for leftovers.
trap 'st=$?; set +e; [ -n "$HTTP_PID" ] && { kill "$HTTP_PID"; wait "$HTTP_PID"; } 2>/dev/null; (exit $st); cleanup' EXIT
PORT=$(free_port)
WPORT=$(free_port)
CACHE=$TMPD/cache
SRV=$TMPD/srv
mkdir -p "$SRV/sub"
head -c 300000 /dev/urandom >"$SRV/model.bin"
head -c 2200000 /dev/urandom >"$SRV/big.bin"
echo "a,b" >"$SRV/table.csv"
SUM=$(sha256sum "$SRV/model.bin" | cut -d' ' -f1)
CSUM=$(sha256sum "$SRV/table.csv" | cut -d' ' -f1)
BSUM=$(sha256sum "$SRV/big.bin" | cut -d' ' -f1)
BAD=0000000000000000000000000000000000000000000000000000000000000000
"$PY" -m http.server --bind 127.0.0.1 --directory "$SRV" "$WPORT" >"$TMPD/http.log" 2>&1 &
HTTP_PID=$!
i=0
until curl -s -o /dev/null "http://127.0.0.1:$WPORT/table.csv"; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the test's HTTP server did not start: $(cat "$TMPD/http.log")"
	sleep 0.1
done
gets() { grep -c "GET /$1 " "$TMPD/http.log" || true; }

# asset_config LINES: the config with asset_cache_dir $CACHE and these assets.
asset_config() {
	EXTRA="asset_cache_dir: $CACHE
assets:
$1
${2:-}"
	env_config
}

# A good checksum over http to loopback, a file:// URL and a bare path.
asset_config "  - {name: model, source: \"http://127.0.0.1:$WPORT/model.bin\", destination: models/m.bin, checksum: \"sha256:$SUM\", size_hint_mb: 1}
  - {name: table, source: \"file://$SRV/table.csv\", destination: data/t.csv, checksum: $CSUM}
  - {name: table2, source: \"$SRV/table.csv\", destination: t2.csv, checksum: $CSUM}"
warm || fail "--warm failed: $(tail -n 3 "$TMPD/warm.log")"
cmp -s "$SRV/model.bin" "$CACHE/models/m.bin" || fail "models/m.bin is not the served file"
cmp -s "$SRV/table.csv" "$CACHE/data/t.csv" || fail "file:// asset not installed"
cmp -s "$SRV/table.csv" "$CACHE/t2.csv" || fail "bare-path asset not installed"
[ "$(gets model.bin)" = 1 ] || fail "model.bin fetched $(gets model.bin) times"
ls -a "$CACHE" "$CACHE/models" | grep -q '\.part-' && fail "a temporary file was left"
ok "good checksums: http://127.0.0.1, file:// and a bare path installed"

# Re-use: the daemon starts without fetching again, and kernels find the cache.
start_daemon
wait_ready
[ "$(gets model.bin)" = 1 ] || fail "a start with the asset in place fetched it again"
grep -q "asset model: models/m.bin is present and its checksum matches" "$TMPD/daemon.log" ||
	fail "the log does not say the asset was re-used"
out=$(run_code 'import os, hashlib
d = os.environ["MCP_ASSET_CACHE_DIR"]
print(d, hashlib.sha256(open(os.path.join(d, "models/m.bin"), "rb").read()).hexdigest())') ||
	fail "execution failed: $out"
[ "$out" = "$CACHE $SUM" ] || fail "kernel saw '$out'"
stop_daemon
ok "re-use without download; the kernel reads it through MCP_ASSET_CACHE_DIR"

# A damaged file in place is fetched again.
echo damaged >"$CACHE/models/m.bin"
warm || fail "--warm failed: $(tail -n 3 "$TMPD/warm.log")"
cmp -s "$SRV/model.bin" "$CACHE/models/m.bin" || fail "the damaged asset was not replaced"
[ "$(gets model.bin)" = 2 ] || fail "the damaged asset was not fetched again"
ok "a file with the wrong checksum in place is fetched again"

# A bad checksum: start-up fails naming the asset, nothing in place.
asset_config "  - {name: wrong, source: \"http://127.0.0.1:$WPORT/model.bin\", destination: w/m.bin, checksum: $BAD}"
warm && fail "a bad checksum was accepted"
grep -q "asset wrong: checksum mismatch: .* has sha256 $SUM, the configuration says $BAD" \
	"$TMPD/warm.log" || fail "no checksum message: $(tail -n 1 "$TMPD/warm.log")"
[ -z "$(ls -A "$CACHE/w")" ] || fail "a bad download left files: $(ls -A "$CACHE/w")"
start_daemon
wait "$DAEMON_PID" && fail "the daemon started with a bad asset" || true
DAEMON_PID=
grep -q "assets: asset wrong: checksum mismatch" "$TMPD/daemon.log" || fail "start-up did not stop"
ok "bad checksum: --warm and start-up fail naming the asset, nothing left in place"

# The size cap, an HTTP error, and a redirect to plain http are refused.
asset_config "  - {name: big, source: \"http://127.0.0.1:$WPORT/big.bin\", destination: big.bin, checksum: $BSUM}" "asset_max_mb: 1"
warm && fail "an asset over asset_max_mb was accepted"
grep -q "asset big: .* is larger than asset_max_mb (1 MiB): refused" "$TMPD/warm.log" ||
	fail "no size message: $(tail -n 1 "$TMPD/warm.log")"
[ ! -e "$CACHE/big.bin" ] && ! ls -a "$CACHE" | grep -q '\.part-' || fail "the big download left a file"
asset_config "  - {name: gone, source: \"http://127.0.0.1:$WPORT/nothing.bin\", destination: n.bin, checksum: $BAD}"
warm && fail "a 404 was accepted"
grep -q "asset gone: fetch .*nothing.bin: .*404" "$TMPD/warm.log" || fail "no 404 message"
asset_config "  - {name: redir, source: \"http://127.0.0.1:$WPORT/sub\", destination: r.bin, checksum: $BAD}"
warm && fail "a redirect to http was followed"
grep -q "asset redir: fetch" "$TMPD/warm.log" || fail "no redirect message: $(tail -n 1 "$TMPD/warm.log")"
[ "$(grep -c 'GET /sub/ ' "$TMPD/http.log")" = 0 ] || fail "the redirect to plain http was followed"
ok "asset_max_mb, HTTP errors and redirects to plain http refused"

# https:// verifies the server's certificate: a self-signed one is refused.
if command -v openssl >/dev/null 2>&1; then
	TPORT=$(free_port)
	openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 1 \
		-keyout "$TMPD/tls.key" -out "$TMPD/tls.crt" >/dev/null 2>&1 || fail "openssl req failed"
	"$PY" - "$SRV" "$TPORT" "$TMPD/tls.crt" "$TMPD/tls.key" >"$TMPD/https.log" 2>&1 <<'PYEOF' &
import functools, http.server, ssl, sys
srv, port, crt, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=srv)
s = http.server.HTTPServer(("127.0.0.1", port), h)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(crt, key)
s.socket = ctx.wrap_socket(s.socket, server_side=True)
s.serve_forever()
PYEOF
	TLS_PID=$!
	i=0
	until curl -sk -o /dev/null "https://127.0.0.1:$TPORT/table.csv"; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "the test's HTTPS server did not start: $(cat "$TMPD/https.log")"
		sleep 0.1
	done
	asset_config "  - {name: selfsigned, source: \"https://localhost:$TPORT/model.bin\", destination: s.bin, checksum: $SUM}"
	warm && fail "a self-signed certificate was accepted"
	kill "$TLS_PID" 2>/dev/null
	wait "$TLS_PID" 2>/dev/null || true
	grep -qi "asset selfsigned: fetch https://localhost:$TPORT/model.bin: .*certificate" \
		"$TMPD/warm.log" || fail "no certificate message: $(tail -n 1 "$TMPD/warm.log")"
	[ ! -e "$CACHE/s.bin" ] || fail "an unverified download was installed"
	ok "https://: an unverifiable certificate is refused"
fi

# Destinations through symlinks are refused, and nothing is written through them.
mkdir -p "$TMPD/elsewhere"
ln -s "$TMPD/elsewhere" "$CACHE/linked"
ln -s "$TMPD/elsewhere/target" "$CACHE/file-link"
asset_config "  - {name: viadir, source: \"$SRV/table.csv\", destination: linked/t.csv, checksum: $CSUM}"
warm && fail "a destination through a symlinked directory was accepted"
grep -q "asset viadir: destination linked/t.csv: linked is a symbolic link or not a directory: refused" \
	"$TMPD/warm.log" || fail "no message for the symlinked directory: $(tail -n 1 "$TMPD/warm.log")"
asset_config "  - {name: viafile, source: \"$SRV/table.csv\", destination: file-link, checksum: $CSUM}"
warm && fail "a symlink destination was accepted"
grep -q "asset viafile: destination file-link is a symbolic link: refused" "$TMPD/warm.log" ||
	fail "no message for the symlink destination: $(tail -n 1 "$TMPD/warm.log")"
[ -z "$(ls -A "$TMPD/elsewhere")" ] || fail "something was written through a symlink"
ok "destinations through symbolic links refused, nothing written outside the cache"

# Traversal, absolute destinations and non-loopback http: configuration errors.
for bad in "destination: ../escape.bin, source: \"$SRV/table.csv\"|every part of the path must be a name" \
	"destination: /etc/escape.bin, source: \"$SRV/table.csv\"|is absolute: it must be relative to asset_cache_dir" \
	"destination: a/../../b, source: \"$SRV/table.csv\"|every part of the path must be a name" \
	"destination: x.bin, source: \"http://192.0.2.1/x.bin\"|plain http:// is allowed only to a loopback address" \
	"destination: x.bin, source: relative/x.bin|must be an https:// URL, an http:// URL to loopback"; do
	asset_config "  - {name: bad, ${bad%%|*}, checksum: $CSUM}"
	"$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/check.log" 2>&1 &&
		fail "accepted: ${bad%%|*}"
	grep -qF "${bad#*|}" "$TMPD/check.log" || fail "for ${bad%%|*}: $(cat "$TMPD/check.log")"
done
[ ! -e "$TMPD/escape.bin" ] && [ ! -e /etc/escape.bin ] || fail "a traversal wrote a file"
ok "traversal, absolute destinations, non-loopback http and relative sources refused at -n"

# auto_provision false: start-up neither fetches nor checks; --warm does.
asset_config "  - {name: later, source: \"http://127.0.0.1:$WPORT/model.bin\", destination: later.bin, checksum: $SUM}" "auto_provision: false"
start_daemon
wait_ready
[ ! -e "$CACHE/later.bin" ] || fail "auto_provision false fetched the asset"
grep -q "auto_provision is false" "$TMPD/daemon.log" || fail "the log does not say so"
stop_daemon
warm || fail "--warm failed: $(tail -n 3 "$TMPD/warm.log")"
cmp -s "$SRV/model.bin" "$CACHE/later.bin" || fail "--warm did not provision with auto_provision false"
ok "auto_provision false: nothing fetched at start-up; --warm provisions"
