#!/usr/bin/env bash
# Fills a directory with the wheels a cp311 cell's Python environment needs (torch 2.11 and its
# CUDA libraries, the build tools), through pip's own configured index, so that container cells
# can make their environment with `--network none` (torch_index: DIR). Kept between runs.
# Usage: stage-wheels.sh DIR
set -euo pipefail
dir=${1:?usage: stage-wheels.sh DIR}
mkdir -p "$dir"
if ls "$dir"/torch-2.11.*-cp311-*.whl >/dev/null 2>&1 && [ -f "$dir/.complete" ]; then
  exit 0
fi
python=$(command -v python3.11 || true)
[ -n "$python" ] || { echo "stage-wheels: python3.11 is needed to download cp311 wheels" >&2; exit 1; }
"$python" -m pip download --quiet --disable-pip-version-check --only-binary :all: -d "$dir" \
  'torch==2.11.*' setuptools wheel ninja packaging psutil
touch "$dir/.complete"
chmod -R a+rX "$dir"
