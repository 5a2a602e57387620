#!/usr/bin/env bash
# Request parse/write timings (providers/) on the largest recorded trajectory
# (~430 KB OpenAI chat body). Builds first; prints microseconds per call.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build.sh --target providers_bench >/dev/null
exec "${BUILD_DIR:-build}/scripts/bench/providers_bench" -tc='bench*' --no-skip
