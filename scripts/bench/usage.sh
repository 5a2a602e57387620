#!/usr/bin/env bash
# Usage accounting throughput (providers/): the response tee per provider, the
# include_usage scrubber, the request-side splice. Builds first; prints MB/s.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build.sh --target usage_bench >/dev/null
exec "${BUILD_DIR:-build}/scripts/bench/usage_bench"
