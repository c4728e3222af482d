"""SQLite FTS5's bm25() on the labelled set of issue 15, for comparison
with the C BM25 of supervisor/front/toolreg.c (bench/README.md).

Usage: python3 bench/toolsearch_fts5.py [-q] DATADIR [TOOLS...]
e.g. python3 bench/toolsearch_fts5.py tests/unit/data/tools
     python3 bench/toolsearch_fts5.py -q bench/toolsearch 150 10000
One FTS5 row per tool, one column per field, tokenizer "porter unicode61"
(lower case, punctuation and _ split, Porter stemming; no camelCase split),
bm25() with the same column weights as toolreg.c. A query is its words
joined by OR (FTS5 ANDs them otherwise). Also times TOOLS tools (1,000
when none is given; the set's tools repeated with varied names and
descriptions, as bench/toolsearch.c does; the time includes Python's
sqlite3 calls). -q: no line per query not ranked first.
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
    args = sys.argv[1:]
    quiet = args[:1] == ["-q"]
    args = args[quiet:]
    d = args[0]
    sizes = [int(a) for a in args[1:]] or [1000]
    tools = yaml.safe_load(open(d + "/registry.yaml"))["tools"]
    names = [t["name"] for t in tools]
    qs, section, sections = [], None, []
    for l in open(d + "/queries.tsv"):
        if l.startswith("# == "):
            section = l[5:].split(":")[0].strip()
            sections.append(section)
        elif l[0] != "#" and "\t" in l:
            qs.append(l.rstrip("\n").split("\t") + [section])
    c = db(tools)
    tally = {}
    unmatched = 0
    for want, q, sec in qs:
        got = [names[r[0]] for r in c.execute(SQL, (match(q), 10))]
        rank = got.index(want) + 1 if want in got else 0
        for k in ("all", sec):
            t = tally.setdefault(k, [0, 0, 0, 0.0])
            t[0] += 1
            t[1] += rank == 1
            t[2] += 1 <= rank <= 5
            t[3] += 1 / rank if rank else 0
        shares = c.execute("select count(*) from t where rowid = ? and t match ?",
                           (names.index(want) + 1, match(q) or '""')).fetchone()[0]
        unmatched += not shares
        if rank != 1 and not quiet:
            print("  miss: %r wants %s, ranked %d, first %s" % (q, want, rank, got[:1]))
    for k in ["all"] + [s for s in sections if s in tally]:
        n, a1, a5, rr = tally[k]
        print("FTS5 bm25(), %d tools, %s: %d queries: recall@1 %.3f (%d) recall@5 %.3f (%d) MRR %.3f" %
              (len(tools), k, n, a1 / n, a1, a5 / n, a5, rr / n))
    print("FTS5: %d of %d queries share no word (Porter-stemmed) with their tool: FTS5 cannot return it" %
          (unmatched, len(qs)))
    extra = ["fast", "batch", "robust", "gpu", "sparse", "streaming", "parallel", "approximate"]
    ms = [match(x[1]) for x in qs]
    for size in sizes:
        big = []
        for i in range(size):
            t = dict(tools[i % len(tools)])
            t["name"] = "%s_%d" % (t["name"], i // len(tools))
            t["description"] = "%s (%s variant %d)" % (t["description"], extra[i % len(extra)],
                                                       i // len(tools))
            big.append(t)
        c = db(big)
        rounds = max(1, 20000 // len(ms) if size <= 1000 else 3000 // len(ms))
        times = []
        for _ in range(rounds):
            for m in ms:
                s = time.perf_counter()
                c.execute(SQL, (m, 5)).fetchall()
                times.append(time.perf_counter() - s)
        times.sort()
        print("FTS5 bm25(), %5d tools, %d queries x %d: mean %.1f us, median %.1f us, p99 %.1f us per query" %
              (size, len(ms), rounds, sum(times) / len(times) * 1e6, times[len(times) // 2] * 1e6,
               times[len(times) * 99 // 100] * 1e6))


main()
