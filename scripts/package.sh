#!/usr/bin/env bash
# Builds the Debian package of tokendiet (cmake/package.cmake, CPack) and
# prints its path:
#   scripts/package.sh [OUTDIR]      default: the build directory
#   sudo apt install ./build/tokendiet_0.1.0-1_amd64.deb
# Check it with: lintian build/tokendiet_*.deb
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
OUT=${1:-$BUILD_DIR}
scripts/build.sh --target tokendiet
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
(cd "$BUILD_DIR" && cpack -G DEB -B "$OUT" >/dev/null)
rm -rf "$OUT/_CPack_Packages"
ls "$OUT"/tokendiet_*.deb
