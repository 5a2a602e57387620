#!/usr/bin/env bash
# Installs what tokendiet needs to build and test, on Debian 12 (bookworm).
# Idempotent: packages already present are not fetched again.
#   scripts/setup.sh          build dependencies
#   scripts/setup.sh --test   also the test tools (node SDKs)
#   scripts/setup.sh --sanitize  also clang, its sanitizer + libFuzzer runtime (scripts/sanitize.sh) and clang-format (scripts/format.sh)
#   scripts/setup.sh --bench  the benchmark tools (scripts/bench/proxy/setup.sh: nginx + Lua, wrk, valgrind, Portkey)
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_PKGS=(build-essential cmake ninja-build ccache pkg-config
  libboost1.81-dev libssl-dev rapidjson-dev libyaml-cpp-dev libsqlite3-dev
  libxxhash-dev libgoogle-perftools-dev libcli11-dev doctest-dev libsystemd-dev libhiredis-dev ca-certificates)
# systemd: systemd-analyze verify on the unit; dpkg-dev, file, lintian: the
# Debian package (scripts/package.sh) built with its dependencies and checked;
# redis-server: the replicas' shared state (tests/integration/shared_state);
# chromium: the dashboard's browser test (tests/integration/dashboard).
TEST_PKGS=(sqlite3 openssl curl python3 systemd dpkg-dev file lintian redis-server chromium)
SANITIZE_PKGS=(clang libclang-rt-14-dev clang-format)

want=("${BUILD_PKGS[@]}")
[[ "${1:-}" == "--sanitize" ]] && want+=("${SANITIZE_PKGS[@]}")
if [[ "${1:-}" == "--test" || "${1:-}" == "--sanitize" ]]; then
  want+=("${TEST_PKGS[@]}")
  # Node 20+ with npm for the SDK tests; a machine that already has node
  # (Debian's or NodeSource's package, which bundles npm) keeps its own.
  command -v node >/dev/null && command -v npm >/dev/null || want+=(nodejs npm)
fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ "${1:-}" == "--test" || "${1:-}" == "--sanitize" ]]; then
  for dir in tests/e2e tests/integration; do
    if [[ -f $dir/package-lock.json ]]; then
      (cd "$dir" && { [[ -d node_modules ]] && npm ls --silent >/dev/null 2>&1 || npm ci --no-audit --no-fund --silent; })
    fi
  done
fi

if [[ "${1:-}" == "--bench" ]]; then
  scripts/bench/proxy/setup.sh
fi
