#!/usr/bin/env python3
"""Whether two `tokendiet replay --json` reports say the same but for time.

A change meant to make the diet faster must not change what it sends: every
trajectory's tokens_with and cost_with (and every other figure the replay
derives from the bytes sent: retention, copied lines, charges) must be
identical. Only pipeline_p50_ms, pipeline_p99_ms and plans_ahead_ms may differ.

  scripts/bench/replay/same_output.py BEFORE.json AFTER.json
Exit status 0 when identical, 1 with the differing fields listed.
"""
import json
import sys

TIMES = {"pipeline_p50_ms", "pipeline_p99_ms", "plans_ahead_ms"}


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in TIMES}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def diff(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            diff(a.get(k), b.get(k), f"{path}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            name = x.get("id", i) if isinstance(x, dict) else i
            diff(x, y, f"{path}[{name}]", out)
    elif a != b:
        out.append(f"{path}: {a!r} -> {b!r}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = (strip(json.load(open(p))) for p in sys.argv[1:])
    out = []
    diff(a, b, "", out)
    for line in out:
        print(line)
    n = len(a.get("trajectories", []))
    print(f"{'identical' if not out else 'DIFFERENT'}: {n} trajectories, {len(out)} fields differ")
    sys.exit(1 if out else 0)


if __name__ == "__main__":
    main()
