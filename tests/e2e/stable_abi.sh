#!/usr/bin/env bash
# End to end, stable-ABI cells (docs/stable-abi.md), on the example package built against torch's
# stable ABI (stable_abi: true sets its FLASH_EXAMPLE_STABLE_ABI) with real torch from pip's index:
#   - the plan makes one cell of torch 2.11 and 2.13, named by the floor its setup.py defines
#     (torch2.10andhigher), built against 2.11, to be checked under both;
#   - the build files one cp310-abi3 wheel whose module needs no C++ symbol of torch, checked under
#     each release (its op and schema, the package's import), listed in both torches' indexes;
#   - torch 2.15 added to the matrix: the filed wheel is checked under it, nothing compiled; a
#     failure there would have been the cell's;
#   - pip installs it from the torch 2.13 variant's index, uv from torch 2.15's (a cu132 torch), and
#     each loads it under that torch;
#   - the nightly follows torch: a range (">=2.11") against a local index of torch wheels; a newer
#     torch copied into it between two plans gives exactly one verify job and no build job;
#   - the nightly's merge job: the published wheelhouse (served over HTTP on 127.0.0.1) fetched
#     whole, a verify job's part merged into it, nothing published lost.
# Shares the torch 2.11/2.13/2.15 environments of the other e2e tests (fabuild's cache).
# FABUILD_SKIP_E2E=1 skips it.
set -euo pipefail
[ "${FABUILD_SKIP_E2E:-}" = 1 ] && { echo "skipped: FABUILD_SKIP_E2E=1"; exit 77; }
fabuild=${1:?usage: stable_abi.sh FABUILD SOURCE_DIR}
src=${2:?}
work=$(mktemp -d /tmp/fabuild-stable.XXXXXX)
trap 'rm -rf "$work"' EXIT
house=$work/wheelhouse
cache=${FABUILD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fabuild}
fail() { echo "e2e: FAIL: $*"; exit 1; }
id=example0.1.0-torch2.10andhigher-cu130-abi3-linux_x86_64
matrix() {  # matrix TORCH_LIST [MORE_YAML]
  printf '%s\n' "package: flash-example" 'versions: ["0.1.0"]' "torch: [$1]" 'cuda: ["13.0"]' "python: [cp312]" \
    'archs: "90"' "provision: host" "stable_abi: true" "source: {path: $src/examples/flash_example}" "${2:-}" \
    > "$work/m.yaml"
}

echo "== the plan"
matrix '"2.11", "2.13"'
"$fabuild" "$work/m.yaml" --dry-run -o "$house" | tee "$work/plan.log" || fail "the dry run exited $?"
grep -q "1 cell to build" "$work/plan.log" || fail "expected one cell for two torch series"
grep -q "^$id " "$work/plan.log" || fail "no $id"
grep -q "stands for the matrix's torch 2.11, 2.13; built against torch 2.11 (cu130)" "$work/plan.log" ||
  fail "the plan does not say what the cell stands for"
grep -qE "TORCH_TARGET_VERSION at .*examples/flash_example/setup.py:[0-9]+" "$work/plan.log" ||
  fail "the floor is not read from setup.py"
grep -q "verified under torch 2.11.0 (cu130), 2.13.0 (cu130)" "$work/plan.log" || fail "the releases to check"

echo "== the build"
"$fabuild" "$work/m.yaml" -o "$house" --cache-dir "$work/objects" | tee "$work/first.log" || fail "the build exited $?"
grep -q "1 ok" "$work/first.log" || fail "expected 1 ok"
wheel=$house/example0.1.0/torch2.10andhigher/cu130/flash_example-0.1.0+cu130torch2.10andhigher-cp310-abi3-linux_x86_64.whl
[ -f "$wheel" ] || fail "no $wheel"
python3 - "$house" "$id" 2.11 2.13 <<'PY' || fail "manifest.json"
import json, sys
house, cell, *series = sys.argv[1:]
entry = json.load(open(f"{house}/manifest.json"))["cells"][cell]
proofs = entry["torch_proofs"]
assert [p["series"] for p in proofs] == series and all(p["ok"] for p in proofs), proofs
assert entry["stable_floor"] == "2.10", entry
assert entry["gpu_code"] == {"flash_example_cuda.abi3.so": "sm_90"}, entry["gpu_code"]  # archs "90", cuobjdump's
assert entry["torch_ops"] == ["flash_example::fwd(Tensor q, Tensor k, Tensor v, bool causal=False, float "
                              "softmax_scale=1.) -> Tensor[]"], entry["torch_ops"]
