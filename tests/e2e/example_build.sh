#!/usr/bin/env bash
# End to end, with real nvcc, real torch and real pip: fabuild builds matrix/example.yaml (the
# example package for cp311, cp312 and cp313) into a fresh wheelhouse, a second run rebuilds
# nothing, and a wheel changed behind fabuild's back is built again. The object cache (a fresh
# one, $work/objects) compiles the kernels once: the cp312 and cp313 cells take the 16 kernels
# from it and compile only their Python-specific api.cpp; a rebuild takes everything from it.
# Each wheel's recorded glibc floor gives the manylinux tag `auditwheel show` gives it
# (tests/e2e/glibc_floor.py; auditwheel from pip's index into a cached virtualenv).
# Needs the CUDA 13.0 toolkit, python3.11-3.13 and pip's index (for torch 2.11, once: the
# virtualenvs are kept in fabuild's cache). FABUILD_SKIP_E2E=1 skips it (exit 77).
set -euo pipefail
[ "${FABUILD_SKIP_E2E:-}" = 1 ] && { echo "skipped: FABUILD_SKIP_E2E=1"; exit 77; }
fabuild=${1:?usage: example_build.sh FABUILD SOURCE_DIR}
src=${2:?}
work=$(mktemp -d /tmp/fabuild-e2e.XXXXXX)
trap 'rm -rf "$work"' EXIT
house=$work/wheelhouse
dir=$house/example0.1.0/torch2.11/cu130
fail() { echo "e2e: FAIL: $*"; exit 1; }

echo "== first run: builds three wheels"
start=$(date +%s)
"$fabuild" "$src/matrix/example.yaml" -o "$house" --cache-dir "$work/objects" | tee "$work/first.log" || fail "first run exited $?"
echo "first run: $(( $(date +%s) - start ))s"
for py in cp311 cp312 cp313; do
  wheel=$dir/flash_example-0.1.0+cu130torch2.11cxx11abiTRUE-$py-$py-linux_x86_64.whl
  [ -f "$wheel" ] || fail "no $wheel"
done
[ "$(wc -l < "$dir/SHA256SUMS")" -eq 6 ] || fail "SHA256SUMS should list 3 wheels and their 3 build records"
(cd "$dir" && sha256sum -c SHA256SUMS) || fail "SHA256SUMS does not match the wheels"
# Nothing but the wheels, their metadata (PEP 658), their build records and the sums.
stray=$(cd "$dir" && ls -A | grep -vE '\.whl$|\.whl\.metadata$|\.whl\.build\.json$|^SHA256SUMS$' || true)
[ -z "$stray" ] || fail "files in $dir that are no wheel: $stray"
python3 - "$house/manifest.json" "$src/examples/flash_example" <<'PY' || { grep -h "object cache: [^0-9]" "$house"/logs/example*.log | grep -v "api.cpp"; fail "manifest.json"; }
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
assert len(cells) == 3, cells
for cid, c in cells.items():
    assert c["wheel"].startswith("example0.1.0/torch2.11/cu130/"), c
    assert c["versions"]["torch"].startswith("2.11"), c
    assert c["versions"]["nvcc"] == "13.0", c
    assert c["versions"]["compiler"] not in ("", "?"), c
    assert c["build_seconds"] > 0, c
print("manifest: 3 cells, torch", {c["versions"]["torch"] for c in cells.values()})
# The first cell of the row compiled all 17 units; the others took the 16 kernels from the cache.
first = "example0.1.0-torch2.11-cu130-cp311-linux_x86_64"
for cid, c in cells.items():
    oc = c["object_cache"]
    assert oc["hits"] + oc["misses"] == 17 and oc["errors"] == 0 and oc["uncacheable"] == 0, (cid, oc)
    if cid == first:
        assert oc["hits"] == 0 and oc["stored_bytes"] > 0, (cid, oc)
    else:
        assert oc["hits"] == 16 and oc["misses"] == 1, (cid, oc)
