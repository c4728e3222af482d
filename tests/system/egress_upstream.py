"""egress_upstream.py - the egress tests' upstreams and client side.

  egress_upstream.py serve HOST PORT [CERT KEY]   an HTTP (or HTTPS) upstream:
      /echo answers the request's head as it arrived; /big answers 300000
      bytes; /hold waits 30 s; /auth answers "auth " and the SHA-256 of its
      X-Api-Key header (or "auth none"), so that a test learns which
      credential arrived without the client seeing it; anything else
      answers "upstream ok".
  egress_upstream.py bridge PORT SOCKET           a loopback TCP port relayed
      to a proxy socket, as a kernel's forwarder does, for clients that take
      only a TCP proxy (curl, urllib, requests, pip).
  egress_upstream.py get SOCKET HOST PORT CAFILE PATH [HEADER: VALUE]...
      CONNECT HOST:PORT on a proxy socket, then TLS trusting CAFILE only,
      GET PATH with the headers; prints the answer (or the CONNECT's refusal)
      and, on stderr, the issuer of the certificate the client was shown.
"""
import hashlib
import http.server
import socket
import socketserver
import ssl
import sys
import threading
import time


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_GET(self):
        if self.path == "/echo":
            body = (self.requestline + "\r\n" + str(self.headers)).encode()
        elif self.path == "/big":
            body = b"x" * 300000
        elif self.path == "/auth":
            key = self.headers.get("X-Api-Key")
            digest = hashlib.sha256(key.encode()).hexdigest() if key else "none"
            body = ("auth %s\n" % digest).encode()
        elif self.path == "/hold":
            time.sleep(30)
            body = b"held\n"
        else:
            body = b"upstream ok\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def serve(host, port, cert=None, key=None):
    srv = Server((host, int(port)), Handler)
    if cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.serve_forever()


def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def bridge(port, path):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", int(port)))
    ls.listen(64)
    while True:
        c, _ = ls.accept()
        u = socket.socket(socket.AF_UNIX)
        try:
            u.connect(path)
        except OSError:
            c.close()
            continue
        threading.Thread(target=pipe, args=(c, u), daemon=True).start()
        threading.Thread(target=pipe, args=(u, c), daemon=True).start()


def get(path, host, port, cafile, url, *headers):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        d = s.recv(1)
        if not d:
            break
        head += d
    if not head.startswith(b"HTTP/1.1 200"):
        while (d := s.recv(65536)):
            head += d
        sys.stdout.write(head.decode(errors="replace"))
        return
    ctx = ssl.create_default_context(cafile=cafile)
    t = ctx.wrap_socket(s, server_hostname=host)
    issuer = dict(x[0] for x in t.getpeercert()["issuer"])
    print("issuer: " + issuer.get("commonName", "?"), file=sys.stderr)
    req = f"GET {url} HTTP/1.1\r\nHost: {host}:{port}\r\n" + "".join(
        h + "\r\n" for h in headers) + "\r\n"
    t.sendall(req.encode())
    out = b""
    while True:
        try:
            d = t.recv(65536)
        except (ssl.SSLEOFError, ConnectionResetError):
            break
        if not d:
            break
        out += d
    sys.stdout.write(out.decode(errors="replace"))


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(*sys.argv[2:])
    elif sys.argv[1] == "get":
        get(*sys.argv[2:])
    else:
        bridge(*sys.argv[2:])
