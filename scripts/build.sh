#!/usr/bin/env bash
# Configures and builds tokendiet into build/ (BUILD_DIR overrides).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache hits across worktrees and clones: paths relative to the checkout.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
BUILD_DIR=${BUILD_DIR:-build}
if [[ ! -f $BUILD_DIR/build.ninja ]]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} >/dev/null
fi
cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}" "$@"
