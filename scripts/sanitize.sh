#!/usr/bin/env bash
# The unit and integration tests under AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer
# included): CMakePresets.json preset `asan`, built in build-asan/. The multi-minute end-to-end
# builds (label e2e) are left out. Every process the tests start from the instrumented fabuild
# writes its reports under build-asan/sanitizer-reports/ (ASAN_OPTIONS/UBSAN_OPTIONS log_path), so a
# report from a process whose exit status no test looks at still fails the run.
# Usage: scripts/sanitize.sh [extra ctest arguments]
#        scripts/sanitize.sh --build-only   the tree only (what scripts/test.sh builds beside the
#                                           release tests)
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=false
if [ "${1:-}" = --build-only ]; then
  build_only=true
  shift
fi

cmake --preset asan ${FABUILD_CMAKE_LAUNCHER:-} >/dev/null  # scripts/test.sh: ccache
cmake --build --preset asan
$build_only && exit 0
reports=build-asan/sanitizer-reports
rm -rf "$reports"
mkdir -p "$reports"
status=0
ctest --preset asan -j "$(nproc)" "$@" || status=$?
if [ -n "$(ls -A "$reports")" ]; then
  for f in "$reports"/*; do
    echo "=== $f"
    head -n 60 "$f"
  done
  echo "sanitize: $(ls "$reports" | wc -l) sanitizer report(s) above" >&2
  status=1
fi
exit "$status"
