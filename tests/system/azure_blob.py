"""azure_blob.py - what 442-artifacts-azure needs beside the daemon: Azure
Storage's SharedKey signing and account SAS (to make the container, make a
SAS token and read blobs back from Azurite), and a tiny loopback proxy in
front of Azurite that answers the first PUT with 503 ServerBusy."""
import base64, hashlib, hmac, http.client, http.server, threading, time
import urllib.parse

ACCOUNT = "devstoreaccount1"
# Azurite's well-known development key (public, documented by Microsoft).
KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
       "K1SZFPTOtr/KBHBeksoGMGw==")
VERSION = "2021-08-06"


def sign(s, key=KEY):
    return base64.b64encode(hmac.new(base64.b64decode(key), s.encode(),
                                     hashlib.sha256).digest()).decode()


def request(port, verb, path, query=None, body=b"", headers=None):
    """A SharedKey request to Azurite: (status, headers by lower-case name, body)."""
    query = query or {}
    h = {"x-ms-date": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime()),
         "x-ms-version": VERSION}
    h.update(headers or {})
    xms = "".join("%s:%s\n" % (k, h[k]) for k in sorted(h) if k.startswith("x-ms-"))
    res = "/%s/%s%s" % (ACCOUNT, ACCOUNT, path)
    res += "".join("\n%s:%s" % (k, query[k]) for k in sorted(query))
    sts = "\n".join([verb, "", "", str(len(body)) if body else "", "",
                     h.get("Content-Type", ""), "", "", "", "", "", ""]) + "\n" + xms + res
    h["Authorization"] = "SharedKey %s:%s" % (ACCOUNT, sign(sts))
    url = "/%s%s" % (ACCOUNT, path)
    if query:
        url += "?" + urllib.parse.urlencode(query)
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(verb, url, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, data


def account_sas():
    """An account SAS for the blob service, read and write, until 2030."""
    f = {"sv": VERSION, "ss": "b", "srt": "sco", "sp": "rwdlac",
         "se": "2030-01-01T00:00:00Z", "spr": "https,http"}
    sts = "\n".join([ACCOUNT, f["sp"], f["ss"], f["srt"], "", f["se"], "", f["spr"],
                     f["sv"], ""]) + "\n"
    f["sig"] = sign(sts)
    return urllib.parse.urlencode(f)


class Proxy(http.server.BaseHTTPRequestHandler):
    """Forwards to Azurite, but answers the first PUT with 503."""
    target = 0
    failed = 0
    puts = 0
    lock = threading.Lock()

    def log_message(self, *a):
        pass

    def forward(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        with Proxy.lock:
            first = self.command == "PUT" and Proxy.failed == 0
            if self.command == "PUT":
                Proxy.puts += 1
            if first:
                Proxy.failed += 1
        if first:
            msg = (b'<?xml version="1.0" encoding="utf-8"?><Error><Code>ServerBusy</Code>'
                   b'<Message>injected by the test</Message></Error>')
            self.send_response(503)
            self.send_header("Content-Length", str(len(msg)))
            self.end_headers()
            self.wfile.write(msg)
            return
        c = http.client.HTTPConnection("127.0.0.1", Proxy.target, timeout=60)
        h = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        c.request(self.command, self.path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        c.close()

    do_PUT = do_GET = do_HEAD = do_DELETE = forward


def start_proxy(target):
    Proxy.target = target
    s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    return s.server_address[1]
