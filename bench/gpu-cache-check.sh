#!/usr/bin/env bash
# The object cache on a GPU machine with a preinstalled torch (docs/performance.md).
#
# Builds one cell twice with fabuild, through two Python environments at different paths and
# into two wheelhouses (so that every staging path differs too), with one object cache: the
# first build compiles everything; the second — a virtualenv at another path with its own copy
# of torch (so torch's headers sit at another path, as a second Python tag's would), standing
# in for a second Python tag — should take every kernel from the cache and compile only the
# Python-specific unit. Then the wheel built from cached kernels is checked on the GPU.
#
# Usage: bench/gpu-cache-check.sh [--flash-attn SDIST] [FABUILD [PYTHON [CUDA_HOME]]]
#   --flash-attn SDIST  build real FlashAttention 2 (flash_attn-X.Y.Z.tar.gz, sm_90) instead of
#                       the bundled example; checked with scripts/gpu-check-flash-attn.py
#   FABUILD    default: build/fabuild of this checkout (fabuild carries its compiler wrapper)
#   PYTHON     an interpreter with torch 2.11 for CUDA 13.0 (default /opt/torch/.venv/bin/python3)
#   CUDA_HOME  the CUDA 13.0 toolkit (default /usr/local/cuda)
# Needs no network. KEEP=1 keeps the scratch directory (wheelhouses, logs, cache); FABUILD_ARGS
# are added to both builds' command lines (e.g. "--cores 16 --memory-gb 100").
# Exit 0 when the second build took every kernel from the cache and the GPU check passed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
sdist=""
if [ "${1:-}" = --flash-attn ]; then
  sdist=$(realpath "${2:?--flash-attn needs the sdist}")
  shift 2
fi
fabuild=$(realpath "${1:-$repo/build/fabuild}")
python=${2:-/opt/torch/.venv/bin/python3}
cuda=${3:-/usr/local/cuda}
work=$(mktemp -d /tmp/fabuild-gpu-cache.XXXXXX)
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT
fail() { echo "gpu-cache-check: FAIL: $*"; exit 1; }
[ -x "$fabuild" ] || fail "no fabuild at $fabuild (build it, or give its path)"
[ -x "$python" ] || fail "no Python at $python"
tag=$("$python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
echo "gpu-cache-check: $($fabuild --version), $tag from $python, CUDA at $cuda, $(nproc) cores, scratch $work"
"$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpu",
  torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")'

if [ -n "$sdist" ]; then
  version=$(basename "$sdist" | sed -E 's/^flash_attn-(.*)\.tar\.gz$/\1/')
  matrix=$work/flash-attn.yaml
  cat > "$matrix" <<EOF
package: flash-attn
versions: ["$version"]
torch: ["2.11"]
cuda: ["13.0"]
python: [$tag]
archs: "90"
provision: host
source: {sdist: $sdist, sha256: $(sha256sum "$sdist" | cut -d' ' -f1)}
EOF
  kernels=$(tar tzf "$sdist" | grep -c '^flash_attn-[^/]*/csrc/flash_attn/src/.*\.cu$')
else
  matrix=$repo/matrix/example.yaml
  kernels=$(ls "$repo"/examples/flash_example/csrc/flash_example/src/*.cu | wc -l)
fi
echo "gpu-cache-check: $(basename "$matrix"), $kernels kernel units"

# The second environment: a virtualenv at another path with a copy of the first one's torch,
# which sees the rest of the first one's packages through a .pth file.
second_venv=$work/second-venv
"$python" -m venv --without-pip "$second_venv"
second=$second_venv/bin/python3
site_a=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
site_b=$("$second" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cp -a "$site_a"/torch "$site_a"/torch-*.dist-info "$site_b/"
echo "$site_a" > "$site_b/first-environment.pth"
"$second" -c 'import torch, sys; assert torch.__file__.startswith(sys.argv[1]), torch.__file__' "$site_b" ||
  fail "the second virtualenv does not import its own copy of torch"

# build NAME PYTHON: fabuild in its own directory (for toolchains/host.yaml), its own wheelhouse.
build() {
  local name=$1 py=$2
  mkdir -p "$work/$name/toolchains"
  printf 'cuda: {"13.0": %s}\npython: {%s: %s}\n' "$cuda" "$tag" "$py" > "$work/$name/toolchains/host.yaml"
  local start=$SECONDS
  (cd "$work/$name" && "$fabuild" "$matrix" --python "$tag" -o "$work/$name/house" \
     --cache-dir "$work/objects" ${FABUILD_ARGS:-}) > "$work/$name.log" 2>&1 || { tail -40 "$work/$name.log"; fail "the $name build failed"; }
  echo "== $name build: $((SECONDS - start)) s, Python $py"
  sed -n '/^CELL /,/compiles from the cache/p' "$work/$name.log"
  grep -o -m1 -- "-I[^ ]*/torch/include " "$work/$name/house/logs/"*.log | sed 's/^/   torch headers: /' || true
  grep -h "^fabuild: object cache: " "$work/$name/house/logs/"*.log | grep -v "no earlier compile of this source" | cut -c1-400 | head -n 20 | sed 's/^/   /' || true
}
build first "$python"
build second "$second"

read -r hits misses < <("$python" - "$work/second/house/manifest.json" <<'PY'
import json, sys
(entry,) = json.load(open(sys.argv[1]))["cells"].values()
oc = entry["object_cache"]
print(oc["hits"], oc["misses"] + oc["uncacheable"] + oc["errors"])
PY
)
echo "second build: $hits of $((hits + misses)) compiles from the cache ($(( (200 * hits + hits + misses) / (2 * (hits + misses)) )) %)"
[ "$hits" -ge "$kernels" ] || fail "expected the $kernels kernels from the cache"

if [ -n "$sdist" ]; then
  "$python" "$repo/scripts/gpu-check-flash-attn.py" "$work/second/house" ||
    fail "the wheel built from cached kernels failed the GPU check"
else
  wheel=$(ls "$work"/second/house/example0.1.0/torch2.11/cu130/*.whl)
  "$python" -m zipfile -e "$wheel" "$work/installed"  # a wheel is a zip to put on sys.path
  PYTHONPATH="$work/installed" "$python" "$repo/examples/flash_example/tests/test_attention.py" ||
    fail "the wheel built from cached kernels failed the GPU test"
fi
echo "gpu-cache-check: ok"
