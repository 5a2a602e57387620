#!/usr/bin/env bash
# Side-by-side tokenizer benchmark (F5): `tokendiet count` against tiktoken
# (WASM build of OpenAI's Rust core), js-tiktoken and gpt-tokenizer, in one
# run, on the 5.26 MB corpus and the 521 reference cases; the run fails if any
# count of ours differs from tiktoken's. Heavy: run it by hand, not in CI.
#   scripts/bench/tokenizer.sh [bench.mjs options, e.g. --runs 3 --enc o200k_base]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
scripts/build.sh --target tokendiet >/dev/null
BIN=$ROOT/${BUILD_DIR:-build}/cli/tokendiet
cd scripts/bench/tokenizer
if [[ ! -d node_modules ]] || ! npm ls --silent >/dev/null 2>&1; then
  npm ci --no-audit --no-fund --silent
fi
if [[ ! -f corpus.txt ]]; then
  xz -dc corpus.txt.xz > corpus.txt   # sha256 c1b816e6…, see README.md
fi
exec node bench.mjs --cases "$ROOT/tests/fixtures/tokenizer/cases.jsonl" \
  --cmd "$BIN count --encoding {enc}" --cmd-jsonl "$BIN count --encoding {enc} --jsonl" "$@"
