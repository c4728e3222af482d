"""A loopback stand-in for Azure AI Search's Search Documents (POST) API.

Usage: azure_search_server.py PORTFILE LOGFILE KEY
Listens on 127.0.0.1 (a free port, written to PORTFILE), answers
POST /indexes/tools/docs/search?api-version=2023-11-01 as the REST API
documents it: {"@odata.context": ..., "value": [{"@search.score": S,
"name": N}, ...]}, or 403 {"error": {"code": "", "message": ...}} for a
wrong api-key. Each request (path, headers, body) is appended to LOGFILE
as one JSON line. A query holding "slow" is answered after 5 s.
"""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

portfile, logfile, key = sys.argv[1:4]

# What the index returns: the tools whose words the query holds, and a
# document naming a tool the registry lacks (the daemon must drop it).
DOCS = [
    ("mol_weight", "chemistry", {"molar", "mass", "weight", "molecule"}),
    ("gc_content", "bioinformatics", {"gc", "dna", "fraction"}),
    ("not_registered", "chemistry", {"molar"}),
]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; odata.metadata=minimal")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(logfile, "a") as f:
            f.write(json.dumps({"path": self.path, "api-key": self.headers.get("api-key"),
                                "content-type": self.headers.get("Content-Type"),
                                "body": body.decode()}) + "\n")
        if self.path != "/indexes/tools/docs/search?api-version=2023-11-01":
            return self.answer(404, {"error": {"code": "", "message": "No such index"}})
        if self.headers.get("api-key") != key:
            return self.answer(403, {"error": {"code": "", "message": "Authentication failed"}})
        req = json.loads(body)
        words = set(req["search"].lower().split())
        if "slow" in words:
            time.sleep(5)
        cat = None
        if "filter" in req:
            cat = req["filter"].split("'")[1]
        hits = [{"@search.score": float(len(words & w)), "name": n}
                for n, c, w in DOCS if words & w and (cat is None or c == cat)]
        hits.sort(key=lambda h: -h["@search.score"])
        self.answer(200, {"@odata.context": "https://127.0.0.1/indexes('tools')/$metadata#docs(*)",
                          "value": hits[:req.get("top", 50)]})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(portfile + ".tmp", portfile)
server.serve_forever()
