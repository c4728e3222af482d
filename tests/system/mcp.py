"""mcp.py - a small MCP streamable-HTTP client for the system tests.

Standard library only (Debian's /usr/bin/python3). Every request and its
response are remembered, so a failed check prints the exact exchange that
the daemon's author needs to see.
"""

import base64
import json
import re
import sys
import urllib.error
import urllib.request

PROTOCOL = "2025-11-25"


class CheckFailed(Exception):
    pass


class Response:
    def __init__(self, status, headers, raw):
        self.status = status
        self.headers = headers
        self.raw = raw
        try:
            self.json = json.loads(raw) if raw else None
        except ValueError:
            self.json = None

    def header(self, name):
        return self.headers.get(name)


class Client:
    """One MCP session against `url` (http://127.0.0.1:PORT/mcp)."""

    last = None  # (request description, Response) of the latest exchange

    def __init__(self, url, protocol=PROTOCOL, origin=None, token=None):
        self.url = url
        self.protocol = protocol
        self.origin = origin
        self.token = token  # sent as "Authorization: Bearer TOKEN" (auth.mode)
        self.session_id = None
        self.next_id = 1

    def http(self, method, body=None, headers=None, timeout=120):
        h = {"Accept": "application/json, text/event-stream"}
        if body is not None:
            h["Content-Type"] = "application/json"
        if self.session_id:
            h["Mcp-Session-Id"] = self.session_id
            h["MCP-Protocol-Version"] = self.protocol
        if self.origin:
            h["Origin"] = self.origin
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        h.update(headers or {})
        data = body.encode() if isinstance(body, str) else body
        req = urllib.request.Request(self.url, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                resp = Response(r.status, r.headers, r.read().decode())
        except urllib.error.HTTPError as e:
            resp = Response(e.code, e.headers, e.read().decode(errors="replace"))
        Client.last = ("%s %s\n%s\n\n%s" % (method, self.url,
                       "\n".join("%s: %s" % kv for kv in h.items()),
                       (data or b"")[:2000].decode(errors="replace")), resp)
        return resp

    def request(self, method, params=None, timeout=120):
        """Send a JSON-RPC request; return the Response."""
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.next_id += 1
        return self.http("POST", json.dumps(msg), timeout=timeout)

    def result(self, method, params=None, timeout=120):
        """Send a request that must succeed; return its JSON-RPC result."""
        r = self.request(method, params, timeout)
        check(r.status == 200, "%s: HTTP %d" % (method, r.status))
        check(r.json is not None and "result" in r.json,
              "%s: no JSON-RPC result" % method)
        return r.json["result"]

    def initialize(self, protocol=None, capabilities=None):
        r = self.request("initialize", {
            "protocolVersion": protocol or self.protocol,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "codeexecd-system-test", "version": "0"},
        })
        check(r.status == 200, "initialize: HTTP %d" % r.status)
        sid = r.header("Mcp-Session-Id")
        # 32 hex digits, after node_name and a dot when the daemon has one.
        check(sid is not None and re.fullmatch(r"(?:[A-Za-z0-9_-]{1,32}\.)?[0-9a-fA-F]{32,}", sid),
              "initialize: Mcp-Session-Id %r is not >= 32 hex digits" % sid)
        self.session_id = sid
        n = self.http("POST", json.dumps({"jsonrpc": "2.0",
                                          "method": "notifications/initialized"}))
        check(n.status in (200, 202, 204),
              "notifications/initialized: HTTP %d" % n.status)
        return r.json["result"]

    def delete(self):
        return self.http("DELETE")

    def execute(self, code, timeout=None, description=None, tool="execute_py_code",
                http_timeout=120):
        """tools/call the execute tool; return the tools/call result dict."""
        args = {"code": code}
        if timeout is not None:
            args["timeout"] = timeout
        if description is not None:
            args["description"] = description
        return self.result("tools/call", {"name": tool, "arguments": args},
                           timeout=http_timeout)


MODERN = "2026-07-28"


