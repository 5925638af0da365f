#!/usr/bin/env bash
# End to end across the torch and CUDA axes (matrix/multi.yaml): the example package for torch
# 2.11 and 2.13 with CUDA 13.0, and torch 2.15 with CUDA 13.2, for cp312, from real torch wheels
# of pip's index and a CUDA 13.2 toolkit from PyPI when the host has none:
#   - the plan drops the three pairs that cannot exist, each with its reason, and says where
#     each toolkit comes from;
#   - three wheels, each verified, imported against its own torch and filed under its own
#     torch*/cu*/, the manifest naming its torch, nvcc and toolkit's origin;
#   - the object cache (a fresh one) gives no hit across torch versions or toolkits: each cell
#     compiles its 17 units itself;
#   - a second run rebuilds nothing.
# Needs python3.12 and pip's index (torch 2.13 and 2.15 with their CUDA libraries, ~3 GB each
# the first time; the environments are kept in fabuild's cache). FABUILD_SKIP_E2E=1 skips it.
set -euo pipefail
[ "${FABUILD_SKIP_E2E:-}" = 1 ] && { echo "skipped: FABUILD_SKIP_E2E=1"; exit 77; }
fabuild=${1:?usage: multi_version.sh FABUILD SOURCE_DIR}
src=${2:?}
work=$(mktemp -d /tmp/fabuild-multi.XXXXXX)
trap 'rm -rf "$work"' EXIT
house=$work/wheelhouse
fail() { echo "e2e: FAIL: $*"; exit 1; }

echo "== the plan"
"$fabuild" "$src/matrix/multi.yaml" --dry-run -o "$house" | tee "$work/plan.log" || fail "the dry run exited $?"
grep -q "3 cells to build, 3 dropped" "$work/plan.log" || fail "expected 3 cells and 3 dropped"
grep -q "torch 2.11 has no cu132 build" "$work/plan.log" || fail "no reason for torch 2.11 x cu132"
grep -q "pip's index has torch 2.13 as a cu130 build (PyPI's) and no cu132" "$work/plan.log" || fail "no reason for torch 2.13 x cu132"
grep -q "torch 2.15 has no cu130 build" "$work/plan.log" || fail "no reason for torch 2.15 x cu130"
grep -qE "^toolkit: +CUDA 13.2 \(auto\): (host|PyPI)" "$work/plan.log" || fail "the plan does not say where CUDA 13.2 comes from"

echo "== the build"
start=$(date +%s)
"$fabuild" "$src/matrix/multi.yaml" -o "$house" --cache-dir "$work/objects" | tee "$work/first.log" || fail "the build exited $?"
echo "build: $(( $(date +%s) - start ))s"
grep -q "3 ok" "$work/first.log" || fail "expected 3 ok"
for w in torch2.11/cu130/flash_example-0.1.0+cu130torch2.11cxx11abiTRUE \
         torch2.13/cu130/flash_example-0.1.0+cu130torch2.13cxx11abiTRUE \
         torch2.15/cu132/flash_example-0.1.0+cu132torch2.15cxx11abiTRUE; do
  wheel=$house/example0.1.0/$w-cp312-cp312-linux_x86_64.whl
  [ -f "$wheel" ] || fail "no $wheel"
  (cd "$(dirname "$wheel")" && sha256sum -c SHA256SUMS) || fail "SHA256SUMS beside $wheel"
done
for id in torch2.11-cu130 torch2.13-cu130 torch2.15-cu132; do
  grep -q "fabuild: imported" "$house/logs/example0.1.0-$id-cp312-linux_x86_64.log" || fail "$id was not imported"
done
host132=$([ -x /usr/local/cuda-13.2/bin/nvcc ] && echo host || echo pip)
python3 - "$house/manifest.json" "$host132" <<'PY' || fail "manifest.json"
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
want = {"torch2.11-cu130": ("2.11.", "13.0"), "torch2.13-cu130": ("2.13.", "13.0"), "torch2.15-cu132": ("2.15.", "13.2")}
assert len(cells) == 3, cells
for part, (torch, nvcc) in want.items():
    c = cells[f"example0.1.0-{part}-cp312-linux_x86_64"]
    v = c["versions"]
    assert v["torch"].startswith(torch), (part, v)
    assert v["nvcc"] == nvcc and v["nvcc_build"].startswith(nvcc + "."), (part, v)
    assert v["toolkit"] in ("host", "pip"), (part, v)
    # No hit across torch versions or toolkits: every unit compiled for this cell.
    oc = c["object_cache"]
    assert oc["hits"] == 0 and oc["misses"] == 17 and oc["errors"] == 0, (part, oc)
assert cells["example0.1.0-torch2.15-cu132-cp312-linux_x86_64"]["versions"]["toolkit"] == sys.argv[2], cells
print("manifest: torch", sorted(c["versions"]["torch"] for c in cells.values()),
      "toolkits", sorted((c["versions"]["nvcc_build"], c["versions"]["toolkit"]) for c in cells.values()))
PY

echo "== a second run rebuilds nothing"
"$fabuild" "$src/matrix/multi.yaml" -o "$house" --cache-dir "$work/objects" | tee "$work/second.log" || fail "the second run exited $?"
grep -q "3 up to date" "$work/second.log" || fail "the second run built something"
echo "e2e: 1 passed, 0 failed"
