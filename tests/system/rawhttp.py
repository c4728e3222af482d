"""rawhttp.py - HTTP/1.1 over raw sockets, for the tests of the HTTP front.

Standard library only. urllib and http.client tidy requests up and hide
what the daemon does with a connection; these helpers send exactly the
bytes given, read one response (Content-Length, chunked, or to the close),
and say whether the daemon closed the connection.
"""

import json
import socket
import time

PROTOCOL = "2025-11-25"


class Reply:
    def __init__(self, status, headers, body, closed):
        self.status = status      # int, or None when no status line came
        self.headers = headers    # {lower-case name: value}
        self.body = body          # bytes
        self.closed = closed      # the daemon closed the connection after it

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def __repr__(self):
        return "Reply(%r, %r, %r, closed=%r)" % (self.status, self.headers,
                                                  self.body[:300], self.closed)


def connect(port, src="127.0.0.1", timeout=10):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    return s


class Conn:
    """One client connection; reads responses from a buffer."""

    def __init__(self, port, src="127.0.0.1", timeout=10):
        self.sock = connect(port, src, timeout)
        self.buf = b""
        self.eof = False

    def _more(self):
        try:
            b = self.sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            b = b""
        if not b:
            self.eof = True
            return False
        self.buf += b
        return True

    def _line(self):
        while b"\r\n" not in self.buf:
            if self.eof or not self._more():
                raise EOFError("connection closed in the middle of a line")
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exactly(self, n):
        while len(self.buf) < n:
            if self.eof or not self._more():
                raise EOFError("connection closed in the middle of a body")
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send(self, data):
        self.sock.sendall(data)

    def read_reply(self, head_only=False):
        """The next response (1xx skipped); Reply(None, ...) if the daemon
        closed the connection without one."""
        while True:
            try:
                status_line = self._line()
            except EOFError:
                return Reply(None, {}, self.buf, True)
            parts = status_line.split(b" ", 2)
            status = int(parts[1])
            headers = {}
            while True:
                line = self._line()
                if not line:
                    break
                k, _, v = line.partition(b":")
                headers[k.decode().strip().lower()] = v.decode().strip()
            if 100 <= status < 200:
                continue
            break
        body = b""
        if head_only or status in (204, 304):
            pass
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                n = int(self._line().split(b";")[0], 16)
                if n == 0:
                    while self._line():
                        pass
                    break
                body += self._exactly(n)
                self._exactly(2)
        elif "content-length" in headers:
            body = self._exactly(int(headers["content-length"]))
        else:
            while self._more():
                pass
            body, self.buf = self.buf, b""
        closed = headers.get("connection", "").lower() == "close"
        return Reply(status, headers, body, closed)

    def closed_by_peer(self, wait=2.0):
        """True if the daemon closes (or resets) the connection within `wait`."""
        self.sock.settimeout(wait)
        try:
            return not self._more() or self.eof
        except socket.timeout:
            return False
        finally:
            self.sock.settimeout(10)

    def close(self):
        self.sock.close()


def request(method, path="/mcp", body=None, headers=None, host="127.0.0.1"):
    """The bytes of one well-formed request."""
    h = {"Host": host}
    if body is not None:
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        h["Content-Type"] = "application/json"
        h["Content-Length"] = str(len(body))
    h.update(headers or {})
    head = "%s %s HTTP/1.1\r\n" % (method, path)
    head += "".join("%s: %s\r\n" % kv for kv in h.items() if kv[1] is not None)
    return head.encode() + b"\r\n" + (body or b"")


def mcp_headers(session=None):
    h = {"Accept": "application/json, text/event-stream"}
    if session:
        h["Mcp-Session-Id"] = session
        h["MCP-Protocol-Version"] = PROTOCOL
    return h


def rpc(method, params=None, rid=1):
    m = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        m["params"] = params
    return m


def call(code, rid=1, **args):
    args["code"] = code
    return rpc("tools/call", {"name": "execute_py_code", "arguments": args}, rid)


def exchange(port, data, src="127.0.0.1", timeout=10):
    """Send `data` on a new connection; the Reply (status None: none came)."""
    c = Conn(port, src, timeout)
    try:
        c.send(data)
        return c.read_reply()
    except (socket.timeout, OSError) as e:
        return Reply(None, {"error": repr(e)}, b"", True)
    finally:
        c.close()


def new_session(port, src="127.0.0.1"):
    """Initialize a session; its id."""
    r = exchange(port, request("POST", body=rpc("initialize", {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "rawhttp", "version": "0"}}), headers=mcp_headers()), src)
    sid = r.headers.get("mcp-session-id")
    if r.status != 200 or not sid:
        raise AssertionError("initialize failed: %r" % r)
    exchange(port, request("POST", body={"jsonrpc": "2.0", "method": "notifications/initialized"},
                           headers=mcp_headers(sid)), src)
    return sid


def value_of(reply):
    """The text/plain value of an execute result in `reply`, or None."""
    j = reply.json() if reply.status == 200 else None
    try:
        for o in j["result"]["structuredContent"]["rich_outputs"]:
            if o.get("mime_type") == "text/plain":
                return o.get("data")
    except (KeyError, TypeError):
        pass
    return None


def compute(port, session, code="1+1", src="127.0.0.1", timeout=30):
    """Run `code` in `session` on a new connection; (value, seconds, Reply)."""
    t = time.monotonic()
    r = exchange(port, request("POST", body=call(code), headers=mcp_headers(session)),
                 src, timeout)
    return value_of(r), time.monotonic() - t, r


def health(port, src="127.0.0.1", timeout=5):
    """(status, seconds) of GET /health on a new connection."""
    t = time.monotonic()
    r = exchange(port, request("GET", "/health", headers={"Connection": "close"}), src,
                 timeout)
    return r.status, time.monotonic() - t
