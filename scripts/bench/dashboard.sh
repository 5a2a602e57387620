#!/usr/bin/env bash
# The dashboard's stats API (GET /v1/tokendiet/stats) on a big ledger: the
# time of an uncached answer and the proxy's peak memory (docs/benchmarks.md
# §Usage ledger). The ledger is usage_compare.sh's (1,000,000 rows, the
# binary's own schema; it also times `tokendiet usage` on it). The window
# asked for covers every row (WINDOW seconds, a year), the worst case.
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
for run in 1 2 3; do
  sleep 1.1  # past the one-second cache
  curl -s -o "$dir/stats.json" -w "stats (window ${WINDOW} s): %{time_total} s, %{size_download} bytes\n" \
    "http://127.0.0.1:$port/v1/tokendiet/stats?window=$WINDOW"
done
curl -s -o /dev/null -w "stats again within the second (cached): %{time_total} s\n" \
  "http://127.0.0.1:$port/v1/tokendiet/stats?window=$WINDOW"
sleep 1.1
curl -s -o /dev/null -w "stats (a day's window, the page's default): %{time_total} s\n" \
  "http://127.0.0.1:$port/v1/tokendiet/stats"
python3 -c "import json,sys; d=json.load(open('$dir/stats.json')); print('rows counted:', d['totals']['requests'], 'error:', d['error'])"
echo "proxy after: $(grep VmHWM /proc/$serve_pid/status)"
