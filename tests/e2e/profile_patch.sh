#!/usr/bin/env bash
# End to end, with real nvcc, torch and pip: the example package built with a kernel profile
# (minimal: FLASHATTENTION_DISABLE_CAUSAL through NVCC_APPEND_FLAGS and CPPFLAGS) and a source
# patch, then its library's C++ entry point checked (docs/packages.md, docs/cpp-consumers.md):
#   - the plan shows the profile's switches and the patch; the cell id, label and directory
#     carry the profile;
#   - the wheel holds the patched file; the manifest records the patch and the exports;
#   - the built module refuses causal attention with the profile's message, from Python and
#     from a C++ program (examples/cpp_consumer, built with CMake) that links the library;
#   - a re-run rebuilds nothing; other patches build it again;
#   - a patch that does not apply fails its cell, names the patch, and files nothing.
# Needs what tests/e2e/example_build.sh needs. FABUILD_SKIP_E2E=1 skips it (exit 77).
set -euo pipefail
[ "${FABUILD_SKIP_E2E:-}" = 1 ] && { echo "skipped: FABUILD_SKIP_E2E=1"; exit 77; }
fabuild=${1:?usage: profile_patch.sh FABUILD SOURCE_DIR}
src=${2:?}
work=$(mktemp -d /tmp/fabuild-profile.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "e2e: FAIL: $*"; exit 1; }
cd "$work"
cp "$src"/tests/data/patches/*.patch .
cell=example0.1.0-torch2.11-cu130-cp312-linux_x86_64-minimal
dir=house/example0.1.0/torch2.11/cu130/minimal
wheel=$dir/flash_example-0.1.0+cu130torch2.11cxx11abiTRUE.minimal-cp312-cp312-linux_x86_64.whl

# matrix FILE PATCH: the example for cp312 with the minimal profile and one patch.
matrix() {
  cat > "$1" <<EOF
package: flash-example
versions: ["0.1.0"]
torch: ["2.11"]
cuda: ["13.0"]
python: [cp312]
archs: "90"
provision: host
profile: minimal
source: {path: $src/examples/flash_example}
patches: {"0.1.0": [$2]}
build: {nvcc_threads: 1}
EOF
}
matrix m.yaml flash-example-0.1.0-patched-note.patch

echo "== the plan"
"$fabuild" m.yaml -o house --dry-run -v | tee plan.txt
grep -q "^$cell " plan.txt || fail "no cell $cell in the plan"
grep -q "profile minimal: off CAUSAL" plan.txt || fail "the plan does not show the profile's switch"
grep -q "patch   flash-example-0.1.0-patched-note.patch (sha256 " plan.txt || fail "the plan does not show the patch"
grep -q "NVCC_APPEND_FLAGS=-DFLASHATTENTION_DISABLE_CAUSAL" plan.txt || fail "no NVCC_APPEND_FLAGS in the plan"

echo "== the build"
"$fabuild" m.yaml -o house --cache-dir "$work/objects" | tee build.log || fail "the build exited $?"
grep -q "1 ok" build.log || fail "the cell did not build"
[ -f "$wheel" ] || fail "no $wheel"
init_py=$(python3 -c 'import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read("flash_example/__init__.py").decode())' "$wheel")
grep -q 'PATCHED_BY = "flash-example-0.1.0-patched-note.patch"' <<<"$init_py" ||
  fail "the wheel does not hold the patched __init__.py"
python3 - house/manifest.json "$cell" "$(sha256sum flash-example-0.1.0-patched-note.patch | cut -d' ' -f1)" <<'PY' || fail "manifest"
import json, sys
entry = json.load(open(sys.argv[1]))["cells"][sys.argv[2]]
assert entry["patches"] == {"flash-example-0.1.0-patched-note.patch": sys.argv[3]}, entry.get("patches")
sig = entry["exports"]["flash_example::mha_fwd"]
assert sig.startswith("flash_example::mha_fwd(at::Tensor const&, at::Tensor const&, at::Tensor const&, bool, double)"), sig
print("manifest: patch", sys.argv[3][:16], "exports", sig)
PY

echo "== the profile took effect: causal attention is refused (no GPU is needed to see it)"
py=$(sed -n 's/^fabuild: step check: \[\([^]]*\)\].*/\1/p' "house/logs/$cell.log" | head -1)
[ -x "$py" ] || fail "cannot find the cell's Python in its log"
mkdir unpacked && (cd unpacked && python3 -m zipfile -e "../$wheel" .)
PYTHONPATH=unpacked "$py" - <<'PY' || fail "the Python check of the profile"
import torch, flash_example_cuda
q = torch.zeros(1, 8, 2, 32, dtype=torch.float16)
try:
    flash_example_cuda.fwd(q, q, q, True, 0.125)
    raise SystemExit("causal attention was not refused")
except RuntimeError as e:
    assert "does not support causal attention" in str(e), e
    print("python: refused:", str(e).splitlines()[0])
PY

echo "== a C++ program links the wheel's library and calls flash_example::mha_fwd"
torch_dir=$("$py" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
libpython=$("$py" -c 'import os, sysconfig as s; print(os.path.join(s.get_config_var("LIBDIR"), s.get_config_var("LDLIBRARY")))')
cmake -S "$src/examples/cpp_consumer" -B consumer -G Ninja -DWHEEL_DIR="$work/unpacked" -DTORCH_DIR="$torch_dir" \
  -DPYTHON_LIBRARY="$libpython" > cmake.log 2>&1 || { cat cmake.log; fail "cmake could not configure the consumer"; }
cmake --build consumer > consumer-build.log 2>&1 || { tail -30 consumer-build.log; fail "the consumer did not build"; }
consumer/consumer causal | tee consumer.txt
grep -q "mha_fwd refused: This flash_example build does not support causal attention" consumer.txt ||
  fail "the C++ call did not reach the library's profile check"
consumer/consumer | tee -a consumer.txt
grep -q "mha_fwd refused: q must be on CUDA" consumer.txt || fail "the non-causal C++ call did not reach the device check"

echo "== a re-run rebuilds nothing; other patches build it again"
"$fabuild" m.yaml -o house --cache-dir "$work/objects" | tee rerun.log || fail "the re-run exited $?"
grep -q "1 up to date" rerun.log || fail "the re-run built something"
cp flash-example-0.1.0-patched-note.patch renamed.patch
matrix m2.yaml renamed.patch
"$fabuild" m2.yaml -o house --cache-dir "$work/objects" | tee repatch.log || fail "the re-patched run exited $?"
grep -q "building again: its patches changed" repatch.log || fail "no word about the changed patches"
grep -q "1 ok" repatch.log || fail "the re-patched cell did not build"
grep -q "17 of 17 compiles from the cache" repatch.log || fail "the same patched source did not come from the object cache"

echo "== a patch that does not apply fails its cell and files nothing"
matrix bad.yaml does-not-apply.patch
rc=0; "$fabuild" bad.yaml -o bad-house --cache-dir "$work/objects" > bad.log 2>&1 || rc=$?
cat bad.log
[ "$rc" -eq 1 ] || fail "a patch that does not apply: exit $rc, expected 1"
grep -q "FAILED: .*$cell (patch does-not-apply.patch: exit 1" bad.log || fail "the failure does not name the patch"
grep -q "FAILED" "bad-house/logs/$cell.log" || fail "the log does not show patch's own report"
[ -z "$(find bad-house -name '*.whl')" ] || fail "a wheel was filed"
echo "e2e profile/patch: ok"
