#!/usr/bin/env python3
"""Tables for scripts/bench/proxy.sh.

  proxy_summary.py slow SLOW_STREAMS.json    the slow-streams table (from slow_streams.mjs --json)
  proxy_summary.py targets OUT_DIR           the targets of docs/benchmarks.md §Proxy against what OUT_DIR holds

Targets: req/s >= 0.8x nginx and >= 10x Portkey at every size (wrk -c32); added
p99 over direct at -c1 (2k, 50k) <= nginx's + 50 us (and <= 150 us on a quiet
machine); 512 slow streams with no stall; idle RSS <= 40 MB; instructions per
request reported. The p99 comparisons are medians over rounds of per-round
differences (a target's p99 minus direct's, or minus nginx's, in the same
round): one connection's p99 swings by hundreds of us between runs on a shared
box, and pairing runs of the same round cancels the slower drifts.
"""
import csv
import json
import os
import statistics
import sys


def runs(path):
    cols = ["round", "size", "target", "requests", "duration_us", "connect", "read", "write", "status",
            "timeout", "p50", "p90", "p99", "max", "mean", "rss_peak_kb"]
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [dict(zip(cols, r)) for r in csv.reader(f, delimiter="\t") if r]


def med(rows, size, target, key):
    vals = [r for r in rows if r["size"] == size and r["target"] == target]
    if not vals:
        return None
    if key == "rps":
        return statistics.median(int(r["requests"]) / (int(r["duration_us"]) / 1e6) for r in vals)
    return statistics.median(float(r[key]) for r in vals)


def paired(rows, size, a, b, key="p99"):
    """(median, min, max) over rounds of a's `key` minus b's in the same round."""
    by_round = {}
    for r in rows:
        if r["size"] == size:
            by_round.setdefault(r["round"], {})[r["target"]] = float(r[key])
    diffs = [v[a] - v[b] for v in by_round.values() if a in v and b in v]
    return (statistics.median(diffs), min(diffs), max(diffs)) if diffs else None


def sizes(rows):
    seen = []
    for r in rows:
        if r["size"] not in seen:
            seen.append(r["size"])
    return seen


def slow_table(path):
    d = json.load(open(path))
    print("| target | streams ok | events | max gap ms | p99.9 gap ms | p99 gap ms | p50 gap ms | first event p50 / max ms | RSS peak MB |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    f = lambda x: "-" if x is None else f"{x:.1f}"
    for r in d["results"]:
        rss = f"{r['rss_peak_kb'] / 1024:.1f}" if r.get("rss_peak_kb") else "-"
        print(f"| {r['label']} | {r['ok']}/{r['streams']} | {r['events']}/{r['expected_events']} | {f(r['max_gap_ms'])} "
              f"| {f(r['p999_gap_ms'])} | {f(r['p99_gap_ms'])} | {f(r['p50_gap_ms'])} "
              f"| {f(r['first_event_p50_ms'])} / {f(r['first_event_max_ms'])} | {rss} |")
    if d.get("idle_rss_kb"):
        print(f"\ntokendiet idle RSS (after start, before any request): {d['idle_rss_kb'] / 1024:.1f} MB. "
              f"The upstream sends one event every {d['results'][0]['gap_ms']} ms; the direct row is the jitter of "
              "the client and the fake upstream themselves on this machine.")


def targets(out):
    rows = []
    mark = lambda ok: "yes" if ok else "**NO**"
    load = runs(os.path.join(out, "load", "runs.tsv"))
    # tokendiet-core: the same binary with the diet disabled (the targets are about the
    # proxy core); tokendiet: as shipped, every chat body parsed and pruned;
    # tokendiet-relay (latency phase only): the core with the ledger off too.
    variants = (("tokendiet-relay", "relay (diet, ledger off)"), ("tokendiet-core", "core"),
                ("tokendiet", "as shipped"))
    for s in sizes(load):
        ng, pk = med(load, s, "nginx", "rps"), med(load, s, "portkey", "rps")
        for name, label in variants:
            td = med(load, s, name, "rps")
            if td and ng:
                rows.append((f"req/s vs nginx, body {s}, {label}", f"{td / ng:.2f}x", ">= 0.8x", mark(td / ng >= 0.8)))
            if td and pk:
                rows.append((f"req/s vs Portkey, body {s}, {label}", f"{td / pk:.1f}x", ">= 10x", mark(td / pk >= 10)))
    lat = runs(os.path.join(out, "latency", "runs.tsv"))
    for s in sizes(lat):
        ng = paired(lat, s, "nginx", "direct")
        for name, label in variants:
            td, vs = paired(lat, s, name, "direct"), paired(lat, s, name, "nginx")
            if ng is None or td is None or vs is None:
                continue
            rounds = len({r["round"] for r in lat if r["size"] == s})
            rows.append((f"added p99 at c=1, body {s}, {label}",
                         f"{td[0]:+.0f} us (nginx {ng[0]:+.0f} us); minus nginx's: {vs[0]:+.0f} us "
                         f"(rounds {vs[1]:+.0f}..{vs[2]:+.0f}, {rounds} rounds)",
                         "<= nginx + 50 us", mark(vs[0] <= 50)))
            rows.append((f"added p99 at c=1, body {s}, {label} (quiet machine)", f"{td[0]:+.0f} us", "<= 150 us",
                         mark(td[0] <= 150)))
    slow = os.path.join(out, "slow_streams.json")
    if os.path.exists(slow):
        d = json.load(open(slow))
        td = [r for r in d["results"] if r["label"].startswith("tokendiet")]
        direct = [r for r in d["results"] if r["label"].startswith("direct")]
        if td:
            r = td[0]
            base = direct[0]["max_gap_ms"] if direct else r["gap_ms"]
            ok = r["ok"] == r["streams"] and r["max_gap_ms"] <= base + 50
            rows.append((f"{r['streams']} slow streams, largest gap", f"{r['max_gap_ms']:.0f} ms (direct {base:.0f} ms, upstream {r['gap_ms']} ms)",
                         "all complete, <= direct + 50 ms", mark(ok)))
        if d.get("idle_rss_kb"):
            mbv = d["idle_rss_kb"] / 1024
            rows.append(("idle RSS", f"{mbv:.1f} MB", "<= 40 MB", mark(mbv <= 40)))
    idle = os.path.join(out, "load", "idle.tsv")
    if os.path.exists(idle):
        for t, kb in csv.reader(open(idle), delimiter="\t"):
            if t in ("tokendiet", "tokendiet-core"):
                rows.append((f"idle RSS, {t} (bench.sh)", f"{int(kb) / 1024:.1f} MB", "<= 40 MB", mark(int(kb) / 1024 <= 40)))
    cg = os.path.join(out, "callgrind", "table.md")
    if os.path.exists(cg):
        for line in open(cg).read().splitlines()[2:]:
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows.append((f"instructions per request, {cells[1]} ({cells[0]})", cells[4], "reported", "-"))
    print("| measure | tokendiet | target | met |")
    print("|---|--:|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("slow", "targets"):
        print(__doc__)
        sys.exit(2)
    slow_table(sys.argv[2]) if sys.argv[1] == "slow" else targets(sys.argv[2])
