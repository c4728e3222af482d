"""memsearch.py PID NEEDLE - is NEEDLE in a readable mapping of process PID?

Read by root from outside the process (/proc/PID/maps and /proc/PID/mem),
so that a test can say a secret is in no byte of a kernel's memory, not
only in none of the places the kernel's code would look. Prints how many
mappings hold it; exits 1 if any does, 0 if none (or the process is gone).
"""
import sys


def mappings_holding(pid, needle):
    hit = []
    with open("/proc/%s/maps" % pid) as maps, open("/proc/%s/mem" % pid, "rb", 0) as mem:
        for line in maps:
            a, perm = line.split()[:2]
            if "r" not in perm or "[vvar]" in line or "[vsyscall]" in line:
                continue
            lo, hi = (int(x, 16) for x in a.split("-"))
            try:
                mem.seek(lo)
                if needle in mem.read(hi - lo):
                    hit.append(line.strip())
            except (OSError, ValueError, OverflowError):
                pass
    return hit


def main():
    pid, needle = sys.argv[1], sys.argv[2].encode()
    try:
        hit = mappings_holding(pid, needle)
    except FileNotFoundError:
        print("process %s: gone" % pid)
        return 0
    print("process %s: %d readable mappings hold the needle" % (pid, len(hit)))
    return 1 if hit else 0


if __name__ == "__main__":
    sys.exit(main())