print("proofs:", [(p["series"], p["torch"], p["detail"]) for p in proofs])
PY
unzip -q -o "$wheel" -d "$work/unpacked"
so=$(ls "$work"/unpacked/flash_example_cuda*.so)
case "$so" in *.abi3.so) ;; *) fail "the module is not an abi3 one: $so" ;; esac
if nm -D --undefined-only "$so" | grep -E " _ZN(K)?(3c10|2at|5torch)" | head -3 | grep .; then
  fail "the stable-ABI module needs C++ symbols of torch"
fi
for v in cu130/torch2.11 cu130/torch2.13 cu130/torch2.10andhigher; do
  grep -q "flash_example-0.1.0+cu130torch2.10andhigher-cp310-abi3" "$house/$v/simple/flash-example/index.html" ||
    fail "the wheel is not in $v's index"
done
[ ! -e "$house/cu130/torch2.15/simple" ] || fail "an index for torch 2.15, which it was not checked under"
grep -q "2.13 ✓" "$house/index.html" || fail "the page does not show the torch it was checked under"

echo "== torch 2.15 added: the filed wheel is checked under it, nothing compiled"
matrix '"2.11", "2.13", "2.15"'
"$fabuild" "$work/m.yaml" -o "$house" --cache-dir "$work/objects" | tee "$work/second.log" || fail "the second run exited $?"
grep -q "$id is filed; checking it under torch 2.15 (no compile)" "$work/second.log" || fail "no check under 2.15"
! grep -q "OBJECT CACHE" "$work/second.log" || fail "the second run compiled"
python3 - "$house" "$id" <<'PY' || fail "the proof of 2.15"
import json, sys
proofs = json.load(open(f"{sys.argv[1]}/manifest.json"))["cells"][sys.argv[2]]["torch_proofs"]
assert [(p["series"], p["ok"]) for p in proofs] == [("2.11", True), ("2.13", True), ("2.15", True)], proofs
assert proofs[2]["cuda"] == "13.2", proofs  # PyPI's torch 2.15 is a cu132 build: the same CUDA major
PY
for v in cu130/torch2.15 cu132/torch2.15; do
  grep -q "flash_example-0.1.0+cu130torch2.10andhigher-cp310-abi3" "$house/$v/simple/flash-example/index.html" ||
    fail "the wheel is not in $v's index"
done

echo "== installed from two torch variants' indexes, by pip and by uv"
env213=$cache/venvs/cp312-torch2.13-cu130/bin/python
env215=$cache/venvs/cp312-torch2.15-cu132/bin/python
"$env213" -m pip install -q --no-deps --target "$work/pip213" --index-url "file://$house/cu130/torch2.13/simple/" \
  flash-example || fail "pip install from cu130/torch2.13"
uv pip install -q --no-deps --target "$work/uv215" --python "$env215" --index-url "file://$house/cu132/torch2.15/simple/" \
  flash-example || fail "uv pip install from cu132/torch2.15"
