#!/usr/bin/env bash
# The tree's C++ in the format of .clang-format (clang-format 14).
#   scripts/format.sh          formats every tracked .cpp/.hpp in place
#   scripts/format.sh --check  lists the files that differ; exit 1 if any (CI)
# Generated files are left as generated (pruning/tokenizer/unicode_tables.hpp).
set -euo pipefail
cd "$(dirname "$0")/.."
FORMAT=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
[[ -n $FORMAT ]] || { echo "format.sh: no clang-format: run scripts/setup.sh --sanitize" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' | grep -v '^pruning/tokenizer/unicode_tables.hpp$')
if [[ "${1:-}" == --check ]]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$FORMAT" "$f" | cmp -s - "$f"; then echo "not formatted: $f (scripts/format.sh)"; bad=1; fi
  done
  exit $bad
fi
"$FORMAT" -i "${files[@]}"
