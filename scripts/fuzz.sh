#!/usr/bin/env bash
# Runs every libFuzzer target of the sanitizer build (scripts/sanitize.sh builds
# it), seeded from tests/fixtures: FUZZ_RUNS inputs each (default 20000) from
# a fixed random seed, so that every CI run does about the same search rather
# than as much as the machine's speed allows (libFuzzer is still not
# bit-for-bit repeatable: ASan's addresses and the targets' warm caches move
# its coverage a little between runs); FUZZ_SECONDS (default 60) caps each
# target's time. Raise both (and change FUZZ_SEED) for a deeper hunt.
# Every file under tests/fuzz/regressions/<target>/ (inputs that once crashed
# a target) is replayed first. A crash fails the run; the input is kept in
# $BUILD_DIR/fuzz/<target>/crash-*: add it to tests/fuzz/regressions/<target>/
# with the fix. Prints executions and coverage per target.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=$ROOT/${BUILD_DIR:-build-sanitize}
SECONDS_EACH=${FUZZ_SECONDS:-60}
RUNS=${FUZZ_RUNS:-20000}
F=$ROOT/tests/fixtures
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1:suppressions=$ROOT/scripts/ubsan.supp}

# seeds TARGET FILE...: copies the files into the target's seed folder.
# (Globs that match nothing stay as they are and are skipped.)
seeds() { local d=$B/fuzz/$1/seeds; mkdir -p "$d"; shift; for f in "$@"; do if [[ -f $f ]]; then cp "$f" "$d/"; fi; done; }
# framed TARGET BYTE FILE...: the files with one leading control byte (fuzz_response's format switch).
framed() {
  local d=$B/fuzz/$1/seeds byte=$2; mkdir -p "$d"; shift 2
  for f in "$@"; do if [[ -f $f ]]; then { printf "\\x$(printf %02x "$byte")"; cat "$f"; } >"$d/$byte-$(basename "$f")"; fi; done
}

seeds request_openai_chat $F/providers/openai-chat.json $F/wire/openai-chat*.request.json $F/replay/claude-code-2.json $F/replay/tau-bench-3.json
seeds request_openai_responses $F/providers/openai-responses*.json $F/wire/openai-responses*.request.json
seeds request_anthropic $F/providers/anthropic.json $F/wire/anthropic*.request.json
seeds request_gemini $F/providers/gemini.json $F/wire/gemini*.request.json
# fuzz_response: byte = api (0 chat, 1 responses, 2 gemini, 3 anthropic) + 4 for SSE + 8 * (piece size - 1).
framed response $((0 + 4 + 8 * 6)) $F/wire/openai-chat*.sse $F/synth/openai-chat-stream-long.sse
framed response $((1 + 4 + 8 * 9)) $F/wire/openai-responses*.sse $F/synth/openai-responses-stream.sse
framed response $((2 + 4 + 8 * 2)) $F/wire/gemini*.sse
framed response $((3 + 4 + 8 * 30)) $F/wire/anthropic*.sse
framed response 0 $F/synth/openai-error-*.json $F/wire/openai-chat-*[a-z].json
framed response 2 $F/wire/gemini-generatecontent-*[a-z].json $F/synth/gemini-error-*[a-z].json
framed response 3 $F/wire/anthropic-messages-*[a-z].json $F/synth/anthropic-error-*[a-z].json
mkdir -p "$B/fuzz/rate_limits/seeds"
for f in $F/synth/*.headers.json $F/wire/*.headers.json; do
  node -e 'const h=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));
    const o=Array.isArray(h)?h:Object.entries(h.headers||h);
    process.stdout.write(o.map(([k,v])=>k+": "+(Array.isArray(v)?v.join(", "):v)).join("\n"))' "$f" \
    >"$B/fuzz/rate_limits/seeds/$(basename "$f")" 2>/dev/null || true
done
node "$ROOT/tests/fuzz/recall_seeds.mjs" "$B/fuzz/recall/seeds"
seeds config $ROOT/config/tokendiet.example.yaml
mkdir -p "$B/fuzz/tokenizer/seeds"
head -c 200000 "$F/tokenizer/cases.jsonl" | split -l 40 - "$B/fuzz/tokenizer/seeds/cases-"

status=0
for bin in "$B"/tests/fuzz/fuzz_*; do
  t=${bin##*/fuzz_}
  dir=$B/fuzz/$t; mkdir -p "$dir/corpus" "$dir/seeds"
  reg=$ROOT/tests/fuzz/regressions/$t
  if [[ -d $reg ]] && compgen -G "$reg/*" >/dev/null; then
    "$bin" "$reg"/* >"$dir/regressions.log" 2>&1 || { echo "fuzz $t: a regression input fails again: $dir/regressions.log"; status=1; }
  fi
  if "$bin" -seed="${FUZZ_SEED:-1}" -runs="$RUNS" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
       -artifact_prefix="$dir/" -print_final_stats=1 "$dir/corpus" "$dir/seeds" >"$dir/run.log" 2>&1; then
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/run.log" | grep -o '[0-9]*$' || echo ?)
    cov=$(grep -o 'cov: [0-9]*' "$dir/run.log" | tail -1 | grep -o '[0-9]*' || echo ?)
    echo "fuzz $t: ok, $execs executions, coverage $cov edges, corpus $(ls "$dir/corpus" | wc -l)"
  else
    echo "fuzz $t: FAILED (log: $dir/run.log)"; tail -40 "$dir/run.log"; status=1
  fi
done
exit $status
