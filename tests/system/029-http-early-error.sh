#!/bin/sh
# 029-http-early-error: a body over max_request_bytes gets its 413, whatever
# the client. The daemon answers before it has read the body; it used to
# close at once, and the kernel met the rest of the upload with a reset
# that reached the client before it read the answer (Broken pipe,
# ECONNRESET). Now it reads and discards what follows for a bounded time
# and size (http.linger_s, http.linger_bytes) before it closes. With a
# 1 MiB limit:
#   - Python's urllib, curl (with and without Expect: 100-continue, and
#     chunked) and Node's fetch each POST 2, 8 and 64 MiB and read the 413
#     JSON-RPC error;
#   - with Expect: 100-continue the 413 comes instead of a 100, and a body
#     under the limit gets its 100 and then its answer;
#   - a raw client that sends forever, fast, is cut off once it has sent
#     about http.linger_bytes past the answer, and one that sends forever,
#     slowly, is cut off after about http.linger_s; both read the 413
#     first, and /health answers throughout.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
setup_tmp
PORT=$(free_port)
LINGER_S=5
LINGER_BYTES=134217728
CFG_EXTRA="http:
  linger_s: $LINGER_S
  linger_bytes: $LINGER_BYTES"
write_config
config_set max_request_bytes 1048576
start_daemon
wait_ready

# body-N.json: a tools/call of N MiB, far over the limit.
for mb in 2 8 64; do
	"$PY" - "$mb" >"$TMPD/body-$mb.json" <<'EOF'
import json, sys
pad = "x" * (int(sys.argv[1]) << 20)
print(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                  "params": {"name": "execute_py_code", "arguments": {"code": "#" + pad}}}))
EOF
done

# expect_413 WHAT: the last answer is the 413 JSON-RPC error naming the limit.
expect_413() {
	got=$(jget '[d["error"]["code"], "max_request_bytes" in d["error"]["message"]]' \
		2>/dev/null) || got="(not JSON: $(head -c 300 "$TMPD/body"))"
	[ "$got" = '[-32000, true]' ] || fail "$1: body $got, want the -32000 error naming max_request_bytes"
	ok "$1: 413 and its JSON-RPC error"
}

# post_curl FILE [curl args]: POST FILE to /mcp; prints the status.
post_curl() {
	f=$1
	shift
	http POST -H 'Content-Type: application/json' -H 'MCP-Protocol-Version: 2025-11-25' \
		-H 'Accept: application/json, text/event-stream' --max-time 60 "$@" \
		--data-binary @"$f"
}

# --- curl ----------------------------------------------------------------------
for mb in 2 8 64; do
	st=$(post_curl "$TMPD/body-$mb.json" -H 'Expect:')
	expect_status 413 "$st" "curl, $mb MiB"
	expect_413 "curl, $mb MiB"
	st=$(post_curl "$TMPD/body-$mb.json" -H 'Expect:' -H 'Transfer-Encoding: chunked')
	expect_status 413 "$st" "curl, $mb MiB chunked"
	expect_413 "curl, $mb MiB chunked"
	# curl would send the body after 1 s without a 100: wait for it instead.
	st=$(post_curl "$TMPD/body-$mb.json" -H 'Expect: 100-continue' --expect100-timeout 30)
	expect_status 413 "$st" "curl, $mb MiB, Expect: 100-continue"
	expect_413 "curl, $mb MiB, Expect: 100-continue"
	! grep -q '^HTTP/1.1 100' "$TMPD/headers" ||
		fail "curl, $mb MiB, Expect: 100-continue: a 100 came before the 413: $(cat "$TMPD/headers")"
	ok "curl, $mb MiB, Expect: 100-continue: the 413 came instead of a 100"
done
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}'
printf %s "$INIT" >"$TMPD/init.json"
st=$(post_curl "$TMPD/init.json" -H 'Expect: 100-continue' --expect100-timeout 30 --max-time 20)
expect_status 200 "$st" "curl, initialize with Expect: 100-continue"
grep -q '^HTTP/1.1 100 Continue' "$TMPD/headers" ||
	fail "no 100 Continue before a body under the limit: $(cat "$TMPD/headers")"
ok "curl, a body under the limit with Expect: 100-continue: 100, then 200"

# --- Python's urllib, and raw clients that send forever ----------------------
run_py "$PORT" "$TMPD" "$LINGER_S" "$LINGER_BYTES" "$TMPD/daemon.log" <<'EOF2'
import json, select, socket, sys, threading, time, urllib.error, urllib.request
from mcp import check, ok
from rawhttp import connect, health

port, tmpd, linger_s, linger_bytes, log = (int(sys.argv[1]), sys.argv[2], int(sys.argv[3]),
                                           int(sys.argv[4]), sys.argv[5])
url = "http://127.0.0.1:%d/mcp" % port

def is_413(status, body):
    try:
        e = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        return False
    return status == 413 and e["code"] == -32000 and "max_request_bytes" in e["message"]

for mb in (2, 8, 64):
    with open("%s/body-%d.json" % (tmpd, mb), "rb") as f:
        body = f.read()
    req = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            got = (r.status, r.read())
    except urllib.error.HTTPError as e:
        got = (e.code, e.read())
    except OSError as e:
        got = ("error", repr(e))
    check(is_413(*got), "urllib, %d MiB: the 413 and its JSON-RPC error" % mb, repr(got))
ok("urllib: 2, 8 and 64 MiB each read the 413")

HEAD = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"MCP-Protocol-Version: 2025-11-25\r\nContent-Length: 1000000000000\r\n\r\n")

