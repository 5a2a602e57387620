#!/usr/bin/env python3
"""Where the copied lines the diet loses come from, and what the agent did
between the read and the copy (docs/benchmarks.md §The lines agents copy).

  build/scripts/bench/copied_dump tests/fixtures/replay/*.json > /tmp/c.jsonl
  python3 scripts/bench/replay/copied_lines.py /tmp/c.jsonl tests/fixtures/replay [--lines]

For each lost copied line (request n lacks it; the agent's message n copies
it): the tool output it was first seen in (tool, path, size, numbered Read or
not), its age (n - source), and the signals an agent gave before request n,
in its own messages after the read: the file's name in its text or calls,
a later read of the same path (another part), a grep naming it, a symbol of
the line named. Lines kept are tallied the same way, so a rule's price
(outputs it would keep that nobody copies from) can be seen beside its gain.
"""
import collections
import json
import os
import re
import sys

NUMBERED = re.compile(r"^ *\d+\u2192", re.M)
SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]{5,}")


def load(dirpath, ids):
    out = {}
    for name in sorted(os.listdir(dirpath)):
        if name.endswith(".json") and name[:-5] in ids:
            out[name[:-5]] = json.load(open(os.path.join(dirpath, name)))["messages"]
    return out


def text_of(m):
    parts = [m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content") or "")]
    parts.append(m.get("reasoning_content") or "")
    for c in m.get("tool_calls") or []:
        parts.append(c["function"]["name"] + " " + c["function"].get("arguments", ""))
    return "\n".join(parts)


def call_of(messages, i):
    """The tool call whose output is message i: (name, arguments dict)."""
    cid = messages[i].get("tool_call_id")
    for j in range(i - 1, -1, -1):
        for c in messages[j].get("tool_calls") or []:
            if c.get("id") == cid:
                try:
                    args = json.loads(c["function"].get("arguments") or "{}")
                except ValueError:
                    args = {"raw": c["function"].get("arguments")}
                return c["function"]["name"], args if isinstance(args, dict) else {"raw": args}
    return "?", {}


PATHISH = re.compile(r"[\w./-]+\.\w{1,5}")


def path_of(name, args):
    for k in ("file_path", "path", "absolute_path", "filename"):
        if isinstance(args.get(k), str):
            return args[k]
    raw = " ".join(str(v) for v in args.values())
    m = PATHISH.findall(raw)
    return m[-1] if m else ""


def signals(messages, source, n, path, line):
    base = os.path.basename(path) if path else ""
    named = reread = grepped = symbol = False
    syms = [s for s in SYMBOL.findall(line) if len(s) >= 8]
    for j in range(source + 1, n):
        m = messages[j]
        if m["role"] != "assistant":
            continue
        t = text_of(m)
        if base and base in t:
            named = True
        for c in m.get("tool_calls") or []:
            a = c["function"].get("arguments", "")
            nm = c["function"]["name"].lower()
            if base and base in a and ("read" in nm or "sed -n" in a or "cat " in a):
                reread = True
            if base and base in a and "grep" in (nm + a).lower():
                grepped = True
        if any(s in t for s in syms):
            symbol = True
    return named, reread, grepped, symbol


def main():
    dump, fixtures = sys.argv[1], sys.argv[2]
    show = "--lines" in sys.argv
    rows = [json.loads(l) for l in open(dump)]
    stale = collections.defaultdict(dict)
    for r in rows:
        stale[r["id"]][r["n"]] = r["stale"]
    lines = [r for r in rows if "line" in r and not r.get("ref")]  # copied lines (a --refs dump has references too)
    trajs = load(fixtures, {r["id"] for r in lines})
    groups = collections.Counter()
    kept = collections.Counter()
    per_output = collections.defaultdict(lambda: [0, 0, None])
    for r in lines:
        ms = trajs[r["id"]]
        src = ms[r["source"]]
        name, args = call_of(ms, r["source"])
        path = path_of(name, args)
        size = len(src.get("content") or "")
        numbered = bool(NUMBERED.search(src.get("content") or ""))
        age = r["n"] - r["source"]
        # When the read first went stale: the first request whose frontier passed it.
        went = min((k for k, s in stale[r["id"]].items() if s > r["source"]), default=None)
        sig = signals(ms, r["source"], r["n"], path, r["line"])
        sig_at_stale = signals(ms, r["source"], went, path, r["line"]) if went else (False,) * 4
        key = (
            name,
            "numbered" if numbered else "plain",
            ">=16K" if size >= 16384 else ">=2.5K" if size >= 2560 else "<2.5K",
            "age>=24" if age >= 24 else "age<24",
            "named" if sig[0] else "-",
            "named@stale" if sig_at_stale[0] else "-",
            "reread" if sig[1] else "-",
            "grep" if sig[2] else "-",
            "sym" if sig[3] else "-",
        )
        (kept if r["present"] else groups)[key] += 1
        po = per_output[(r["id"], r["source"])]
        po[0 if r["present"] else 1] += 1
        po[2] = (name, path, size, went)
        if show and not r["present"]:
            print(r["id"], r["n"], r["source"], name, path, size, age, sig, r["line"][:80])
    print("lost copied lines by (tool, form, size, age, named since, named before stale, re-read, grep, symbol):")
    for k, v in groups.most_common():
        print(f"  {v:4d} lost, {kept.get(k, 0):4d} kept  {' '.join(k)}")
    print("outputs copied from (kept, lost lines):")
    for (tid, s), (k, l, info) in sorted(per_output.items()):
        if l:
            print(f"  {tid} msg {s}: {k} kept, {l} lost; {info}")


if __name__ == "__main__":
    main()