for pair in "$env213:$work/pip213" "$env215:$work/uv215"; do
  PYTHONPATH=${pair#*:} "${pair%%:*}" -c 'import torch, flash_example
print("torch", torch.__version__, "loads", flash_example.__file__, torch.ops.flash_example.fwd.default._schema)' ||
    fail "flash_example does not load with ${pair%%:*}"
done

echo "== the nightly follows torch: a range against a local index, a newer torch copied in"
index=$work/torch-index
mkdir -p "$index"
standin() {  # standin VERSION FROM_ENV: a torch wheel of that version with the real METADATA of the env's torch
  python3 - "$index" "$1" "$2" <<'PY'
import glob, os, re, sys, zipfile
index, version, env = sys.argv[1:]
site = glob.glob(os.path.join(os.path.dirname(os.path.dirname(env)), "lib", "python3*", "site-packages"))[0]
meta = open(glob.glob(os.path.join(site, "torch-*.dist-info", "METADATA"))[0]).read()
meta = re.sub(r"(?m)^Version: .*$", "Version: " + version, meta, count=1)
info = f"torch-{version}.dist-info"
with zipfile.ZipFile(os.path.join(index, f"torch-{version}-cp312-cp312-manylinux_2_28_x86_64.whl"), "w") as z:
    z.writestr(f"{info}/METADATA", meta)
    z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-manylinux_2_28_x86_64\n")
    z.writestr(f"{info}/RECORD", "")
PY
}
standin 2.11.0 "$cache/venvs/cp312-torch2.11-cu130/bin/python"
standin 2.13.0 "$env213"
matrix '">=2.11"' "torch_index: $index"
"$fabuild" "$work/m.yaml" --dry-run -o "$house" | tee "$work/night1.log" || fail "the first night's plan exited $?"
grep -q "stands for the matrix's torch 2.11, 2.13;" "$work/night1.log" || fail "the range did not resolve to 2.11, 2.13"
grep -q "$id: filed (.*), proven under torch 2.11, 2.13, 2.15; nothing new to check" "$work/night1.log" ||
  fail "the first night should have nothing to do"
"$fabuild" "$work/m.yaml" --ci-matrix github -o "$house" > "$work/night1.json" || fail "--ci-matrix exited $?"
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["include"]; assert e == [], e' "$work/night1.json" ||
  fail "the first night plans jobs: $(cat "$work/night1.json")"
standin 2.16.0 "$env215"  # published overnight (a stand-in: the plan reads names and metadata only)
"$fabuild" "$work/m.yaml" --dry-run -o "$house" | tee "$work/night2.log" || fail "the second night's plan exited $?"
grep -q "$id: filed (.*), proven under torch 2.11, 2.13, 2.15; to check under torch 2.16 (no compile)" "$work/night2.log" || fail "2.16 is not to be checked"
"$fabuild" "$work/m.yaml" --ci-matrix github -o "$house" > "$work/night2.json" || fail "--ci-matrix exited $?"
python3 - "$work/night2.json" "$id" <<'PY' || fail "the second night's jobs: $(cat "$work/night2.json")"
import json, sys
jobs = json.load(open(sys.argv[1]))["include"]
assert len(jobs) == 1, jobs
job = jobs[0]
assert job["stage"] == "verify" and job["torch"] == "2.16" and job["needs_artifact"] == "", job
assert job["args"] == f"--only {sys.argv[2]} --verify-torch 2.16", job
print("second night:", job["name"], "(no compile)")
PY
matrix '">=2.11,<2.16"' "torch_index: $index"  # a window that stops before 2.16: nothing new
"$fabuild" "$work/m.yaml" --dry-run -o "$house" | tee "$work/bounded.log" || fail "the bounded range's plan exited $?"
grep -q "stands for the matrix's torch 2.11, 2.13;" "$work/bounded.log" || fail "the bounded range took 2.16 in"
grep -q "$id: filed (.*), proven under torch 2.11, 2.13, 2.15; nothing new to check" "$work/bounded.log" ||
  fail "a range below 2.16 should have nothing to check"
echo "== the nightly's merge keeps what no job touched: the published wheelhouse over HTTP, a verify part merged in"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$house" "$port" > "$work/http.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
url=http://127.0.0.1:$port
for _ in $(seq 50); do curl -fs "$url/manifest.json" > /dev/null && break; sleep 0.1; done
"$src/scripts/ci/fetch-published.sh" "$url" "$id" "$work/part" || fail "fetching the published wheel for a verify job"
"$src/scripts/ci/fetch-published.sh" "$url" --all "$work/site" || fail "fetching the published wheelhouse"
"$fabuild" merge "$work/part" -o "$work/site" | tee "$work/merge.log" || fail "the merge exited $?"
cmp "$wheel" "$work/site/${wheel#"$house"/}" || fail "the published wheel is not in the merged wheelhouse as it was"
python3 - "$work/site" "$id" <<'PY' || fail "the merged wheelhouse lost what was published"
import json, sys
site, cell = sys.argv[1:]
entry = json.load(open(f"{site}/manifest.json"))["cells"][cell]
assert [p["series"] for p in entry["torch_proofs"]] == ["2.11", "2.13", "2.15"], entry["torch_proofs"]
report = json.load(open(f"{site}/report.json"))
assert report["torch"]["releases"], report.get("torch")
PY
grep -q "flash_example-0.1.0+cu130torch2.10andhigher-cp310-abi3" "$work/site/cu130/torch2.13/simple/flash-example/index.html" ||
  fail "the merged index does not list the published wheel"
echo "e2e: 1 passed, 0 failed"