def forever(chunk, pause):
    """Send a 1 TB body forever, `chunk` bytes every `pause` s, reading
    meanwhile. Returns (the answer, seconds from the answer to the close,
    bytes sent after the answer), the close being the reset that a send or
    a receive meets."""
    s = connect(port, timeout=10)
    s.sendall(HEAD)
    s.setblocking(False)
    answer, answered, sent_then, sent = b"", None, 0, 0
    data, next_send, start = b"x" * chunk, 0.0, time.monotonic()
    while time.monotonic() - start < 120:
        now = time.monotonic()
        want_w = [s] if now >= next_send else []
        r, w, _ = select.select([s], want_w, [], max(0.0, min(0.05, next_send - now)))
        try:
            if r:
                got = s.recv(65536)
                answer += got
                if answered is None and b"\r\n\r\n" in answer:
                    head, _, rest = answer.partition(b"\r\n\r\n")
                    length = [int(l.split(b":")[1]) for l in head.split(b"\r\n")
                              if l.lower().startswith(b"content-length:")]
                    if length and len(rest) >= length[0]:
                        answered, sent_then = time.monotonic(), sent
            if w:
                sent += s.send(data)
                next_send = time.monotonic() + pause
        except (BrokenPipeError, ConnectionResetError):
            s.close()
            return (answer, None if answered is None else time.monotonic() - answered,
                    sent - sent_then)
    s.close()
    return answer, "never closed", sent - sent_then

def answer_413(answer):
    head, _, body = answer.partition(b"\r\n\r\n")
    return is_413(int(head.split(b" ")[1]) if head.startswith(b"HTTP/1.1 ") else None, body)

# Fast: cut off by the size bound, long before the time bound.
answer, after, sent = forever(1 << 20, 0)
check(answer_413(answer), "a client sending forever, fast, reads the 413 first", repr(answer[:300]))
check(isinstance(after, float) and after < linger_s + 15,
      "it is cut off (%r s after the answer)" % (after,))
check(64 << 20 < sent < linger_bytes + (32 << 20),
      "it is cut off at about http.linger_bytes (%d) after the answer: %d bytes sent"
      % (linger_bytes, sent))
ok("fast sender: the 413, then cut off %.1f s later, %d MiB after the answer"
   % (after, sent >> 20))

# Slow, and several at once: cut off by the time bound; /health answers.
results, worst = [], 0.0
threads = [threading.Thread(target=lambda: results.append(forever(1024, 0.1)))
           for _ in range(8)]
for t in threads:
    t.start()
while any(t.is_alive() for t in threads):
    st, dt = health(port, timeout=5)
    check(st == 200 and dt < 1.0, "/health while slow senders linger: %s in %.2f s" % (st, dt))
    worst = max(worst, dt)
    time.sleep(0.2)
for answer, after, sent in results:
    check(answer_413(answer), "a client sending forever, slowly, reads the 413 first",
          repr(answer[:300]))
    check(isinstance(after, float) and linger_s / 2 < after < linger_s + 15,
          "it is cut off after about http.linger_s (%d s): %r s after the answer"
          % (linger_s, after))
ok("8 slow senders: the 413, then cut off %.1f to %.1f s later; /health at worst %.2f s"
   % (min(r[1] for r in results), max(r[1] for r in results), worst))
text = open(log, errors="replace").read()
check("http.linger_bytes" in text and "http.linger_s" in text,
      "the log names the bound that cut each sender off")
EOF2

# --- Node's fetch ----------------------------------------------------------------
CLIENT_DIR=${CODEEXECD_TEST_CLIENT_DIR:-$top_srcdir/tests/client}
require_node 18
"$NODE" - "$URL" "$TMPD" <<'EOF' || fail "Node's fetch did not read every 413 (status $?)"
import { readFileSync } from "node:fs";
const [url, dir] = process.argv.slice(2);
const headers = {"Content-Type": "application/json", "MCP-Protocol-Version": "2025-11-25",
		 "Accept": "application/json, text/event-stream"};

async function post(what, body, extra) {
	let r, text;
	try {
		r = await fetch(url, {method: "POST", headers, body, ...extra});
		text = await r.text();
	} catch (e) {
		console.error(`FAIL: fetch, ${what}: ${e} (${e.cause})`);
		process.exit(1);
	}
	let err = {};
	try { err = JSON.parse(text).error; } catch (e) { /* checked below */ }
	if (r.status !== 413 || err.code !== -32000 || !err.message.includes("max_request_bytes")) {
		console.error(`FAIL: fetch, ${what}: HTTP ${r.status} ${text.slice(0, 300)}`);
		process.exit(1);
	}
	console.log(`ok - fetch, ${what}: 413 and its JSON-RPC error`);
}

for (const mb of [2, 8, 64]) {
	const body = readFileSync(`${dir}/body-${mb}.json`);
	await post(`${mb} MiB`, body, {});
	// A stream of 1 MiB pieces: sent chunked, with no Content-Length.
	const stream = new ReadableStream({
		start(c) {
			for (let i = 0; i < body.length; i += 1 << 20)
				c.enqueue(body.subarray(i, i + (1 << 20)));
			c.close();
		}
	});
	await post(`${mb} MiB chunked`, stream, {duplex: "half"});
}
EOF
ok "Node's fetch: 2, 8 and 64 MiB, with a length and chunked, each read the 413"

st=$(mcp_post "$INIT")
expect_status 200 "$st" "initialize after all of it"
