#!/usr/bin/env bash
# Python environments made by uv against venv + pip, side by side in one run: the six that a
# matrix of three Pythons (cp311, cp312, cp313) x two torch series (2.11, 2.13) needs, made by
# `fabuild --prepare` (environments only, no build) with `python_env: pip`, then with
# `python_env: uv`. Each run starts cold: its own fabuild cache (the environments) and its own
# empty download cache (PIP_CACHE_DIR, UV_CACHE_DIR), so both download everything; the disk
# each takes is its environments plus that cache, hard links counted once (du).
# Prints time and disk for each, and the ratios uv/pip.
# Needs: uv on PATH, python3.11-3.13, pip's index, ~35 GB free under TMPDIR.
# Usage: bench/python_envs.sh FABUILD
set -euo pipefail
fabuild=${1:?usage: bench/python_envs.sh FABUILD}
src=$(cd "$(dirname "$0")/.." && pwd)
command -v uv >/dev/null || { echo "python_envs: uv is not on PATH (pip install uv)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fabuild-bench-envs.XXXXXX")
trap 'rm -rf "$work"' EXIT

run() {
  local tool=$1 root=$work/$1
  mkdir -p "$root"
  cat > "$root/m.yaml" <<EOF
package: flash-example
versions: ["0.1.0"]
torch: ["2.11", "2.13"]
cuda: ["13.0"]
python: [cp311, cp312, cp313]
archs: "90"
provision: host
python_env: $tool
source: {path: $src/examples/flash_example}
EOF
  local start end
  start=$(date +%s.%N)
  FABUILD_CACHE_DIR=$root/cache PIP_CACHE_DIR=$root/pip-cache UV_CACHE_DIR=$root/uv-cache \
    "$fabuild" "$root/m.yaml" --prepare -o "$root/house" > "$root/out.log" 2>&1 || { cat "$root/out.log"; exit 1; }
  end=$(date +%s.%N)
  local seconds bytes
  seconds=$(python3 -c "print(f'{$end - $start:.0f}')")
  local dirs=()
  for d in "$root/cache" "$root/pip-cache" "$root/uv-cache"; do [ -d "$d" ] && dirs+=("$d"); done
  bytes=$(du -scb "${dirs[@]}" | tail -n 1 | cut -f1)
  echo "$tool $seconds $bytes"
  grep -E "ok cp3|Python environments" "$root/out.log" | sed "s/^/  $tool: /"
  # The next run measures its own disk: this one's environments go.
  rm -rf "$root/cache" "$root/pip-cache" "$root/uv-cache"
}

run pip > "$work/pip.txt"
run uv > "$work/uv.txt"
cat "$work/pip.txt" "$work/uv.txt"
read -r _ pip_s pip_b < "$work/pip.txt"
read -r _ uv_s uv_b < "$work/uv.txt"
python3 - "$pip_s" "$pip_b" "$uv_s" "$uv_b" <<'PY'
import sys
ps, pb, us, ub = map(float, sys.argv[1:])
print(f"6 environments (cp311-cp313 x torch 2.11, 2.13), cold caches:")
print(f"  pip: {ps:.0f} s, {pb / 1e9:.1f} GB")
print(f"  uv:  {us:.0f} s, {ub / 1e9:.1f} GB")
print(f"  uv/pip: time {us / ps:.2f}, disk {ub / pb:.2f}")
PY
