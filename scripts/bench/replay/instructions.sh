#!/usr/bin/env bash
# Instructions per replayed request: the diet's cost (parse + pipeline +
# write, what `tokendiet replay` times as pipeline ms) counted by callgrind,
# which a shared or virtual machine without hardware counters cannot spoil.
# Per trajectory FILE: p50, p99 and max instructions over its requests (the
# untimed warm-up request left out), and with --requests one line per request.
#
#   scripts/bench/replay/instructions.sh [--bin PATH] [--requests] [--keep DIR] FILE...
#
# --keep DIR leaves each trajectory's callgrind dumps in DIR/NAME (one file
# per dump; callgrind_annotate one to see where a request's instructions went).
#
# Needs valgrind (scripts/setup.sh --bench). Each trajectory runs about 50x
# slower than natively (a minute or two for the largest fixture).
set -euo pipefail
cd "$(dirname "$0")/../../.."
BIN=build/cli/tokendiet
PER_REQUEST=0
KEEP=
FILES=()
while (($#)); do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --requests) PER_REQUEST=1; shift ;;
    --keep) KEEP=$2; shift 2 ;;
    *) FILES+=("$1"); shift ;;
  esac
done
((${#FILES[@]})) || { echo "usage: $0 [--bin PATH] [--requests] [--keep DIR] FILE..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "missing valgrind: run scripts/setup.sh --bench" >&2; exit 1; }
DIET='td::diet::diet_body(td::providers::ChatRoute const&, std::__cxx11::*'
AFTER='td::cli::measure(*'  # the next call replay makes once the diet returns
printf '%-34s %5s %14s %14s %14s\n' trajectory reqs p50_Ir p99_Ir max_Ir
for f in "${FILES[@]}"; do
  dir=$(mktemp -d)
  # A dump as each diet call starts and as the measurement after it starts:
  # a dump made at a measurement that follows one made at a diet call holds
  # that call (and the few hundred instructions of its timing). Callgrind
  # makes no --dump-after dumps of this function, nor dumps under --toggle-collect.
  valgrind --tool=callgrind --callgrind-out-file="$dir/cg" "--dump-before=$DIET" "--dump-before=$AFTER" \
    "$BIN" replay "$f" >/dev/null 2>"$dir/log" || { cat "$dir/log" >&2; exit 1; }
  # The warm-up request is followed by the first request's diet call, not by
  # a measurement, so it is left out.
  python3 - "$dir" "$(basename "$f" .json)" "$PER_REQUEST" <<'EOF'
import glob, math, os, sys
d, name, per = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
def read(p):
    trigger, total = "", 0
    for line in open(p):
        if line.startswith("desc: Trigger:"):
            trigger = line
        elif line.startswith(("summary:", "totals:")):
            total = int(line.split()[1])
    return "diet_body" in trigger, "measure" in trigger, total
dumps = sorted(glob.glob(os.path.join(d, "cg.*")), key=lambda p: int(p.rsplit(".", 1)[1]))
seen = [read(p) for p in dumps]
ir = [t for (was_diet, _, _), (_, at_measure, t) in zip(seen, seen[1:]) if was_diet and at_measure]
s = sorted(ir)
pct = lambda q: s[max(1, min(len(s), math.ceil(q * len(s)))) - 1]  # as the replay ranks its ms
print(f"{name:34s} {len(ir):5d} {pct(0.5):14,d} {pct(0.99):14,d} {s[-1]:14,d}")
if per:
    # The dump file holding each request, for --keep.
    files = [p for (was_diet, _, _), (_, at_measure, _), p in zip(seen, seen[1:], dumps[1:]) if was_diet and at_measure]
    for i, (v, p) in enumerate(zip(ir, files), 1):
        print(f"  request {i:4d} {v:14,d}  {os.path.basename(p)}")
EOF
  if [[ -n $KEEP ]]; then mkdir -p "$KEEP" && rm -rf "${KEEP:?}/$(basename "$f" .json)" && mv "$dir" "$KEEP/$(basename "$f" .json)"; else rm -rf "$dir"; fi
done
