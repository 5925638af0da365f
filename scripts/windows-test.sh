#!/usr/bin/env bash
# fabuild on Windows, built and tested on this Linux box: cross-compiles fabuild.exe and the
# Windows tests with mingw-w64 (against scripts/mingw-deps.sh's libraries) and runs them under
# Wine: util_tests.exe, engine_tests.exe and objcache_tests.exe (the Win32 supervisor, Job
# Objects, Ctrl-C, locks, files; the object cache's reading of Windows command lines), then
# tests/windows/e2e_wine.py, which drives the real fabuild.exe through command: cells, and
# tests/windows/objcache_wine.py, fabuild-cc.exe in front of stand-ins for nvcc.exe and cl.exe.
# Prints how long each part took. A phase of scripts/test.sh ("windows (wine)").
#
# Usage: scripts/windows-test.sh [gtest filter]
#        scripts/windows-test.sh --build-only   the libraries and the cross-build, no Wine (what
#                                               scripts/test.sh runs beside the release tests)
#   FABUILD_MINGW_BUILD   the build tree (build-mingw)
#   FABUILD_WINEPREFIX    Wine's prefix, made once and kept (~/.cache/fabuild-dev/wineprefix)
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=false
if [ "${1:-}" = --build-only ]; then
  build_only=true
  shift
fi

export WINEPREFIX=${FABUILD_WINEPREFIX:-$HOME/.cache/fabuild-dev/wineprefix} WINEARCH=win64 WINEDEBUG=-all
# Wine's server directory (wine-XXXXXX/server-*) and the tests' scratch go here, removed at the end.
TMPDIR=$(mktemp -d -t fabuild-windows-test.XXXXXX)
export TMPDIR
times=()
timed() {  # timed NAME COMMAND...
  local name=$1 start=$SECONDS
  shift
  "$@"
  times+=("$(printf '  %-20s %4ds' "$name" $((SECONDS - start)))")
}
finish() {
  wineserver --kill 2>/dev/null || true  # nothing of Wine's outlives the run
  rm -rf "$TMPDIR"
  printf 'windows-test: times\n'
  printf '%s\n' "${times[@]}"
}
trap finish EXIT
quiet() { "$@" </dev/null >/dev/null 2>&1; }

deps() { prefix=$(scripts/mingw-deps.sh); }  # its progress on stderr, as it goes
timed "mingw deps" deps

build=${FABUILD_MINGW_BUILD:-build-mingw}
launcher=$(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache || true)
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
# -Og: these binaries are for the tests under Wine (a Windows user's fabuild.exe is the MSVC
# preset's), and at -Og the cross-build takes 198 s where -O2 took 258 s (2 cores, nothing
# cached). (At -O3, GCC 12 warns wrongly, -Wrestrict, about string concatenation.)
compile() {
  # The libraries through a link of the build tree's own: a new prefix (another key) keeps every
  # path the compiler sees, so ccache still hits for what did not change.
  mkdir -p "$build"
  ln -sfn "$prefix" "$build/mingw-deps"
  # A tree configured against another prefix keeps that prefix's library paths in its cache.
  grep -qs "^LibArchive_INCLUDE_DIR:PATH=$PWD/$build/mingw-deps/include\$" "$build/CMakeCache.txt" ||
    rm -f "$build/CMakeCache.txt"
  cmake --no-warn-unused-cli -S . -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64.cmake \
    -DFABUILD_MINGW_PREFIX="$PWD/$build/mingw-deps" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-Og -DNDEBUG" -DFABUILD_WERROR=ON $launcher >/dev/null
  nice -n 10 ninja -C "$build" fabuild util_tests engine_tests objcache_tests fabuild_test_helper fabuild-cc \
    fabuild_nvcc_standin
}
timed "mingw build" compile
$build_only && exit 0

# A prefix of its own, made once: `wineboot --init` takes a while, a kept prefix starts at once.
prepare_wine() {
  wineserver --kill 2>/dev/null || true  # a server left by an earlier run, in whatever state
  if [ ! -f "$WINEPREFIX/.fabuild-ready" ]; then
    rm -rf "$WINEPREFIX"
    mkdir -p "$(dirname "$WINEPREFIX")"
    quiet wineboot --init
    # A crash is the test's to see (its exit code), not a debugger's to catch; and Windows 10,
    # which fabuild's build asks for (_WIN32_WINNT), rather than Wine's default Windows 7.
    quiet wine reg add 'HKLM\Software\Microsoft\Windows NT\CurrentVersion\AeDebug' /v Auto /t REG_SZ /d 0 /f
    quiet wine reg delete 'HKLM\Software\Microsoft\Windows NT\CurrentVersion\AeDebug' /v Debugger /f || true
    quiet wine reg add 'HKCU\Software\Wine' /v Version /t REG_SZ /d win10 /f
    wineserver --wait
    touch "$WINEPREFIX/.fabuild-ready"
  fi
  # One server for every program below, instead of one each; Wine's services start now, with
  # nowhere to write (they inherit the first program's output and outlive it).
  wineserver --persistent=120
  quiet wine cmd /c exit
}
timed "wine prefix" prepare_wine

filter=${1:-*}
unit() {
  wine "$build/tests/util_tests.exe" --gtest_filter="$filter" --gtest_brief=1
  wine "$build/tests/engine_tests.exe" --gtest_filter="$filter" --gtest_brief=1
  wine "$build/tests/objcache_tests.exe" --gtest_filter="$filter" --gtest_brief=1
}
timed "unit tests (wine)" unit
e2e() { python3 tests/windows/e2e_wine.py "$build/fabuild.exe" "$build/tests/fabuild_test_helper.exe"; }
timed "fabuild.exe (wine)" e2e
objcache() { python3 tests/windows/objcache_wine.py "$build/fabuild-cc.exe" "$build/tests/fabuild_nvcc_standin.exe"; }
timed "object cache (wine)" objcache
