#!/usr/bin/env bash
# Usage-ledger and metrics timings: submit() cost on an I/O thread, writer
# throughput into SQLite (WAL), metrics record/render. Builds first.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build.sh --target ledger_bench >/dev/null
exec "${BUILD_DIR:-build}/scripts/bench/ledger_bench" -tc='bench*' --no-skip
