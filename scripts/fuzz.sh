#!/usr/bin/env bash
# Builds the libFuzzer targets (CMakePresets.json preset `asan`: clang, ASan + UBSan; the tree
# scripts/sanitize.sh builds, so after it this compiles nothing) and runs each for SECONDS, as
# many at once as there are cores. The committed seeds (fuzz/corpus/<target>/, which also keep every input that
# once found a bug, so each run replays them first) and tests/data/bad-matrices seed the run;
# what it learns stays in build-asan/corpus/<target>/ for the next run. A crash, a sanitizer
# report, a hang past 10 s or memory past 2 GiB ends that target with the input saved under
# build-asan/findings/<target>/, and the script with a non-zero exit once the others are done.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]     (docs/reliability.md has the long runs)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-25}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_matrix fuzz_wheel_name fuzz_dist_info fuzz_wheel_zip fuzz_pe_exports)

cmake --preset asan ${FABUILD_CMAKE_LAUNCHER:-} >/dev/null  # scripts/test.sh: ccache
cmake --build build-asan --target "${targets[@]}"

# One target, SECONDS long; its output in build-asan/<target>.log. Non-zero when it found a bug.
fuzz_one() {
  local t=$1 corpus=build-asan/corpus/$1 findings=build-asan/findings/$1
  mkdir -p "$corpus" "$findings"
  local seeds=(fuzz/corpus/"$t") extra=()
  if [ "$t" = fuzz_matrix ]; then
    seeds+=(tests/data/bad-matrices matrix)
    extra+=(-dict=fuzz/fuzz_matrix.dict)
  fi
  [ "$t" = fuzz_wheel_zip ] && extra+=(-max_len=65536)
  [ "$t" = fuzz_pe_exports ] && extra+=(-max_len=16384)
  ASAN_OPTIONS=detect_leaks=1 build-asan/fuzz/"$t" "$corpus" "${seeds[@]}" "${extra[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/" >build-asan/"$t".log 2>&1
}

# As many targets at once as there are cores (each is one process on one core, so each still
# gets its SECONDS of a core); then each one's result, in order.
jobs=$(nproc)
status=0
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  batch=("${targets[@]:i:jobs}")
  pids=()
  for t in "${batch[@]}"; do
    echo "fuzz: $t for ${seconds}s"
    fuzz_one "$t" &
    pids+=($!)
  done
  for k in "${!batch[@]}"; do
    t=${batch[$k]}
    if ! wait "${pids[$k]}"; then
      tail -n 60 build-asan/"$t".log
      echo "fuzz: $t FOUND A BUG; the input is in build-asan/findings/$t/ (replay: build-asan/fuzz/$t build-asan/findings/$t/<file>)" >&2
      status=1
      continue
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' build-asan/"$t".log)
    echo "fuzz: $t: $runs inputs run, corpus $(ls "build-asan/corpus/$t" | wc -l) files, no finding"
  done
done
exit "$status"
