#!/usr/bin/env bash
# The survival benchmark (scripts/bench/survival.mjs): the replay trajectories
# as agents under a tokens-per-minute quota, direct to the quota-enforcing fake
# upstream and through tokendiet. Builds tokendiet first unless TOKENDIET_BIN is
# set; arguments go to survival.mjs (--speed, --tpm, --modes, --json, ...).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ -z ${TOKENDIET_BIN:-} ]]; then
  scripts/build.sh --target tokendiet >&2
  export TOKENDIET_BIN="$PWD/build/cli/tokendiet"
fi
exec node scripts/bench/survival.mjs "$@"
