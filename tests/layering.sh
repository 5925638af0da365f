#!/usr/bin/env bash
# Each layer may include only its own headers and those of the layers below it
# (docs/architecture.md). Prints every wrong-way #include and fails if there is one.
set -euo pipefail
src=${1:?usage: layering.sh SRC_DIR}

declare -A allowed=(
  [util]="util"
  [objcache]="objcache util"
  [remote]="remote objcache util"
  [matrix]="matrix util"
  [wheel]="wheel matrix util"
  [source]="source matrix util"
  [provision]="provision matrix util"
  [engine]="engine provision source wheel objcache matrix util"
  [costs]="costs engine provision source wheel objcache matrix util"
  [publish]="publish wheel matrix util"
  [app]="app costs engine publish objcache remote provision source wheel matrix util"
  [cli]="cli app costs engine publish objcache remote provision source wheel matrix util"
)

bad=0
for layer in "${!allowed[@]}"; do
  [ -d "$src/$layer" ] || continue
  while IFS= read -r line; do
    file=${line%%:*}
    target=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<<"$line")
    if ! grep -qw "$target" <<<"${allowed[$layer]}"; then
      echo "layering: $file includes $target/, but $layer may only use: ${allowed[$layer]}"
      bad=1
    fi
  done < <(grep -HnE '^#include "[a-z_]+/' "$src/$layer"/*.{h,cpp} 2>/dev/null || true)
done
for dir in "$src"/*/; do
  name=$(basename "$dir")
  [ -n "${allowed[$name]+x}" ] || { echo "layering: src/$name is not a known layer"; bad=1; }
done
# The wrapper protocol's variables are named in objcache/protocol.h and nowhere else.
while IFS= read -r line; do
  echo "layering: ${line%%:*} names a FABUILD_CC_ variable; use objcache/protocol.h's wrapper_env"
  bad=1
done < <(grep -rn 'FABUILD_CC_' "$src" | grep -v "^$src/objcache/protocol.h:" || true)
[ $bad -eq 0 ] && echo "layering: ok (${#allowed[@]} layers)"
exit $bad
