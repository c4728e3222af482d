"""calls.py - helpers for the execution-control system tests (4NN-*.sh,
issue 3): tool calls by name, tools/call answered as a stream of SSE events
read as they arrive, requests that are cut off or cancelled, and the
daemon's control socket.

Standard library only (Debian's /usr/bin/python3), on top of mcp.py.
"""

import http.client
import json
import os
import socket
import threading
import time
import urllib.parse

from mcp import Client, Response, check

PROTOCOL = "2025-11-25"


def tool(c, name, args, http_timeout=120):
    """tools/call `name` with `args`; the tools/call result dict."""
    return c.result("tools/call", {"name": name, "arguments": args}, timeout=http_timeout)


def sc(result):
    """structuredContent of a tools/call result (an empty dict if none)."""
    return result.get("structuredContent") or {}


def _headers(c, extra=None):
    h = {"Accept": "application/json, text/event-stream",
         "Content-Type": "application/json",
         "MCP-Protocol-Version": PROTOCOL}
    if c.session_id:
        h["Mcp-Session-Id"] = c.session_id
    if getattr(c, "token", None):
        h["Authorization"] = "Bearer " + c.token
    h.update(extra or {})
    return h


def _conn(c, timeout):
    u = urllib.parse.urlsplit(c.url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=timeout), u.path


class Stream:
    """One POST whose answer is read event by event as it arrives.

    After wait(): status, content_type, raw (the whole body), events (a list
    of (seconds since the request was sent, parsed JSON of one SSE `data:`)),
    or, for a JSON answer, json."""

    def __init__(self, c, msg, timeout=120, accept=None):
        self.c = c
        self.msg = msg
        self.timeout = timeout
        self.accept = accept
        self.status = None
        self.content_type = None
        self.raw = ""
        self.events = []
        self.json = None
        self.error = None
        self.t0 = None
        self.done = threading.Event()
        self.sock = None

    def start(self):
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def run(self):
        self._run()
        return self

    def _run(self):
        try:
            conn, path = _conn(self.c, self.timeout)
            extra = {"Accept": self.accept} if self.accept else None
            self.t0 = time.time()
            conn.request("POST", path, json.dumps(self.msg), _headers(self.c, extra))
            self.sock = conn.sock
            r = conn.getresponse()
            self.status = r.status
            self.content_type = r.getheader("Content-Type", "")
            if self.content_type.startswith("text/event-stream"):
                self._read_sse(r)
            else:
                self.raw = r.read().decode(errors="replace")
                try:
                    self.json = json.loads(self.raw) if self.raw else None
                except ValueError:
                    pass
            conn.close()
        except Exception as e:  # reported by the caller's checks
            self.error = "%s: %s" % (type(e).__name__, e)
        finally:
            self.done.set()

    def _read_sse(self, r):
        data = []
        while True:
            line = r.readline()
            if not line:
                break
            line = line.decode(errors="replace")
            self.raw += line
            line = line.rstrip("\r\n")
            if line == "":
                if data:
                    t = time.time() - self.t0
                    try:
                        self.events.append((t, json.loads("\n".join(data))))
                    except ValueError:
                        self.events.append((t, {"unparsable": "\n".join(data)}))
                data = []
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" ") if line[5:6] == " " else line[5:])

    def wait(self, timeout=None):
        self.done.wait(timeout if timeout is not None else self.timeout + 5)
        return self.done.is_set()

    def progress(self):
        return [(t, e) for t, e in self.events
                if e.get("method") == "notifications/progress"]

    def responses(self):
        return [(t, e) for t, e in self.events if "id" in e and "method" not in e]

    def evidence(self):
        return {"status": self.status, "content_type": self.content_type,
                "error": self.error, "body": self.raw[-3000:]}


def call_msg(c, name, args, rid, token=None):
    params = {"name": name, "arguments": args}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def notify(c, method, params):
    """POST a JSON-RPC notification in c's session; the mcp.Response."""
    return c.http("POST", json.dumps({"jsonrpc": "2.0", "method": method, "params": params}))


def hang_up_after(c, msg, seconds):
    """POST `msg` on a raw socket, read nothing, and close it after
    `seconds`; returns what had arrived by then (bytes)."""
    u = urllib.parse.urlsplit(c.url)
    body = json.dumps(msg).encode()
    head = ["POST %s HTTP/1.1" % u.path, "Host: %s:%d" % (u.hostname, u.port),
            "Content-Length: %d" % len(body)]
    head += ["%s: %s" % kv for kv in _headers(c).items()]
    s = socket.create_connection((u.hostname, u.port))
    s.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
    s.settimeout(seconds)
    got = b""
    end = time.time() + seconds
    while time.time() < end:
        try:
            s.settimeout(max(0.01, end - time.time()))
            b = s.recv(65536)
            if not b:
                break
            got += b
        except socket.timeout:
            break
    s.close()
    return got


def control(runtime_dir, cmd="status", **kw):
    """One request to the daemon's control socket; its JSON answer."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(runtime_dir + "/control/codeexecd.sock")
    req = dict(cmd=cmd, **kw)
    s.sendall((json.dumps(req) + "\n").encode())
    buf = b""
    while not buf.endswith(b"\n"):
        b = s.recv(65536)
        if not b:
            break
        buf += b
    s.close()
    return json.loads(buf)


def wait_for(pred, seconds, step=0.1):
    """Poll pred() until it is true or `seconds` pass; its last value. This
    is how a test waits for a state (lib.sh's poll_until in Python): never a
    fixed sleep, too short on a loaded machine and a waste on an idle one."""
    end = time.time() + seconds
    while True:
        v = pred()
        if v or time.time() >= end:
            return v
        time.sleep(step)


def session_info(c, name="py"):
    """What {name}_list_sessions says of c's own session (state: "busy",
    "idle", "no kernel yet", "dead"; working_directory), or {}."""
    for s in sc(tool(c, name + "_list_sessions", {})).get("sessions", []):
        if s.get("session_id") == c.session_id:
            return s
    return {}


def session_state(c, name="py"):
    """The state of c's own session, or None if it is not listed."""
    return session_info(c, name).get("state")


def wait_busy(c, seconds=30, name="py"):
    """Wait until c's session runs code: a call sent on another connection
    has reached its kernel (and may now be cancelled, timed, or queued
    behind)."""
    check(wait_for(lambda: session_state(c, name) == "busy", seconds, 0.05),
          "session %s runs code: not within %d s" % ((c.session_id or "?")[:8], seconds))


def wait_file(c, filename, seconds=30, name="py"):
    """Wait until `filename` exists in c's working directory: code that
    creates it first is running in the kernel (busy alone means only that
    the execution was sent)."""
    def there():
        d = session_info(c, name).get("working_directory")
        return d is not None and os.path.exists(os.path.join(d, filename))
    check(wait_for(there, seconds, 0.05),
          "%s in session %s: not within %d s" % (filename, (c.session_id or "?")[:8], seconds))


def proc_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
