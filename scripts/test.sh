#!/usr/bin/env bash
# Installs everything, builds, and runs every test (unit, integration, e2e).
# Extra arguments go to ctest, e.g. scripts/test.sh -L unit
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
scripts/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure --timeout 600 -j "${TEST_JOBS:-2}" "$@"