print("object cache:", {cid[-20:]: (c["object_cache"]["hits"], c["object_cache"]["misses"]) for cid, c in cells.items()})
# Each wheel's build record beside it (docs/security.md): what made it, and nothing of when.
import hashlib, os
house = os.path.dirname(sys.argv[1])
import pathlib
tree = pathlib.Path(sys.argv[2])
for cid, c in cells.items():
    record = json.load(open(os.path.join(house, c["wheel"] + ".build.json")))
    assert record["cell"] == cid and record["file"]["sha256"] == c["sha256"], record
    assert record["fabuild"]["version"] and len(record["fabuild"]["sha256"]) == 64, record["fabuild"]
    assert record["source"]["kind"] == "path" and len(record["source"].get("commit", "")) == 40, record["source"]
    assert record["toolchain"]["torch"].startswith("2.11") and record["toolchain"]["nvcc"] == "13.0", record
    assert record["matrix"]["python"] == cid.split("-")[3] and record["env"]["FLASH_ATTN_CUDA_ARCHS"] == "90", record
    assert record["source_date_epoch"]["from"].startswith("the commit's time"), record
    assert "build_seconds" not in json.dumps(record), record
    # A directory source's bytes as the cell copied them: sha256sum's lines of its files, hashed.
    lines = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(tree).as_posix()}\n"
                    for p in sorted(tree.rglob("*"), key=lambda p: p.relative_to(tree).as_posix().encode())
                    if p.is_file() and not {".git", ".hg", ".svn"} & set(p.relative_to(tree).parts))
    assert record["source"]["tree_sha256"] == hashlib.sha256(lines.encode()).hexdigest(), record["source"]
print("build records: 3, each naming its wheel's sha256, source commit and tree, toolchain and variables")
PY
grep -q "^32 of 51 compiles from the cache" "$work/first.log" || fail "no object cache summary in the first run"
[ -f "$work/objects/CACHEDIR.TAG" ] || fail "no object cache in $work/objects"
grep -q "fabuild: imported" "$house/logs/example0.1.0-torch2.11-cu130-cp313-linux_x86_64.log" || fail "no import smoke test in the log"
# Its units are what its setup.py builds (the sources step), not a listing of the tree.
grep -q "^fabuild: 17 units the build compiles: 16 kernel units and 1 other" \
  "$house/logs/example0.1.0-torch2.11-cu130-cp311-linux_x86_64.log" || fail "the units are not setup.py's"
echo "== pip installs the built wheels from the index the build made, served on 127.0.0.1"
for f in index.html report.json summary.md simple/flash-example/index.html cu130/torch2.11/simple/index.html; do
  [ -f "$house/$f" ] || fail "the build did not publish $f"
done
python3 "$src/tests/e2e/index_pip.py" "$fabuild" --wheelhouse "$house" --pythons 3.11,3.12,3.13 || fail "pip from the generated index"
echo "== each wheel's recorded glibc floor against auditwheel's, and on the page and summary"
rc=0; python3 "$src/tests/e2e/glibc_floor.py" "$house" || rc=$?
[ $rc -ne 77 ] || echo "e2e: glibc floor vs auditwheel skipped: auditwheel cannot be installed"
[ $rc -eq 0 ] || [ $rc -eq 77 ] || fail "the recorded glibc floors (tests/e2e/glibc_floor.py)"

echo "== the row's recorded peaks size its jobs (the memory gate): the plan says so"
"$fabuild" "$src/matrix/example.yaml" -o "$house" --cache-dir "$work/objects" --dry-run > "$work/gated-plan.log" ||
  fail "the plan after the first run exited $?"
grep -q "^note: *memory by recorded peaks: 16 kernels of " "$work/gated-plan.log" ||
  { grep "^note" "$work/gated-plan.log"; fail "the plan does not size the row's jobs by its recorded peaks"; }

echo "== second run: rebuilds nothing"
start=$(date +%s%N)
"$fabuild" "$src/matrix/example.yaml" -o "$house" --cache-dir "$work/objects" | tee "$work/second.log" || fail "second run exited $?"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "second run: ${ms}ms"
grep -q "3 up to date" "$work/second.log" || fail "the second run built something"

