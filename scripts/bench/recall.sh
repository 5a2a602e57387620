#!/usr/bin/env bash
# The recall round's added work at the proxy per format (scripts/bench/recall_bench.cpp):
# microseconds per round for a 100 KB archive entry. Builds first.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build.sh --target recall_bench >/dev/null
exec "${BUILD_DIR:-build}/scripts/bench/recall_bench"
