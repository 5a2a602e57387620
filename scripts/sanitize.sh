#!/usr/bin/env bash
# The sanitizer build: clang with AddressSanitizer + UndefinedBehaviorSanitizer
# (and libFuzzer's coverage hooks, so the fuzz targets share it), into
# build-sanitize/. Runs the unit and integration tests against it, then every
# fuzz target for a bounded time (scripts/fuzz.sh).
#   scripts/sanitize.sh             build, test, fuzz
#   scripts/sanitize.sh --no-fuzz   build and test only
# Extra ctest arguments after --, e.g. scripts/sanitize.sh --no-fuzz -- -R unit_net
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz=1
if [[ "${1:-}" == --no-fuzz ]]; then fuzz=0; shift; fi
[[ "${1:-}" == -- ]] && shift
scripts/setup.sh --sanitize
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
B=${SANITIZE_BUILD_DIR:-build-sanitize}
# -fno-sanitize=function: clang 14 cannot emit that check for coroutines
# ("Cannot represent a difference across sections").
flags="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize=function -fsanitize=fuzzer-no-link"
if [[ ! -f $B/build.ninja ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DTD_TCMALLOC=OFF -DTD_FUZZ=ON >/dev/null
fi
cmake --build "$B" -j "${JOBS:-$(nproc)}"
# Any report fails the test that caused it (UBSan's checks are recoverable
# only so that scripts/ubsan.supp can name the libraries' own).
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1:suppressions=$PWD/scripts/ubsan.supp}
export TD_SANITIZED=1  # tests that bound RSS allow for ASan's shadow memory and quarantine
(cd "$B" && ctest --output-on-failure --timeout 900 -j "${TEST_JOBS:-2}" -L 'unit|integration' "$@")
if ((fuzz)); then BUILD_DIR=$B scripts/fuzz.sh; fi
