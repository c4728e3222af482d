"""report.py - print the results of bench.py as a table; with --readme,
also write them into bench/README.md between the "last-results" markers.

usage: report.py RESULTS.json [--readme bench/README.md]
"""

import argparse
import json
import sys

BEGIN = "<!-- last-results:begin (written by bench/report.py) -->"
END = "<!-- last-results:end -->"


def rows(res):
    """(label, median ms, p90 ms, n, note) rows; a ratio row has None for p90."""
    out = []
    s = res.get("summary", {})

    def row(label, part, key, note=""):
        m = s.get(part, {}).get(key)
        if m and m.get("n"):
            out.append((label, m["median"], m["p90"], m["n"], note))

    def ratio(label, part, num, den, note="", den_part=None):
        a = s.get(part, {}).get(num)
        b = s.get(den_part or part, {}).get(den)
        if a and b and a.get("n") and b.get("n") and b["median"] > 0:
            out.append((label, a["median"] / b["median"], None, None, note))

    if "roundtrip" in s:
        out.append(("1. warm session, `1+1`",))
        row("codeexecd tools/call (HTTP keep-alive)", "roundtrip", "codeexecd_ms")
        row("jupyter_client execute (direct to ipykernel)", "roundtrip", "jupyter_client_ms")
        ratio("ratio codeexecd / jupyter_client", "roundtrip", "codeexecd_ms",
              "jupyter_client_ms", "aim <= 0.7")
        row("codeexecd `ping` (HTTP + JSON-RPC, no kernel)", "roundtrip", "ping_ms", "floor")
    if "new_session" in s:
        out.append(("2. new session, `1+1`",))
        row("initialize -> first result", "new_session", "first_result_ms", "aim <= 50 ms")
        row("  of which initialize + initialized", "new_session", "initialize_ms")
        row("  of which the first tools/call", "new_session", "first_call_ms")
        row("DELETE of the session", "new_session", "delete_ms")
        row("cold kernel: KernelManager start + `1+1`", "new_session", "cold_kernel_ms",
            "baseline")
        row("  of which its first `1+1`", "new_session", "cold_first_execute_ms",
            "compare: the first tools/call")
        ratio("ratio first result / cold kernel", "new_session", "first_result_ms",
              "cold_kernel_ms")
        ratio("ratio first tools/call / warm tools/call (part 1)", "new_session",
              "first_call_ms", "codeexecd_ms", "aim <= 1.5", den_part="roundtrip")
        ratio("ratio first result / warm tools/call (part 1)", "new_session",
              "first_result_ms", "codeexecd_ms", "", den_part="roundtrip")
        row("wait for the pool to refill (between rounds)", "new_session",
            "pool_refill_wait_ms")
    if "progress_1p1" in s:
        out.append(("3. progress-streamed vs plain call",))
        row("`1+1` with progressToken, SSE accepted: result", "progress_1p1", "sse_result_ms")
        row("  the same, to the end of the answer", "progress_1p1", "sse_end_ms")
        row("`1+1` plain", "progress_1p1", "plain_ms")
        ratio("ratio streamed / plain (`1+1`)", "progress_1p1", "sse_result_ms", "plain_ms")
    if "progress_print" in s:
        sl = res.get("params", {}).get("print_sleep", 0.1)
        ev = s["progress_print"].get("progress_events", {})
        row("5 prints %g s apart, streamed: result event" % sl, "progress_print",
            "sse_result_ms",
            "%g progress notifications (median)" % ev.get("median", 0) if ev else "")
        row("  the same, to the end of the SSE stream", "progress_print", "sse_end_ms")
        row("5 prints %g s apart, plain" % sl, "progress_print", "plain_ms")
        ratio("ratio streamed / plain (5 prints, result)", "progress_print", "sse_result_ms",
              "plain_ms")
        ratio("ratio streamed / plain (5 prints, stream end)", "progress_print", "sse_end_ms",
              "plain_ms")
    if "big_print" in s:
        mb = res.get("params", {}).get("big_bytes", 10_000_000) / 1e6
        out.append(("5. `print('x' * %d)`, %g MB of stdout" % (mb * 1e6, mb),))
        row("codeexecd tools/call, plain", "big_print", "plain_ms")
        row("codeexecd tools/call, progressToken + SSE", "big_print", "sse_ms")
        row("jupyter_client execute", "big_print", "jupyter_client_ms", "baseline")
        ratio("ratio plain / jupyter_client", "big_print", "plain_ms", "jupyter_client_ms")
        ratio("ratio streamed / jupyter_client", "big_print", "sse_ms", "jupyter_client_ms")
    if "cancel" in s:
        out.append(("4. cancel of `time.sleep(60)`",))
        row("cancel POST -> next `1+1` answered", "cancel", "cancel_to_idle_ms",
            "kernel idle again")
        row("jupyter_client: interrupt_kernel -> next `1+1`", "cancel", "jupyter_client_ms",
            "baseline")
        ratio("ratio codeexecd / jupyter_client", "cancel", "cancel_to_idle_ms",
              "jupyter_client_ms")
        row("  the notifications/cancelled POST itself", "cancel", "cancel_post_ms")
        row("cancel POST -> cancelled call's answer", "cancel", "cancel_to_answer_ms")
        ab = res.get("cancel", {}).get("next_call_aborted")
        if ab:
            out.append(("next `1+1` answered \"aborted\" and resent", ab.get("codeexecd", 0),
                        ab.get("jupyter_client", 0), "count"))
    return out