class ModernClient(Client):
    """A 2026-07-28 client: no session; every request carries its version
    in _meta and MCP-Protocol-Version, and Mcp-Method (and Mcp-Name, and
    Mcp-Param-Session for the argument naming a kernel session)."""

    def __init__(self, url, token=None, version=MODERN):
        Client.__init__(self, url, protocol=version, token=token)

    def meta(self, version=None):
        return {"io.modelcontextprotocol/protocolVersion": version or self.protocol,
                "io.modelcontextprotocol/clientInfo": {"name": "codeexecd-system-test",
                                                       "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {}}

    def request(self, method, params=None, timeout=120, headers=None, meta=True):
        """POST one request; `headers` override the mirrored ones (None drops one)."""
        params = dict(params or {})
        if meta:
            params.setdefault("_meta", self.meta())
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.next_id += 1
        h = {"MCP-Protocol-Version": self.protocol, "Mcp-Method": method}
        if method in ("tools/call", "prompts/get") and "name" in params:
            h["Mcp-Name"] = params["name"]
        # The argument naming a kernel session carries x-mcp-header "Session"
        # in every tool that takes one (execution_session_id, or session_id).
        args = params.get("arguments") if method == "tools/call" else None
        for key in ("execution_session_id", "session_id"):
            if isinstance(args, dict) and isinstance(args.get(key), str):
                h["Mcp-Param-Session"] = args[key]
                break
        h.update(headers or {})
        h = {k: v for k, v in h.items() if v is not None}
        return self.http("POST", json.dumps(msg), headers=h, timeout=timeout)

    def call(self, tool, arguments, timeout=120):
        """tools/call that must answer 200 with a result; the result."""
        return self.result("tools/call", {"name": tool, "arguments": arguments},
                           timeout=timeout)


TASKS_EXT = "io.modelcontextprotocol/tasks"


class TaskClient(ModernClient):
    """A 2026-07-28 client that declares the tasks extension; task() sends
    tasks/get, tasks/update or tasks/cancel with the task id in Mcp-Name."""

    def meta(self, version=None):
        m = ModernClient.meta(self, version)
        m["io.modelcontextprotocol/clientCapabilities"] = {"extensions": {TASKS_EXT: {}}}
        return m

    def task(self, method, task_id, headers=None):
        h = {"Mcp-Name": task_id}
        h.update(headers or {})
        return self.request(method, {"taskId": task_id}, headers=h)


def text_of(result):
    """The text items of a tools/call result, joined."""
    return "\n".join(c.get("text", "") for c in result.get("content", [])
                     if c.get("type") == "text")


def value_of(result):
    """The text/plain rich output (the last expression's value), or None."""
    for o in result.get("structuredContent", {}).get("rich_outputs", []):
        if o.get("mime_type") == "text/plain":
            return o.get("data")
    return None


def images_of(result):
    return [c for c in result.get("content", []) if c.get("type") == "image"]


def png_problem(b64):
    """None if b64 is strict base64 (no whitespace) of a PNG, else why not."""
    if not isinstance(b64, str) or not b64:
        return "no base64 data"
    if any(c.isspace() for c in b64):
        return "the base64 holds whitespace (%d newlines); strict decoders refuse it" \
            % b64.count("\n")
    try:
        raw = base64.b64decode(b64, validate=True)
    except ValueError as e:
        return "not valid base64: %s" % e
    if not raw.startswith(b"\x89PNG\r\n\x1a\n"):
        return "decodes to %r..., not the PNG signature" % raw[:8]
    return None


def metric(port, name):
    """The value of sample `name` (with its labels) on /metrics, or None."""
    with urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return None


def check(cond, what, evidence=None):
    """Fail the test with `what` and the latest exchange unless cond."""
    if cond:
        return
    out = ["FAIL: " + what]
    if evidence is not None:
        out.append("evidence: " + json.dumps(evidence, indent=1)[:4000])
    if Client.last:
        req, resp = Client.last
        out.append("---- last request ----\n" + req)
        out.append("---- its response: HTTP %d ----\n%s\n%s" % (
            resp.status, "".join("%s: %s\n" % kv for kv in resp.headers.items()),
            resp.raw[:4000]))
    print("\n".join(out), file=sys.stderr)
    raise CheckFailed(what)


def ok(what):
    print("ok - " + what)
    sys.stdout.flush()