echo "== a filed wheel changed behind fabuild's back is built again"
printf 'x' >> "$dir/flash_example-0.1.0+cu130torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"
"$fabuild" "$src/matrix/example.yaml" -o "$house" --python cp312,cp313 --cache-dir "$work/objects" | tee "$work/third.log" || fail "third run exited $?"
grep -q "building again: its filed wheel .* changed since it was filed" "$work/third.log" || fail "no word about the changed wheel"
grep -q "1 ok, 1 up to date" "$work/third.log" || fail "expected one rebuild and one up-to-date cell"
(cd "$dir" && sha256sum -c SHA256SUMS) || fail "SHA256SUMS after the rebuild"
python3 - "$house/manifest.json" <<'PY' || fail "the rebuild did not take everything from the object cache"
import json, sys
oc = json.load(open(sys.argv[1]))["cells"]["example0.1.0-torch2.11-cu130-cp312-linux_x86_64"]["object_cache"]
assert oc["hits"] == 17 and oc["misses"] == 0, oc
print("rebuild: all 17 units from the object cache")
PY
echo "== naming: upstream installs as FlashAttention's wheels do (setup.py's download path, by URL; pip and uv)"
sed -e "s#^source: .*#source: {path: $src/examples/flash_example}#" "$src/matrix/example.yaml" > "$work/upstream.yaml"
echo "naming: upstream" >> "$work/upstream.yaml"
"$fabuild" "$work/upstream.yaml" -o "$work/up-house" --python cp312 --cache-dir "$work/objects" | tee "$work/upstream.log" || fail "the upstream-named build exited $?"
up=$work/up-house/example0.1.0/torch2.11/cu130/flash_example-0.1.0+cu13torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl
[ -f "$up" ] || fail "no $up"
# Another wheelhouse, the same cell: every unit from the cache, api.cpp too (its -g compile keys
# the staging directory as @BASE@: docs/performance.md).
grep -q "^17 of 17 compiles from the cache" "$work/upstream.log" ||
  { grep -h "object cache: miss" "$work/up-house/logs/"*.log; fail "the same cell in a new wheelhouse compiled again"; }
cache_root=${FABUILD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fabuild}
python3 "$src/tests/e2e/upstream_install.py" --wheel "$up" --source "$src/examples/flash_example" \
  --python "$cache_root/venvs/cp312-torch2.11-cu130/bin/python" \
  --fabuild-wheel "$dir/flash_example-0.1.0+cu130torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl" ||
  fail "an upstream-named wheel does not install as upstream's do"

echo "== units from the build: FlashAttention 2.8.3's sdist (pip's index) compiles 73 of its files, not its 129 .cu"
# The sources step's program (py/build_sources.py, embedded in fabuild) on the real sdist, with
# the cp312 environment's torch and this host's nvcc, as a cell runs it.
FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE "$cache_root/venvs/cp312-torch2.11-cu130/bin/python" -m pip download -q --no-deps \
  --no-binary :all: --no-build-isolation flash-attn==2.8.3 -d "$work/fa2" || fail "pip download flash-attn==2.8.3"
tar -xzf "$work/fa2/flash_attn-2.8.3.tar.gz" -C "$work/fa2"
(cd "$work/fa2/flash_attn-2.8.3" && CUDA_HOME=${CUDA_HOME:-/usr/local/cuda-13.0} \
  "$cache_root/venvs/cp312-torch2.11-cu130/bin/python" -c "$(cat "$src/src/provision/py/build_sources.py")" "$work/fa2/units.json") ||
  fail "build_sources.py on FlashAttention 2.8.3"
python3 - "$work/fa2" <<'PY' || fail "FlashAttention 2.8.3's units"
import json, pathlib, sys
root = pathlib.Path(sys.argv[1]) / "flash_attn-2.8.3"
sources = json.load(open(pathlib.Path(sys.argv[1]) / "units.json"))["sources"]
kernels = [s for s in sources if s.endswith(".cu")]
tree = [p for p in root.rglob("*.cu") if not {"cutlass", "composable_kernel"} & set(p.parts)]
assert len(sources) == 73 and len(kernels) == 72, (len(sources), len(kernels))
assert sorted(set(sources) - set(kernels)) == [str(root / "csrc/flash_attn/flash_api.cpp")], sources
assert len(tree) == 129, len(tree)
print(f"FlashAttention 2.8.3: {len(sources)} units ({len(kernels)} kernels), of the tree's {len(tree)} .cu files")
PY

echo "== platform_tag: a wheel tagged with the manylinux policy its glibc needs fit, as auditwheel reads it"
grep -v "^naming:" "$work/upstream.yaml" > "$work/ml.yaml"
echo "platform_tag: manylinux_2_34" >> "$work/ml.yaml"
"$fabuild" "$work/ml.yaml" -o "$work/ml-house" --python cp312 --cache-dir "$work/objects" | tee "$work/ml.log" || fail "the manylinux_2_34 build exited $?"
[ -f "$work/ml-house/example0.1.0/torch2.11/cu130/flash_example-0.1.0+cu130torch2.11cxx11abiTRUE-cp312-cp312-manylinux_2_34_x86_64.whl" ] ||
  fail "no manylinux_2_34 wheel"
