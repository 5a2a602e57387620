#!/usr/bin/env bash
# Installs everything, builds, and runs every test: unit, integration and e2e
# on the release build, then the sanitizer build (ASan + UBSan) of the unit
# and integration tests and every fuzz target for a bounded time
# (scripts/sanitize.sh), and that the C++ is in the tree's format
# (scripts/format.sh --check).
#   scripts/test.sh                  all of it (what CI runs)
#   scripts/test.sh --quick [ARGS]   the release build's tests only; ARGS go to ctest, e.g. -L unit
#   scripts/test.sh --realcli [ARGS] only the optional real-CLI suite (ctest label realcli: Claude
#                                    Code, Codex and Gemini CLI from npm through tokendiet;
#                                    tests/realcli/), which the other two leave out (it downloads
#                                    about 900 MB once)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0 labels=(-LE realcli)
if [[ "${1:-}" == --quick ]]; then quick=1; shift; fi
if [[ "${1:-}" == --realcli ]]; then quick=1 labels=(-L realcli); shift; fi
scripts/setup.sh --test
scripts/build.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure --timeout 600 -j "${TEST_JOBS:-2}" "${labels[@]}" "$@")
if ((quick == 0)); then
  scripts/sanitize.sh
  scripts/format.sh --check  # clang-format comes with the sanitizer's packages
fi
