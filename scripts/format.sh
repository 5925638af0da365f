#!/usr/bin/env bash
# Formats fabuild's C++ sources with clang-format (.clang-format at the root).
# Usage: scripts/format.sh          rewrites the files in place
#        scripts/format.sh --check  changes nothing; lists the files that differ and exits 1
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$clang_format" ]; then
  echo "format.sh: no clang-format on PATH; install it with scripts/install-deps.sh --tests" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cpp' '*.h' ':!:examples/*')
if [ "${1:-}" = --check ]; then
  bad=()
  for f in "${files[@]}"; do
    "$clang_format" --style=file "$f" | cmp -s - "$f" || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    printf 'not formatted: %s\n' "${bad[@]}" >&2
    echo "format.sh: ${#bad[@]} of ${#files[@]} files differ from .clang-format; run scripts/format.sh" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files follow .clang-format"
else
  "$clang_format" --style=file -i "${files[@]}"
fi
