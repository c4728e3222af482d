"""mcpclient.py - a lean MCP streamable-HTTP client for the benchmarks.

Standard library only. One Client is one HTTP/1.1 connection (kept alive
between requests, as an MCP client library does) speaking for one MCP
session. Nothing here checks the protocol in depth: tests/system does that.
What matters here is that a request costs no more on the client side than
it must, so that the time measured is the daemon's.
"""

import http.client
import json
import socket
import time

PROTOCOL = "2025-11-25"
JSON = "application/json"
JSON_OR_SSE = "application/json, text/event-stream"


class McpError(Exception):
    pass


class Client:
    def __init__(self, host, port, session_id=None, timeout=120):
        self.host = host
        self.port = port
        self.timeout = timeout
        self.session_id = session_id
        self.next_id = 1
        self.conn = None
        self.connects = 0  # TCP connections opened (keep-alive check)
        self.retries = 0   # requests resent on a connection the server had closed
        self.last_used = 0.0
        self.t_response = None  # perf_counter() when the last response arrived

    # -- connection -------------------------------------------------------

    def connect(self):
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        self.conn.connect()
        # Requests are one send() each (http.client joins a bytes body to
        # the headers); no Nagle delay on our side either way.
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.connects += 1

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    # civetweb closes a kept-alive connection after keep_alive_timeout_ms
    # (500 ms by default) of silence; a client reconnects then, as HTTP
    # client libraries do. Reconnect a little before, rather than send
    # into a connection the server is closing.
    IDLE_RECONNECT_S = 0.4

    def _send(self, method, body, headers):
        if self.conn is not None and time.monotonic() - self.last_used > self.IDLE_RECONNECT_S:
            self.close()
        if self.conn is None:
            self.connect()
        try:
            self.conn.request(method, "/mcp", body, headers)
            r = self.conn.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            # The server closed the kept-alive connection: reconnect once.
            self.close()
            self.connect()
            self.retries += 1
            self.conn.request(method, "/mcp", body, headers)
            r = self.conn.getresponse()
        return r

    def _done(self, r):
        self.last_used = time.monotonic()
        if r.will_close:
            self.close()

    def _headers(self, accept):
        h = {"Content-Type": JSON, "Accept": accept}
        if self.session_id:
            h["Mcp-Session-Id"] = self.session_id
            h["MCP-Protocol-Version"] = PROTOCOL
        return h

    def post(self, msg, accept=JSON_OR_SSE, on_event=None):
        """POST one JSON-RPC message; return (status, headers, parsed body).

        A text/event-stream answer is read event by event; on_event(obj) is
        called for each JSON message before the last, and the last (the
        response) is returned as the body.
        """
        body = json.dumps(msg, separators=(",", ":")).encode()
        r = self._send("POST", body, self._headers(accept))
        ctype = r.getheader("Content-Type", "")
        self.t_response = None
        if ctype.startswith("text/event-stream"):
            obj = self._read_sse(r, on_event, msg.get("id"))
        else:
            raw = r.read()
            obj = json.loads(raw) if raw else None
            self.t_response = time.perf_counter()
        self._done(r)
        return r.status, r, obj

    def _read_sse(self, r, on_event, rid):
        """Read events until the (chunked) stream ends; note in
        self.t_response when the JSON-RPC response itself arrived."""
        last = None
        data = []
        while True:
            line = r.readline()
            if not line:
                break
            line = line.rstrip(b"\r\n")
            if line.startswith(b"data:"):
                data.append(line[5:].lstrip(b" "))
            elif line == b"" and data:
                obj = json.loads(b"\n".join(data))
                data = []
                if rid is not None and obj.get("id") == rid and self.t_response is None:
                    self.t_response = time.perf_counter()
                if last is not None and on_event:
                    on_event(last)
                last = obj
        if data:
            obj = json.loads(b"\n".join(data))
            if rid is not None and obj.get("id") == rid and self.t_response is None:
                self.t_response = time.perf_counter()
            if last is not None and on_event:
                on_event(last)
            last = obj
        return last

    # -- MCP ----------------------------------------------------------------

    def request(self, method, params=None, accept=JSON_OR_SSE, on_event=None, rid=None):
        if rid is None:
            rid = self.next_id
            self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        status, r, obj = self.post(msg, accept, on_event)
        if status != 200 or not isinstance(obj, dict) or "result" not in obj:
            raise McpError("%s: HTTP %d: %r" % (method, status, obj))
        return obj["result"]

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        status, _, _ = self.post(msg)
        if status not in (200, 202, 204):
            raise McpError("%s: HTTP %d" % (method, status))
        return status

    def initialize(self):
        self.session_id = None
        status, r, obj = self.post({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                       "clientInfo": {"name": "codeexecd-bench", "version": "0"}}})
        sid = r.getheader("Mcp-Session-Id")
        if status != 200 or not sid:
            raise McpError("initialize: HTTP %d: %r" % (status, obj))
        self.session_id = sid
        self.notify("notifications/initialized")
        return obj["result"]

    def delete(self):
        r = self._send("DELETE", None, self._headers(JSON))
        r.read()
        self._done(r)
        return r.status

    def execute(self, code, tool="execute_py_code", progress_token=None, on_event=None,
                accept=JSON_OR_SSE, rid=None, check=True):
        """tools/call the execute tool; return the tools/call result (which,
        with check, must not be an error)."""
        params = {"name": tool, "arguments": {"code": code}}
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        res = self.request("tools/call", params, accept=accept, on_event=on_event, rid=rid)
        if check and res.get("isError"):
            raise McpError("execute %r failed: %r" % (code, res))
        return res


def health(host, port, timeout=5):
    """(status, parsed body or None) of GET /health; (0, None) if nobody answers."""
    try:
        c = http.client.HTTPConnection(host, port, timeout=timeout)
        c.request("GET", "/health")
        r = c.getresponse()
        raw = r.read()
        c.close()
    except OSError:
        return 0, None
    try:
        return r.status, json.loads(raw)
    except ValueError:
        return r.status, None