rc=0; python3 "$src/tests/e2e/glibc_floor.py" "$work/ml-house" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 77 ] || fail "the manylinux wheel against auditwheel (tests/e2e/glibc_floor.py)"
sed -i "s/manylinux_2_34/manylinux_2_28/" "$work/ml.yaml"
if "$fabuild" "$work/ml.yaml" -o "$work/ml28-house" --python cp312 --cache-dir "$work/objects" > "$work/ml28.log" 2>&1; then
  fail "a wheel needing glibc 2.32 was filed as manylinux_2_28"
fi
grep -q "newer than manylinux_2_28 allows (2.28)" "$work/ml28.log" || { tail -20 "$work/ml28.log"; fail "no word of the policy it does not fit"; }
[ -z "$(find "$work/ml28-house" -name '*.whl' 2>/dev/null)" ] || fail "a wheel was filed under manylinux_2_28"

echo "== a free-threaded cell (cp313t): built where the host has a free-threaded 3.13, else the plan says why not"
sed -e "s#^python: .*#python: [cp313t]#" "$work/upstream.yaml" | grep -v "^naming:" > "$work/ft.yaml"
"$fabuild" "$work/ft.yaml" --dry-run -o "$work/ft-house" > "$work/ft-plan.log" || fail "the cp313t plan exited $?"
grep -q "^example0.1.0-torch2.11-cu130-cp313t-linux_x86_64 " "$work/ft-plan.log" || fail "no cp313t cell in the plan"
if grep -q "^python:     3.13t: none: no Python 3.13t on this host (tried .*uv python install 3.13t" "$work/ft-plan.log"; then
  echo "cp313t: no free-threaded Python 3.13 here; the plan says so"
else
  grep -q "^python:     3.13t: /" "$work/ft-plan.log" || { cat "$work/ft-plan.log"; fail "the plan names no 3.13t interpreter"; }
  "$fabuild" "$work/ft.yaml" -o "$work/ft-house" --cache-dir "$work/objects" | tee "$work/ft.log" || fail "the cp313t build exited $?"
  [ -f "$work/ft-house/example0.1.0/torch2.11/cu130/flash_example-0.1.0+cu130torch2.11cxx11abiTRUE-cp313-cp313t-linux_x86_64.whl" ] ||
    fail "no cp313-cp313t wheel"
fi

echo "== the same package from a git repository, cloned at its tag"
repo=$work/repo
git init -q "$repo"
cp -r "$src/examples/flash_example/." "$repo/"
rm -rf "$repo/build" "$repo/dist" "$repo"/*.egg-info
git -C "$repo" add -A
git -C "$repo" -c user.name=fabuild -c user.email=fabuild@localhost commit -qm example
git -C "$repo" tag v0.1.0
sed -e "s#^source: .*#source: {git: $repo, ref: \"v{version}\"}#" "$src/matrix/example.yaml" > "$work/git.yaml"
"$fabuild" "$work/git.yaml" -o "$work/git-house" --python cp312 --cache-dir "$work/objects" | tee "$work/git.log" || fail "git source run exited $?"
grep -q "1 ok" "$work/git.log" || fail "the git source did not build"
grep -q "fabuild: step clone: \[git\] \[clone\]" "$work/git-house/logs/example0.1.0-torch2.11-cu130-cp312-linux_x86_64.log" || fail "no clone step"
echo "== ... and at a commit, by its short hash; an unknown commit fails its cell, saying so"
commit=$(git -C "$repo" rev-parse HEAD)
sed -e "s#^source: .*#source: {git: $repo, ref: \"${commit:0:10}\"}#" "$src/matrix/example.yaml" > "$work/commit.yaml"
"$fabuild" "$work/commit.yaml" -o "$work/commit-house" --python cp312 --cache-dir "$work/objects" | tee "$work/commit.log" || fail "the commit source run exited $?"
grep -q "fabuild: source commit $commit" "$work/commit-house/logs/example0.1.0-torch2.11-cu130-cp312-linux_x86_64.log" || fail "the log does not name the commit built"
sed -i "s#${commit:0:10}#0123456789abcdef#" "$work/commit.yaml"
if "$fabuild" "$work/commit.yaml" -o "$work/bad-house" --python cp312 --cache-dir "$work/objects" > "$work/bad.log" 2>&1; then
  fail "an unknown commit built"
fi
grep -q "checkout" "$work/bad.log" || { tail "$work/bad.log"; fail "no word of the failed checkout"; }
echo "e2e: 1 passed, 0 failed"
