#!/usr/bin/env bash
# Installs what the tests need, builds fabuild and its tests, and runs the whole suite.
# Usage: scripts/test.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/start-docker.sh  # the container tests need an engine
# ccache (when present) makes the three builds below cheap on a box that ran them before.
launcher=$(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache || true)
export FABUILD_CMAKE_LAUNCHER=$launcher
# Hits across checkouts at other paths (CI clones afresh): paths under the checkout are made
# relative, and the working directory that -g records is left out of the key.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
cmake -S . -B build -G Ninja -DFABUILD_WERROR=ON $launcher
cmake --build build
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
# docs/reliability.md: the same tests (less the e2e builds) under ASan + UBSan, then each
# fuzz target for a short while.
scripts/sanitize.sh
scripts/fuzz.sh 25
