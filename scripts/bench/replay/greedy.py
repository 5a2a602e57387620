#!/usr/bin/env python3
"""The cheapest defaults within the recall-rounds target, found step by step
on the tuning set only (docs/benchmarks.md §Defaults within the rounds target).

  python3 scripts/bench/replay/greedy.py [--steps N] [--target R] [--start JSON] [--hold KEY]... [--out DIR] [SET...]

From the built-in defaults (or --start, a JSON object of profile keys), each
key below is moved one value up or down; each candidate is replayed
(`build/cli/tokendiet replay SET... --json`, two at a time), and the move
taken is the one sparing the most recall rounds per point of charged saving
(openai pricing) it loses; a move that spares rounds and loses nothing, or
saves more without a round more, goes first. A move after which a
trajectory that cost less than going direct costs more (charged, either
pricing) is not taken. Where some moves reach R recall rounds per 100
requests, the one saving the most of them is taken instead (the last step
buys no more rounds than the target asks). It stops after N steps, when no
move spares a round, or once within R. A key given to --hold is not moved
(a value another measure ruled out: the real-CLI suite's bills,
docs/benchmarks.md §The rounds target after four runs moved). It starts
from the defaults the example config states (the embedded default). Each replay's JSON is kept in --out by the hash of its config and
those defaults, so a second run reuses them: clear --out after a rebuild.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import subprocess

# Each key's values, in order: a move goes to the next one up or down.
KEYS = {
    "window_turns": [3, 4, 5, 6],
    "exclude_tools": ["[]", '["Agent", "Task"]'],
    "stale_tool_outputs_keep_fresh_reads_turns": [16, 24, 32, 48],
    "stale_tool_outputs_keep_fresh_reads_bytes": [2048, 4096, 8192],
    "stale_tool_outputs_held_reads_bytes": [65536, 131072, 196608],
    "stale_tool_outputs_keep_reads_bytes": [2048, 4096, 8192],
    "stale_tool_outputs_names": [96, 192, 384, 768],
    "completed_tasks_min_output_bytes": [4096, 16384],
    "stale_tool_outputs_keep_edited_turns": [0, 4, 8],
    "keep_tool_uses": [3, 5, 8],
    "stale_tool_outputs_head_bytes": [80, 160, 240, 320],
    "stale_tool_outputs_threshold_bytes": [384, 768, 1024, 1536],
    "stale_tool_outputs_min_saving_bytes": [32, 256, 512, 1024],
    "payback_requests": [8, 12, 16, 24, 32],
    "payback_turn_fraction": [0.3, 0.4, 0.5],
}


def number(value):
    """An int or a float where the text is one, else the text."""
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def example_defaults(path="config/tokendiet.example.yaml"):
    """The searched keys' values in the example config, which is the embedded
    default (tests/unit/config/embedded_default_test.cpp): one copy of them."""
    out = {}
    for line in open(path):
        key, sep, rest = line.strip().partition(":")
        if sep and key in KEYS and key not in out:
            value = rest.split("#", 1)[0].strip()
            out[key] = number(value)
    missing = set(KEYS) - set(out)
    if missing:
        raise SystemExit("%s lacks %s" % (path, ", ".join(sorted(missing))))
    return out


DEFAULTS = example_defaults()


def replay(config, sets, out):
    lines = "".join("    %s: %s\n" % (k, v) for k, v in sorted(config.items()) if DEFAULTS.get(k) != v)
    yaml = 'profiles:\n  - name: default\n    models: ["*"]\n' + lines
    key = hashlib.md5((yaml + json.dumps(DEFAULTS, sort_keys=True) + "|".join(sets)).encode()).hexdigest()[:10]
    result = os.path.join(out, key + ".json")
    if not os.path.exists(result):
        with open(os.path.join(out, key + ".yaml"), "w") as f:
            f.write(yaml)
        with open(result + ".tmp", "w") as f:
            subprocess.run(["build/cli/tokendiet", "replay", *sets, "--json", "--config", os.path.join(out, key + ".yaml")],
                           stdout=f, stderr=subprocess.DEVNULL, check=True)
        os.replace(result + ".tmp", result)
    data = json.load(open(result))
    total = data["total"]
    charged = total["charged"]
    dearer = {t["id"] for t in data["trajectories"]
              if min(t["charged"][p]["saved_charged"] for p in ("openai", "anthropic")) < 0}
    return {
        "saved": 100 * charged["openai"]["saved_charged"],
        "saved_anthropic": 100 * charged["anthropic"]["saved_charged"],
        "rounds": charged["recall_rounds"],
        "per_100": charged["recall_rounds_per_100"],
        "copied": 100 * charged["copied_lines_present"] / max(1, charged["copied_lines"]),
        "cut": 100 * total["reduction"],
        "dearer": dearer,  # trajectories costing more than without tokendiet (charged, either pricing)
    }


def show(tag, r):
    print("%-58s saved %.2f / %.2f %%, rounds %.2f (%d), copied %.1f %%, cut %.1f %%"
          % (tag, r["saved"], r["saved_anthropic"], r["per_100"], r["rounds"], r["copied"], r["cut"]), flush=True)


def score(before, after):
    spared = before["rounds"] - after["rounds"]
    lost = before["saved"] - after["saved"]  # points of charged saving lost
    if spared >= 0 and lost <= 0 and (spared > 0 or lost < 0):
        return 1000 + spared - lost
    return spared / max(lost, 0.05) if spared > 0 else -1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--target", type=float, default=0.0, help="stop once within this many rounds per 100 requests")
    ap.add_argument("--start", default="{}")
    ap.add_argument("--hold", action="append", default=[], choices=sorted(KEYS), help="a key not to move")
    ap.add_argument("--out", default="/tmp/tokendiet-greedy")
    ap.add_argument("sets", nargs="*", default=["tests/fixtures/replay"])
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    current = dict(DEFAULTS, **json.loads(a.start))
    for k, v in current.items():
        if k in KEYS and v not in KEYS[k]:
            print("%s=%s is not among %s: it stays where it is" % (k, v, KEYS[k]), flush=True)
    best = replay(current, a.sets, a.out)
    show("start", best)
    for step in range(a.steps):
        if best["per_100"] <= a.target:
            break
        moves = []
        for k, values in KEYS.items():
            if current[k] not in values or k in a.hold:
                continue
            i = values.index(current[k])
            for j in (i - 1, i + 1):
                if 0 <= j < len(values):
                    moves.append((k, values[j], dict(current, **{k: values[j]})))
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda m: replay(m[2], a.sets, a.out), moves))
        chosen = None
        for (k, v, _), r in zip(moves, results):
            flipped = sorted(r["dearer"] - best["dearer"])
            s = -1 if flipped else score(best, r)
            show("  %s=%s (%.1f)%s" % (k, v, s, " dearer: " + ", ".join(flipped) if flipped else ""), r)
            if chosen is None or s > chosen[0]:
                chosen = (s, k, v, r)
        reaching = [(r["saved"], k, v, r) for (k, v, _), r in zip(moves, results)
                    if r["per_100"] <= a.target and r["dearer"] <= best["dearer"]]
        if reaching and a.target > 0:
            _, k, v, r = max(reaching, key=lambda x: x[0])
            chosen = (score(best, r), k, v, r)
        if chosen is None or chosen[0] <= 0:
            break
        current[chosen[1]] = chosen[2]
        best = chosen[3]
        show("step %d: %s=%s" % (step, chosen[1], chosen[2]), best)
    print(json.dumps(current))


if __name__ == "__main__":
    main()
