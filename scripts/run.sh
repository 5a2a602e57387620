#!/usr/bin/env bash
# Installs what is needed, builds, and runs the proxy on 127.0.0.1:8787 with
# the embedded default config. Arguments go to `tokendiet serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh --target tokendiet
exec "${BUILD_DIR:-build}"/cli/tokendiet serve "$@"
