#!/usr/bin/env bash
# Builds the libFuzzer targets (CMakePresets.json preset `asan`: clang, ASan + UBSan; the tree
# scripts/sanitize.sh builds, so after it this compiles nothing) and runs each for SECONDS. The committed seeds (fuzz/corpus/<target>/, which also keep every input that
# once found a bug, so each run replays them first) and tests/data/bad-matrices seed the run;
# what it learns stays in build-asan/corpus/<target>/ for the next run. A crash, a sanitizer
# report, a hang past 10 s or memory past 2 GiB stops the run with the input saved under
# build-asan/findings/<target>/ and a non-zero exit.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]     (docs/reliability.md has the long runs)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-25}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_matrix fuzz_wheel_name fuzz_dist_info fuzz_wheel_zip fuzz_pe_exports)

cmake --preset asan ${FABUILD_CMAKE_LAUNCHER:-} >/dev/null  # scripts/test.sh: ccache
cmake --build build-asan --target "${targets[@]}"

for t in "${targets[@]}"; do
  corpus=build-asan/corpus/$t
  findings=build-asan/findings/$t
  mkdir -p "$corpus" "$findings"
  seeds=(fuzz/corpus/"$t")
  extra=()
  if [ "$t" = fuzz_matrix ]; then
    seeds+=(tests/data/bad-matrices matrix)
    extra+=(-dict=fuzz/fuzz_matrix.dict)
  fi
  [ "$t" = fuzz_wheel_zip ] && extra+=(-max_len=65536)
  [ "$t" = fuzz_pe_exports ] && extra+=(-max_len=16384)
  echo "fuzz: $t for ${seconds}s"
  if ! ASAN_OPTIONS=detect_leaks=1 build-asan/fuzz/"$t" "$corpus" "${seeds[@]}" "${extra[@]}" \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$findings/" >build-asan/"$t".log 2>&1; then
    tail -n 60 build-asan/"$t".log
    echo "fuzz: $t FOUND A BUG; the input is in $findings/ (replay: build-asan/fuzz/$t $findings/<file>)" >&2
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' build-asan/"$t".log)
  echo "fuzz: $t: $runs inputs run, corpus $(ls "$corpus" | wc -l) files, no finding"
done
