#!/usr/bin/env bash
# Installs what the tests need, builds fabuild and its tests, and runs the whole suite; prints
# how long each phase took at the end, whatever the outcome.
# Usage: scripts/test.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

phases=()
phase() {  # phase NAME COMMAND...: runs it, and records its time for the table
  local name=$1 start=$SECONDS
  shift
  echo "== $name"
  local status=0
  "$@" || status=$?
  phases+=("$(printf '%-28s %5ds  %s' "$name" $((SECONDS - start)) "$([ $status = 0 ] && echo ok || echo "FAILED ($status)")")")
  return $status
}
report() {
  local status=$?
  echo
  echo "PHASE                        TIME  RESULT"
  printf '%s\n' "${phases[@]}"
  printf '%-28s %5ds  %s\n' total "$SECONDS" "$([ $status = 0 ] && echo ok || echo "FAILED ($status)")"
}
beside=()  # background jobs, each in a session of its own: ended with the script, whatever its outcome
trap 'report; for pid in "${beside[@]}"; do kill -- -"$pid" 2>/dev/null || true; done' EXIT

phase "dependencies" scripts/install-deps.sh --tests
export PATH="${FABUILD_TOOLS_DIR:-$HOME/.cache/fabuild-dev/tools}/bin:$PATH"  # uv, actionlint
phase "docker engine" scripts/start-docker.sh  # the container tests need an engine
# ccache (when present) makes the builds below cheap on a box that ran them before.
launcher=$(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache || true)
export FABUILD_CMAKE_LAUNCHER=$launcher
# Hits across checkouts at other paths (CI clones afresh): paths under the checkout are made
# relative, and the working directory that -g records is left out of the key.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
phase "actionlint" actionlint .github/workflows/*.yml
phase "format" scripts/format.sh --check  # .clang-format
# The release tree: fabuild, fabuild-cc and what the end-to-end and script tests run. The
# googletest binaries are built and run once, in the sanitizer tree below (FABUILD_UNIT_TESTS).
phase "build (release)" bash -c "cmake -S . -B build -G Ninja -DFABUILD_WERROR=ON -DFABUILD_UNIT_TESTS=OFF $launcher >/dev/null && cmake --build build"
# On a fresh box the release tests' first minutes are downloads (torch and the CUDA wheels of the
# example's environments), and their serial steps (pip, imports, verifying, docker) keep one core
# busy at most: the builds of the later phases run beside them on what they leave idle, one after
# another, into their trees and caches: the mingw libraries (scripts/mingw-deps.sh, Debian's
# sources cross-compiled and cached by content; nothing to do once cached), fabuild.exe and its
# Windows tests, then the sanitizer tree. The windows and sanitizer phases then find them built.
# Low priority needs both niceness and the session's: with sched_autogroup (Debian's default)
# each session gets a fair share whatever its processes' nice, so the new session lowers its own
# (/proc/self/autogroup); when the tests are done the session gets a normal share again.
beside_log=build/beside-builds.log
setsid bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null
  exec nice -n 19 bash -c "scripts/windows-test.sh --build-only && scripts/sanitize.sh --build-only"' \
  >"$beside_log" 2>&1 &
beside+=($!)
phase "tests (release)" ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
beside_builds() {
  local session=${beside[0]}
  echo 0 >"/proc/$session/autogroup" 2>/dev/null || true  # a normal share now: nothing else runs
  for pid in $(pgrep -s "$session" 2>/dev/null); do renice -n 0 -p "$pid" >/dev/null 2>&1 || true; done
  wait "$session" || { tail -n 40 "$beside_log"; return 1; }
  grep "mingw build" "$beside_log" || true
}
phase "builds beside the tests (waited)" beside_builds
phase "windows (wine)" scripts/windows-test.sh
# docs/reliability.md: the unit tests and the script tests (less the e2e builds) under ASan +
# UBSan, then each fuzz target for a short while.
phase "build + tests (sanitizers)" scripts/sanitize.sh
phase "fuzzing" scripts/fuzz.sh 25
