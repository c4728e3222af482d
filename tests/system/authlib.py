"""authlib.py - a loopback OAuth issuer for the authentication tests.

Standard library and the openssl command only. `setup DIR` makes a test CA,
a certificate for 127.0.0.1 signed by it, and signing keys (openssl genpkey:
RSA 2048 and EC P-256); `serve DIR PORT` serves DIR/www over https (the
OpenID configuration and the JWKS), logging each path it serves to
DIR/requests.log; Python code imports it to sign tokens with those keys.
Nothing here turns TLS verification off: the daemon trusts DIR/ca.pem
through auth.ca_file.
"""

import base64
import http.server
import json
import os
import ssl
import subprocess
import sys
import time


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def openssl(*args, data=None):
    return subprocess.run(["openssl"] + list(args), input=data, check=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE).stdout


# --- DER, just enough to read public keys and ECDSA signatures -------------

def der_read(buf, i):
    """(tag, content bytes, next index) of the DER element at buf[i]."""
    tag = buf[i]
    n = buf[i + 1]
    i += 2
    if n & 0x80:
        k = n & 0x7f
        n = int.from_bytes(buf[i:i + k], "big")
        i += k
    return tag, buf[i:i + n], i + n


def der_items(content):
    out, i = [], 0
    while i < len(content):
        tag, c, i = der_read(content, i)
        out.append((tag, c))
    return out


def spki_key(pem_path):
    """The subjectPublicKey bytes of a key's SubjectPublicKeyInfo."""
    der = openssl("pkey", "-in", pem_path, "-pubout", "-outform", "DER")
    _, spki, _ = der_read(der, 0)
    items = der_items(spki)
    bits = items[1][1]
    return bits[1:]  # the BIT STRING's unused-bits byte first


def rsa_jwk(pem_path, kid):
    _, seq, _ = der_read(spki_key(pem_path), 0)
    n, e = [c for _, c in der_items(seq)]
    return {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
            "n": b64url(n.lstrip(b"\0")), "e": b64url(e.lstrip(b"\0"))}


def ec_jwk(pem_path, kid):
    pt = spki_key(pem_path)
    assert pt[0] == 4 and len(pt) == 65, "not an uncompressed P-256 point"
    return {"kty": "EC", "kid": kid, "use": "sig", "crv": "P-256",
            "x": b64url(pt[1:33]), "y": b64url(pt[33:])}


# --- tokens ------------------------------------------------------------------

def sign(d, alg, key, header, claims, raw_header=None):
    """A JWS compact token; header and claims are dicts (or raw_header text)."""
    h = b64url((raw_header or json.dumps(header, separators=(",", ":"))).encode())
    p = b64url(json.dumps(claims, separators=(",", ":")).encode())
    data = ("%s.%s" % (h, p)).encode()
    if alg == "none":
        sig = b""
    elif alg == "HS256":
        # Key confusion: the RSA public key's PEM as the HMAC secret.
        import hashlib
        import hmac
        pub = openssl("pkey", "-in", os.path.join(d, key + ".pem"), "-pubout")
        sig = hmac.new(pub, data, hashlib.sha256).digest()
    else:
        sig = openssl("dgst", "-sha256", "-sign", os.path.join(d, key + ".pem"), data=data)
        if alg == "ES256":
            _, seq, _ = der_read(sig, 0)
            r, s = [c for _, c in der_items(seq)]
            sig = (int.from_bytes(r, "big").to_bytes(32, "big") +
                   int.from_bytes(s, "big").to_bytes(32, "big"))
    return "%s.%s" % (data.decode(), b64url(sig))


def claims(issuer, audience, sub="alice", scope="mcp.run", exp_in=600, nbf_in=-5, **extra):
    now = int(time.time())
    c = {"iss": issuer, "aud": audience, "sub": sub, "exp": now + exp_in,
         "nbf": now + nbf_in, "iat": now, "scp": scope}
    c.update(extra)
    return c


def token(d, issuer, audience, alg="RS256", kid="rsa1", key="rsa1", header=None, **kw):
    h = {"alg": alg, "kid": kid, "typ": "JWT"}
    h.update(header or {})
    return sign(d, alg, key, h, claims(issuer, audience, **kw))


def write_jwks(d, keys):
    """Publish `keys` ([(kind, name)]) as the JWKS, atomically."""
    doc = {"keys": [rsa_jwk(os.path.join(d, n + ".pem"), n) if kind == "rsa"
                    else ec_jwk(os.path.join(d, n + ".pem"), n) for kind, n in keys]}
    tmp = os.path.join(d, "www", "jwks.json.tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f)
    os.rename(tmp, os.path.join(d, "www", "jwks.json"))


def fetches(d, path="/jwks.json"):
    """How many times the issuer served `path`."""
    try:
        with open(os.path.join(d, "requests.log")) as f:
            return sum(1 for line in f if line.strip() == path)
    except FileNotFoundError:
        return 0


# --- setup and serve ---------------------------------------------------------

def setup(d, port):
    os.makedirs(os.path.join(d, "www"), exist_ok=True)
    j = lambda n: os.path.join(d, n)
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-out", j("ca.key"))
    openssl("req", "-x509", "-new", "-key", j("ca.key"), "-subj", "/CN=codeexecd test CA",
            "-days", "2", "-out", j("ca.pem"),
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign")
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-out", j("server.key"))
    openssl("req", "-new", "-key", j("server.key"), "-subj", "/CN=127.0.0.1",
            "-out", j("server.csr"))
    with open(j("ext.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", j("server.csr"), "-CA", j("ca.pem"), "-CAkey",
            j("ca.key"), "-CAcreateserial", "-days", "2", "-extfile", j("ext.cnf"),
            "-out", j("server.pem"))
    for name in ("rsa1", "rsa2"):
        openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                "-out", j(name + ".pem"))
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-out", j("ec1.pem"))
    issuer = "https://127.0.0.1:%d" % port
    with open(j("www/openid-configuration"), "w") as f:
        json.dump({"issuer": issuer, "jwks_uri": issuer + "/jwks.json",
                   "authorization_endpoint": issuer + "/authorize",
                   "token_endpoint": issuer + "/token",
                   "response_types_supported": ["code"],
                   "subject_types_supported": ["public"],
                   "id_token_signing_alg_values_supported": ["RS256", "ES256"],
                   "code_challenge_methods_supported": ["S256"]}, f)
    write_jwks(d, [("rsa", "rsa1"), ("ec", "ec1")])
    print(issuer)


def serve(d, port):
    www = os.path.join(d, "www")
    log = open(os.path.join(d, "requests.log"), "a", buffering=1)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            log.write(self.path + "\n")
            name = {"/.well-known/openid-configuration": "openid-configuration",
                    "/jwks.json": "jwks.json"}.get(self.path)
            if name is None:
                self.send_error(404)
                return
            with open(os.path.join(www, name), "rb") as f:
                body = f.read()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(d, "server.pem"), os.path.join(d, "server.key"))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.serve_forever()


if __name__ == "__main__":
    cmd, d, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    {"setup": setup, "serve": serve}[cmd](d, port)
