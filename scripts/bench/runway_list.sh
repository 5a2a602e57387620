#!/usr/bin/env bash
# The dashboard's runway lists (docs/benchmarks.md §The dashboard's stats API):
# the process's store at its bound and Redis with RUNWAYS runways, and the
# take script's round trip. Builds first; needs redis-server (scripts/setup.sh --test).
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build.sh --target runway_list_bench >/dev/null
exec "${BUILD_DIR:-build}/scripts/bench/runway_list_bench" "$@"