def fmt_ms(v):
    if v >= 100:
        return "%.0f ms" % v
    if v >= 10:
        return "%.1f ms" % v
    return "%.2f ms" % v


def text_table(res):
    lines = []
    for r in rows(res):
        if len(r) == 1:
            lines.append(r[0].replace("`", ""))
            continue
        if len(r) == 4:
            lines.append("  %-52s codeexecd %d, jupyter_client %d" % (
                r[0].replace("`", ""), r[1], r[2]))
            continue
        label, med, p90, n, note = r
        label = "  " + label.replace("`", "")
        if p90 is None:
            lines.append("%-54s %9.2fx %9s %4s  %s" % (label, med, "", "", note))
        else:
            lines.append("%-54s %10s %9s %4d  %s" % (label, fmt_ms(med), fmt_ms(p90), n, note))
    head = "%-54s %10s %9s %4s" % ("", "median", "p90", "n")
    return "\n".join([head] + lines)


def md_table(res):
    lines = ["| measurement | median | p90 | n | note |", "|---|---:|---:|---:|---|"]
    for r in rows(res):
        if len(r) == 1:
            lines.append("| **%s** | | | | |" % r[0])
            continue
        if len(r) == 4:
            lines.append("| %s | | | | codeexecd %d times, jupyter_client %d |" % r[:3])
            continue
        label, med, p90, n, note = r
        if label.startswith("  "):
            label = "&nbsp;&nbsp;" + label[2:]
        if p90 is None:
            lines.append("| %s | **%.2f** | | | %s |" % (label, med, note))
        else:
            lines.append("| %s | %s | %s | %d | %s |" % (label, fmt_ms(med), fmt_ms(p90), n,
                                                        note))
    return "\n".join(lines)


def facts_md(f):
    return "\n".join([
        "- date: %s; one run took %s s" % (f.get("date"), f.get("duration_s")),
        "- machine: %s CPUs (%s), load average %s at the start, %s at the end; "
        "Linux %s" % (f.get("nproc"), f.get("cpu") or "?", f.get("loadavg_start"),
                      f.get("loadavg_end"), f.get("kernel")),
        "- Python %s; ipykernel %s; jupyter_client %s; pyzmq %s (libzmq %s)" % (
            f.get("python"), f.get("ipykernel"), f.get("jupyter_client"), f.get("pyzmq"),
            f.get("libzmq")),
        "- %s built from commit %s; jupyter_client kernels on ZeroMQ transport %s, like the "
        "daemon's" % (f.get("codeexecd"), f.get("commit") or "?",
                      f.get("transport_baseline")),
    ])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--readme")
    args = ap.parse_args()
    with open(args.results) as f:
        res = json.load(f)
    f = res["facts"]
    print("codeexecd benchmark, %s, %s CPUs, load %s -> %s, commit %s" % (
        f.get("date"), f.get("nproc"), f.get("loadavg_start"), f.get("loadavg_end"),
        f.get("commit") or "?"))
    print(text_table(res))
    if not args.readme:
        return
    with open(args.readme) as fh:
        text = fh.read()
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i:
        sys.exit("report.py: %s has no %s ... %s markers" % (args.readme, BEGIN, END))
    section = "%s\n%s\n\n%s\n%s" % (BEGIN, facts_md(f), md_table(res), END)
    with open(args.readme, "w") as fh:
        fh.write(text[:i] + section + text[j + len(END):])
    print("report.py: wrote the results into %s" % args.readme, file=sys.stderr)


if __name__ == "__main__":
    main()
