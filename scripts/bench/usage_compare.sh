#!/usr/bin/env bash
# `tokendiet usage --compare` on a big ledger: time and peak memory, beside
# plain `tokendiet usage` on the same file (docs/benchmarks.md §Usage ledger).
# The ledger's schema is the binary's own (a `serve` started and stopped on
# it); its rows are made by sqlite3: ROWS requests (1,000,000) over SESSIONS
# sessions (20,000), a fifth of them control, over 4 models, priced when
# written except one row in ten. TOKENDIET_BIN: the binary (else built).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROWS=${ROWS:-1000000}
SESSIONS=${SESSIONS:-20000}
if [[ -z ${TOKENDIET_BIN:-} ]]; then
  scripts/build.sh --target tokendiet >&2
  TOKENDIET_BIN="$PWD/build/cli/tokendiet"
fi
dir=$(mktemp -d)
trap 'kill "${serve_pid:-0}" 2>/dev/null || true; [[ -n ${KEEP:-} ]] || rm -rf "$dir"' EXIT
db="$dir/usage.db"
printf 'ledger: {path: "%s"}\nprices:\n  - {model: "m*", input: 3, cached_input: 0.3, cache_write: 3.75, output: 15}\n' \
  "$db" > "$dir/tokendiet.yaml"
"$TOKENDIET_BIN" serve --config "$dir/tokendiet.yaml" --listen 127.0.0.1:0 2>"$dir/serve.log" &
serve_pid=$!
for _ in $(seq 100); do [[ -s $db ]] && grep -q listening "$dir/serve.log" && break; sleep 0.1; done
kill "$serve_pid"; wait "$serve_pid" || true
has_arm=$(sqlite3 "$db" "SELECT COUNT(*) FROM pragma_table_info('requests') WHERE name = 'arm'")
extra_cols="" extra_vals=""
if [[ $has_arm == 1 ]]; then
  extra_cols=", arm, session_key, tokens_diet, rereads, recall_rounds, context_errors, input_cost_usd"
  extra_vals=", CASE WHEN s % 5 = 0 THEN 'control' ELSE 'treatment' END, printf('%016x', s), 600, i % 7 = 0,
     i % 11 = 0, i % 97 = 0, CASE WHEN i % 10 = 0 THEN NULL ELSE 0.0009 + (s % 13) * 0.0001 END"
fi
sqlite3 "$db" "PRAGMA journal_mode=WAL;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $ROWS),
     r(i, s) AS (SELECT i, (i * 7919) % $SESSIONS FROM n)
INSERT INTO requests (time_ms, request_id, session, key_fingerprint, provider, model, profile, mode,
  tokens_before, tokens_after, prompt_tokens, completion_tokens, cached_read_tokens, cache_write_tokens,
  usage_present, status, strategies $extra_cols)
SELECT 1790000000000 + i * 100, 'r' || i, 'sess-' || s, '0123456789abcdef', 'anthropic', 'm' || (s % 4), 'default',
  'standard', 1000, 600, 610, 50, 300, 20, 1, CASE WHEN i % 211 = 0 THEN 429 ELSE 200 END, 'stale_tool_outputs'
  $extra_vals FROM r;" >/dev/null
echo "ledger: $db"; echo "ledger: $ROWS rows, $SESSIONS sessions, $(du -h "$db" | cut -f1)"
modes=("")
"$TOKENDIET_BIN" usage --help | grep -q -- --compare && modes+=("--compare")  # a binary from before it: usage alone
for args in "${modes[@]}"; do
  for run in 1 2 3; do
    /usr/bin/time -f "usage $args: %e s, %M KB peak" "$TOKENDIET_BIN" usage $args --config "$dir/tokendiet.yaml" \
      --ledger "$db" >/dev/null
  done
done
