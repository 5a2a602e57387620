#!/usr/bin/env bash
# Request parse/write timings (providers/) on the largest recorded trajectory
# (~430 KB OpenAI chat body). Builds first; prints microseconds per call.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build.sh --target unit_providers >/dev/null
exec "${BUILD_DIR:-build}/tests/unit_providers" -tc='bench*' --no-skip
