"""SQLite FTS5's bm25() on the labelled set of issue 15, for comparison
with the C BM25 of supervisor/front/toolreg.c (bench/README.md).

Usage: python3 bench/toolsearch_fts5.py tests/unit/data/tools
One FTS5 row per tool, one column per field, tokenizer "porter unicode61"
(lower case, punctuation and _ split, Porter stemming; no camelCase split),
bm25() with the same column weights as toolreg.c. A query is its words
joined by OR (FTS5 ANDs them otherwise). Also times 1,000 tools as
bench/toolsearch.c does (the time includes Python's sqlite3 calls).
"""
import re
import sqlite3
import sys
import time

import yaml

STOP = set("a an and are as at be by can do does for from get give how i in into is it its "
           "me my of on or some that the this to use using want what which with you".split())
W = {"name": 3.0, "params": 1.5, "description": 1.0, "category": 0.5, "pdesc": 0.5, "ret": 0.5}
COLS = list(W)


def rows(tools):
    for t in tools:
        ps = t.get("required_parameters", []) + t.get("optional_parameters", [])
        yield (t["name"].replace("_", " "), " ".join(p["name"].replace("_", " ") for p in ps),
               t["description"], t.get("category", ""),
               " ".join(p["description"] for p in ps),
               t["return_spec"].get("description", ""))


def db(tools):
    c = sqlite3.connect(":memory:")
    c.execute("create virtual table t using fts5(%s, tokenize='porter unicode61')" % ", ".join(COLS))
    c.executemany("insert into t values (?, ?, ?, ?, ?, ?)", rows(tools))
    return c


def match(q):
    words = [w for w in re.findall(r"[A-Za-z0-9]+", q) if w.lower() not in STOP and len(w) > 1]
    return " OR ".join('"%s"' % w for w in words)


SQL = ("select rowid - 1 from t where t match ? order by bm25(t, %s) limit ?" %
       ", ".join(str(W[c]) for c in COLS))


def main():
    d = sys.argv[1]
    tools = yaml.safe_load(open(d + "/registry.yaml"))["tools"]
    names = [t["name"] for t in tools]
    qs = [l.rstrip("\n").split("\t") for l in open(d + "/queries.tsv") if l[0] != "#" and "\t" in l]
    c = db(tools)
    at1 = at5 = 0
    rr = 0.0
    for want, q in qs:
        got = [names[r[0]] for r in c.execute(SQL, (match(q), 10))]
        rank = got.index(want) + 1 if want in got else 0
        at1 += rank == 1
        at5 += 1 <= rank <= 5
        rr += 1 / rank if rank else 0
        if rank != 1:
            print("  miss: %r wants %s, ranked %d, first %s" % (q, want, rank, got[:1]))
    n = len(qs)
    print("FTS5 bm25(): %d queries over %d tools: recall@1 %.3f recall@5 %.3f MRR %.3f" %
          (n, len(tools), at1 / n, at5 / n, rr / n))
    big = []
    for i in range(1000):
        t = dict(tools[i % len(tools)])
        t["name"] = "%s_%d" % (t["name"], i // len(tools))
        big.append(t)
    c = db(big)
    ms = [match(q) for _, q in qs]
    times = []
    for _ in range(50):
        for m in ms:
            s = time.perf_counter()
            c.execute(SQL, (m, 5)).fetchall()
            times.append(time.perf_counter() - s)
    times.sort()
    print("FTS5 bm25(), 1000 tools: median %.1f us, p99 %.1f us per query" %
          (times[len(times) // 2] * 1e6, times[len(times) * 99 // 100] * 1e6))


main()
