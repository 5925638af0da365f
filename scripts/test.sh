#!/usr/bin/env bash
# Installs what the tests need, builds fabuild and its tests, and runs the whole suite.
# Usage: scripts/test.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -G Ninja -DFABUILD_WERROR=ON
cmake --build build
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
