#!/usr/bin/env bash
# FlashAttention 3's minimal build (profile minimal: four kernel units) through fabuild against
# the raw `setup.py bdist_wheel` it wraps, on a GPU machine with a preinstalled torch
# (docs/performance.md). First one fabuild build, checked on the GPU with
# scripts/gpu-check-flash-attn3.py, and a --force rebuild on the warm object cache; then RUNS
# rounds, interleaved, of the raw build (a fresh copy of the tree, the cell's environment, the
# MAX_JOBS/NVCC_THREADS fabuild granted) and fabuild's cell with --force --no-cache (everything
# compiled again). Prints each time and the ratio of the medians last.
#
# Usage: bench/fa3_overhead.sh FABUILD SOURCE [RUNS [PYTHON [CUDA_HOME]]]
#   SOURCE     a FlashAttention checkout with csrc/cutlass (hopper/setup.py inside)
#   RUNS       rounds of raw + fabuild (default 3)
#   PYTHON     an interpreter with torch for the toolkit (default /opt/torch/.venv/bin/python3)
# KEEP=1 keeps the scratch directory. Exit 0 when the wheel passed the GPU check and fabuild's
# median is within 2 % of raw's.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: fa3_overhead.sh FABUILD SOURCE [RUNS [PYTHON [CUDA_HOME]]]"
fabuild=$(realpath "${1:?$usage}")
source_dir=$(realpath "${2:?$usage}")
runs=${3:-3}
python=${4:-/opt/torch/.venv/bin/python3}
cuda=${5:-/usr/local/cuda}
work=$(mktemp -d /tmp/fabuild-fa3.XXXXXX)
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT
say() { echo "fa3-overhead: $*"; }
tag=$("$python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
mkdir -p "$work/toolchains"
printf 'cuda: {"13.0": %s}\npython: {%s: %s}\n' "$cuda" "$tag" "$python" > "$work/toolchains/host.yaml"
printf '%s\n' "package: flash-attn-3" 'versions: ["3.0.0"]' 'torch: ["2.11"]' 'cuda: ["13.0"]' "python: [$tag]" \
  "profile: [minimal]" "provision: host" "source: {path: $source_dir}" > "$work/m.yaml"
say "$("$fabuild" --version), $tag from $python, $(nproc) cores, scratch $work"
"$fabuild" "$work/m.yaml" --dry-run -v | sed -n '1,40p'

# seconds COMMAND...: runs it quietly into $work/last.log and prints its wall time (0.01 s).
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" > "$work/last.log" 2>&1 || { tail -40 "$work/last.log" >&2; return 1; }
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}'
}
# steps LOG: the cell's build step and the sum of its other steps, from its "step X took" lines.
steps() {
  awk '/fabuild: step .* took/ {t = $(NF-1); if ($3 == "build") b += t; else o += t}
       END {printf "build step %.2f s, other steps %.2f s", b, o}' "$1"
}
first=$(seconds "$fabuild" "$work/m.yaml" -o "$work/wh")
say "fabuild, first build: ${first}s"
cp "$work/last.log" "$work/first.log"
units=$(grep -ho '^\[[0-9]*/[0-9]*\]' "$work"/wh/logs/*.log | tail -1 || true)
say "ninja's last step in the first build: $units (the units it compiled)"
"$python" "$repo/scripts/gpu-check-flash-attn3.py" "$work/wh"
cached=$(seconds "$fabuild" "$work/m.yaml" -o "$work/wh" --force)
say "fabuild, --force on the warm object cache: ${cached}s"

# The raw build: the cell's own environment, as the plan gives it, and the jobs fabuild granted.
jobs=$(grep -ho 'MAX_JOBS=[0-9]* NVCC_THREADS=[0-9]*' "$work/first.log" | head -1)
say "fabuild granted $jobs"
mapfile -t cell_env < <("$fabuild" "$work/m.yaml" --list --format json |
  "$python" -c 'import json, sys; [print(f"{k}={v}") for k, v in json.load(sys.stdin)[0]["env"].items()]')
raw_build() {
  rm -rf "$work/raw" "$work/raw-dist" && cp -r "$source_dir" "$work/raw"
  # shellcheck disable=SC2086
  (cd "$work/raw/hopper" && env "${cell_env[@]}" $jobs CUDA_HOME="$cuda" PATH="$cuda/bin:$PATH" \
     "$python" setup.py bdist_wheel --dist-dir "$work/raw-dist")
}
raw=() fab=() ratios=()
for i in $(seq "$runs"); do
  r=$(seconds raw_build)
  raw+=("$r")
  f=$(seconds "$fabuild" "$work/m.yaml" -o "$work/wh" --force --no-cache)
  fab+=("$f")
  ratios+=("$(awk -v f="$f" -v r="$r" 'BEGIN {printf "%.3f", f / r}')")
  say "round $i: raw ${r}s, fabuild --no-cache ${f}s, ratio ${ratios[-1]} ($(steps "$work"/wh/logs/fa3*.log))"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
mr=$(median "${raw[@]}")
mf=$(median "${fab[@]}")
ratio=$(awk -v f="$mf" -v r="$mr" 'BEGIN {printf "%.3f", f / r}')
say "raw ${raw[*]} s; fabuild ${fab[*]} s; medians ${mr}s and ${mf}s; each round's ratio ${ratios[*]} (median $(median "${ratios[@]}"))"
grep -h "fabuild: step import" "$work"/wh/logs/fa3*.log | sed 's/^/fa3-overhead: last round: /'
say "RATIO fabuild/raw = $ratio (target <= 1.02); first build ${first}s, --force on a warm cache ${cached}s"
awk -v x="$ratio" 'BEGIN {exit !(x <= 1.02)}'
