#!/usr/bin/env bash
# Installs everything, builds, and runs every test: unit, integration and e2e
# on the release build, then the sanitizer build (ASan + UBSan) of the unit
# and integration tests and every fuzz target for a bounded time
# (scripts/sanitize.sh).
#   scripts/test.sh                  all of it (what CI runs)
#   scripts/test.sh --quick [ARGS]   the release build's tests only; ARGS go to ctest, e.g. -L unit
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [[ "${1:-}" == --quick ]]; then quick=1; shift; fi
scripts/setup.sh --test
scripts/build.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure --timeout 600 -j "${TEST_JOBS:-2}" "$@")
if ((quick == 0)); then scripts/sanitize.sh; fi
