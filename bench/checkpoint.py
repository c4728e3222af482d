"""checkpoint.py - checkpoint and restore against namespace size (issue 29).

Run by `bench/run.sh -c`, which starts the daemon with checkpoint limits
raised out of the way. For each namespace (numpy arrays, a pandas
DataFrame, many small objects), in a fresh session: build it, then time
py_checkpoint and py_restore as a client sees them (the tools/call round
trip), and report the checkpoint's size. Prints a Markdown table.
"""
import argparse
import time

from mcpclient import Client

# (label, code that builds the namespace, its size in MB as built)
CASES = [
    ("numpy, 1 MB", "import numpy as np\na = np.random.rand(131072)", 1),
    ("numpy, 10 MB", "import numpy as np\na = np.random.rand(1310720)", 10),
    ("numpy, 100 MB", "import numpy as np\na = np.random.rand(13107200)", 100),
    ("numpy, 1 GB", "import numpy as np\na = np.random.rand(134217728)", 1024),
    ("pandas DataFrame, 1e6 rows x 4 (32 MB)",
     "import numpy as np, pandas as pd\n"
     "df = pd.DataFrame(np.random.rand(1000000, 4), columns=list('abcd'))", 32),
    ("100,000 small objects (dicts of 3)",
     "objs = [{'i': i, 's': str(i), 'f': i / 3} for i in range(100000)]", 0),
    ("1,000 names of 10 kB each",
     "import os\nfor i in range(1000):\n    globals()['v%d' % i] = os.urandom(10000)", 10),
]


def call(c, tool, args):
    t0 = time.time()
    r = c.request("tools/call", {"name": tool, "arguments": args})
    took = (time.time() - t0) * 1000
    s = r.get("structuredContent") or {}
    if not s.get("success"):
        raise RuntimeError("%s failed: %r" % (tool, s))
    return took, s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-mb", type=int, default=1024, help="skip larger namespaces")
    a, _ = ap.parse_known_args()
    print("| namespace | checkpoint size | checkpoint (median of %d) | restore (median) |"
          % a.rounds)
    print("|---|---:|---:|---:|")
    for label, code, mb in CASES:
        if mb > a.max_mb:
            continue
        c = Client("127.0.0.1", a.port, timeout=1800)
        c.initialize()
        c.execute(code)
        saves, loads, size = [], [], 0
        for _ in range(a.rounds):
            took, s = call(c, "py_checkpoint", {})
            saves.append(took)
            size = s["size_bytes"]
            took, _ = call(c, "py_restore", {})
            loads.append(took)
        c.execute("import shutil; shutil.rmtree('.codeexecd-checkpoints')")
        c.delete()
        med = lambda v: sorted(v)[len(v) // 2]
        print("| %s | %.1f MB | %.0f ms | %.0f ms |" % (label, size / 1e6, med(saves), med(loads)),
              flush=True)


if __name__ == "__main__":
    main()
