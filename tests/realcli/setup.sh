#!/usr/bin/env bash
# Installs the agent CLIs the realcli suite drives (tests/realcli/realcli.test.mjs)
# at the versions pinned in tests/realcli/package-lock.json, into
# tests/realcli/node_modules (not committed). Does nothing when they are
# already installed as pinned. ctest runs it first (the realcli_install test).
set -euo pipefail
cd "$(dirname "$0")"
if [[ -d node_modules ]] && npm ls --silent >/dev/null 2>&1; then exit 0; fi
# Bounded: a stalled registry must not hang the suite.
timeout 900 npm ci --no-audit --no-fund --silent
test -x node_modules/.bin/claude && test -x node_modules/.bin/codex && test -x node_modules/.bin/gemini
