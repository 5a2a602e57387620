#!/usr/bin/env bash
# Install what bench.sh needs: nginx with the Lua module (the fake upstream and the floor),
# wrk, curl, python3, valgrind (instruction counts), time (GNU time: peak memory, scripts/bench/usage_compare.sh),
# sqlite3, Node.js, and the Portkey gateway (pinned in portkey/package-lock.json).
# Idempotent. Note: on a systemd machine the Debian nginx package starts the system nginx
# on :80; the bench does not use it (it runs its own nginx instances with their own configs).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
need=()
for p in nginx libnginx-mod-http-lua wrk curl python3 valgrind time sqlite3 nodejs npm; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
# nodejs/npm may come from elsewhere (nvm, NodeSource): accept any node >= 18 on PATH
if command -v node >/dev/null && node -e 'process.exit(Number(process.versions.node.split(".")[0] < 18))'; then
  need=("${need[@]/nodejs}"); need=("${need[@]/npm}")
fi
need=($(printf '%s\n' "${need[@]}" | grep -v '^$' || true))
if ((${#need[@]})); then
  SUDO=""; ((EUID)) && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
if [[ ! -f $HERE/portkey/node_modules/@portkey-ai/gateway/build/start-server.js ]]; then
  (cd "$HERE/portkey" && npm ci --no-audit --no-fund --silent)
fi
echo "ready: nginx $(nginx -v 2>&1 | sed 's|.*/||'), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), node $(node -v)," \
     "portkey gateway $(node -p "require('$HERE/portkey/node_modules/@portkey-ai/gateway/package.json').version")"
