#!/usr/bin/env bash
# The dashboard's stats API (GET /v1/tokendiet/stats) on a big ledger: the
# time and the proxy's CPU of each answer, and the proxy's peak memory
# (docs/benchmarks.md §The dashboard's stats API). The ledger is
# usage_compare.sh's (1,000,000 rows, the binary's own schema; it also times
# `tokendiet usage` and `usage --compare` on it). The window asked for covers
# every row (WINDOW seconds, a year), the worst case. The answers, one at a
# time (the next asked when the proxy's CPU is idle again):
#   first        every row read (a fresh proxy)
#   resumed      a second longer (past the cache, the same buckets): no row
#                read again (the proxy keeps the sums; before, a full read)
#   other length a window of other buckets: its rows read again
#   cached       the same within the cache's lifetime
#   day          the page's default window (no row in it)
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ -z ${TOKENDIET_BIN:-} ]]; then
  scripts/build.sh --target tokendiet >&2
  export TOKENDIET_BIN="$PWD/build/cli/tokendiet"
fi
WINDOW=${WINDOW:-31536000}
out=$(KEEP=1 scripts/bench/usage_compare.sh 2>&1 | tee /dev/stderr)
db=$(printf '%s\n' "$out" | sed -n 's/^ledger: \(\/.*usage.db\)$/\1/p')
dir=$(dirname "$db")
trap 'kill "${serve_pid:-0}" 2>/dev/null || true; rm -rf "$dir"' EXIT
port=${PORT:-18931}
"$TOKENDIET_BIN" serve --config "$dir/tokendiet.yaml" --listen "127.0.0.1:$port" 2>/dev/null &
serve_pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
echo "proxy before: $(grep VmHWM /proc/$serve_pid/status)"
cpu() { awk '{print $14 + $15}' "/proc/$serve_pid/stat"; }  # clock ticks
tick_ms=$((1000 / $(getconf CLK_TCK)))
ask() {  # LABEL WINDOW
  local c0 c1
  c0=$(cpu)
  curl -s -o "$dir/stats.json" -w "stats $1 (window $2 s): %{time_total} s, %{http_code}, %{size_download} bytes, " \
    "http://127.0.0.1:$port/v1/tokendiet/stats?window=$2"
  # The query goes on after a 503 (the proxy's 10 s wait): wait for its end.
  while :; do c1=$(cpu); sleep 0.5; [[ $(cpu) == "$c1" ]] && break; done
  echo "proxy CPU $(((c1 - c0) * tick_ms)) ms"
}
ask first "$WINDOW"
sleep 1.1
ask resumed $((WINDOW + 1))
ask "other length" $((WINDOW - 1))
ask cached $((WINDOW - 1))
ask day 86400
python3 -c "import json,sys; d=json.load(open('$dir/stats.json')); print('error:', d.get('error'))"
echo "proxy after: $(grep VmHWM /proc/$serve_pid/status)"
