#!/usr/bin/env bash
# Every package scripts/install-deps.sh names exists in this machine's archive (apt-cache
# policy has a candidate for it), so that the script cannot fail on a name the distribution
# does not have. Ubuntu 24.04's names were checked against its published index (docs/ci.md).
# Usage: deps_test.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: deps_test.sh SOURCE_DIR}
command -v apt-cache >/dev/null || { echo "skipped: no apt-cache here"; exit 77; }
missing=()
count=0
while read -r name; do
  count=$((count + 1))
  candidate=$(apt-cache policy "$name" 2>/dev/null | sed -n 's/^ *Candidate: //p')
  if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then missing+=("$name"); fi
done < <("$src/scripts/install-deps.sh" --list)
[ "$count" -gt 20 ] || { echo "deps: FAIL: only $count names listed"; exit 1; }
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: FAIL: no candidate in this machine's archive for: ${missing[*]}"
  exit 1
fi
echo "deps: $count packages, each with a candidate in $(. /etc/os-release && echo "$PRETTY_NAME")'s archive"
