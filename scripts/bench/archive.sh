#!/usr/bin/env bash
# Archive write time per entry and per MB (archive/store.hpp); DIR picks the
# file system (default: under /tmp). Builds first.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build.sh --target archive_bench >/dev/null
exec "${BUILD_DIR:-build}/scripts/bench/archive_bench" "$@"
