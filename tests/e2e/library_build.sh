#!/usr/bin/env bash
# End to end, with real nvcc, CMake and Ninja: fabuild builds matrix/example-lib.yaml (the
# example's kernels as the torch-free library, artifact: library, docs/library.md) into a fresh
# wheelhouse and files it; then, from the filed archive alone, unpacked elsewhere:
#   - the archive is deterministic (sorted entries, owner 0, one mtime) and SHA256SUMS checks it;
#   - the manifest, report.json, summary.md and the page name it; it exports exactly the C API;
#   - a C++ program (the archive's own test) configures with find_package(flash_attn) through
#     CMAKE_PREFIX_PATH, builds, links the unpacked library and runs (77 here: no GPU);
#     the header compiles as C;
#   - the recipe configured (not built) from a synthetic tree holding both hopper/ and
#     csrc/flash_attn builds the flavour it is told, each with its own kernel files;
#   - a re-run rebuilds nothing; --force takes every kernel from the object cache and files the
#     same bytes; so does a build from another cache directory, compiling everything again;
#     a filed archive changed behind fabuild's back is built again.
# Needs the CUDA 13.0 toolkit, CMake 3.24+ and Ninja; no torch, no pip. FABUILD_SKIP_E2E=1 skips it.
set -euo pipefail
[ "${FABUILD_SKIP_E2E:-}" = 1 ] && { echo "skipped: FABUILD_SKIP_E2E=1"; exit 77; }
fabuild=${1:?usage: library_build.sh FABUILD SOURCE_DIR}
src=${2:?}
for tool in cmake ninja; do command -v "$tool" > /dev/null || { echo "skipped: no $tool on PATH"; exit 77; }; done
work=$(mktemp -d /tmp/fabuild-lib.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "e2e: FAIL: $*"; exit 1; }
house=$work/house
cell=example0.1.0-lib-cu130-linux_x86_64-small
stem=flash_example-0.1.0-lib-cu130-small-linux_x86_64
dir=$house/example0.1.0/lib/cu130/small
archive=$dir/$stem.tar.gz
build() { "$fabuild" "$src/matrix/example-lib.yaml" -o "$house" --cache-dir "$work/objects" "$@"; }

echo "== the plan"
build --dry-run -v | tee "$work/plan.txt"
grep -q "^$cell .*host CUDA 13.0.*no torch" "$work/plan.txt" || fail "no library cell in the plan"
grep -q "library $dir/$stem.tar.gz" "$work/plan.txt" || fail "the plan does not say where the library goes"
grep -q "profile small: off CAUSAL, HDIM96, HDIM128" "$work/plan.txt" || fail "the plan does not show the profile"
# The plan counts the recipe's units from the source (source/kernel_units.h); the build's own
# count (cmake/flavours.cmake's "N kernel files") is checked against it below.
planned=$(sed -n 's/^  units   7 (\([0-9]*\) of the source.s 16 kernel files the library uses, the C API, the backend, the LSE of rows without keys)$/\1/p' "$work/plan.txt")
[ "$planned" = 4 ] || fail "the plan does not count 7 units, 4 of the example's 16 kernel files"
cuda_home=$(build --dry-run --format json | python3 -c 'import json, sys; print(json.load(sys.stdin)["cells"][0]["toolkit"]["cuda_home"])')

echo "== the build"
start=$(date +%s)
build | tee "$work/first.log" || fail "the build exited $?"
echo "build: $(( $(date +%s) - start ))s"
grep -q "1 ok" "$work/first.log" || fail "the cell did not build"
[ -f "$archive" ] || fail "no $archive"
grep -q "flash_attn: .*; $planned kernel files" "$house/logs/$cell.log" ||
  fail "the recipe did not compile the $planned kernel files the plan counted"
(cd "$dir" && sha256sum -c SHA256SUMS) || fail "SHA256SUMS does not match the archive"
first_sha=$(sha256sum "$archive" | cut -d' ' -f1)
python3 - "$house" "$cell" "$archive" "$first_sha" <<'PY' || fail "the filed library's records"
import json, os, sys, tarfile
house, cell, archive, sha = sys.argv[1:]
rel = os.path.relpath(archive, house)
entry = json.load(open(os.path.join(house, "manifest.json")))["cells"][cell]
assert entry["library"] == rel and "wheel" not in entry and entry["sha256"] == sha, entry
assert sorted(entry["exports"]) == ["flash_attn_api_version", "flash_attn_build_info", "flash_attn_capabilities",
                                    "flash_attn_last_error", "flash_attn_supports", "flash_attn_varlen_bwd",
                                    "flash_attn_varlen_fwd", "flash_attn_varlen_fwd_num_splits"], entry["exports"]
oc = entry["object_cache"]
assert oc["misses"] == 7 and oc["hits"] == 0 and oc["uncacheable"] == 0 and oc["errors"] == 0, oc
assert entry["versions"]["nvcc"] == "13.0" and entry["versions"]["cmake"], entry["versions"]
record = [c for c in json.load(open(os.path.join(house, "report.json")))["cells"] if c["id"] == cell][0]
assert record["library"] == rel and record["sha256"] == sha and record["status"] == "ok", record
assert cell in open(os.path.join(house, "summary.md")).read()
page = open(os.path.join(house, "index.html")).read()
assert f'data-id="{cell}"' in page and f'href="{rel}"' in page and "1 library" in page, "the page lacks the library"
with tarfile.open(archive) as t:
    members = t.getmembers()
names = [m.name for m in members]
assert names == sorted(names), "entries are not in path order"
assert all(m.mtime == 946684800 and m.uid == 0 and m.gid == 0 and m.uname == "" for m in members), "not normalised"
top = os.path.basename(archive)[: -len(".tar.gz")]
for need in ["include/flash_attn/flash_attn.h", "lib/libflash_attn.so", "lib/cmake/flash_attn/flash_attnConfig.cmake",
             "lib/cmake/flash_attn/flash_attnConfigVersion.cmake", "share/flash_attn/test/varlen_test.cpp"]:
    assert f"{top}/{need}" in names, need
print(f"filed: {rel} ({len(members)} entries), sha256 {sha[:16]}, exports {sorted(entry['exports'])}")
PY

echo "== a C++ program finds the unpacked library with find_package and links it"
mkdir "$work/elsewhere"
tar -xzf "$archive" -C "$work/elsewhere"
prefix=$work/elsewhere/$stem
cmake -S "$prefix/share/flash_attn/test" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" > "$work/consumer.log" 2>&1 ||
  { cat "$work/consumer.log"; fail "the consumer did not configure against the unpacked package"; }
cmake --build "$work/consumer" >> "$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; fail "the consumer did not build"; }
loads=$(ldd "$work/consumer/flash_attn_varlen_test")  # whole: grep -q would cut ldd off (pipefail)
grep -q "libflash_attn.so.3 => $prefix/lib/" <<< "$loads" || { echo "$loads"; fail "the consumer does not load the unpacked libflash_attn"; }
rc=0; "$work/consumer/flash_attn_varlen_test" | tee "$work/test.txt" || rc=$?
grep -q "api: NULL args: refused" "$work/test.txt" || fail "the C API's checks did not run"
# The example has no paged, split or backward kernels: the library says so, and refuses them.
grep -q "paged KV no, split-KV no, backward no" "$work/test.txt" || fail "the capabilities are not the example's"
grep -q "api: backward in a build without it: refused (status 2" "$work/test.txt" || fail "backward was not refused"
# A refusal recommends only a profile the package has: the example has none with these.
grep -q "api: backward in a build without it: .*no profile of this package has it" "$work/test.txt" ||
  fail "the backward refusal does not say that no profile of the example has it"
if grep "api: .* in a build without" "$work/test.txt" | grep -q "inference or full"; then
  fail "a refusal recommends a profile the example does not have"
fi
if [ "$rc" -eq 77 ]; then
  grep -q "^SKIP: " "$work/test.txt" || fail "exit 77 without saying why"
elif [ "$rc" -ne 0 ]; then
  fail "the consumer exited $rc"
fi
cc -std=c99 -Wall -Werror -fsyntax-only -I"$prefix/include" -I"$cuda_home/include" -x c - <<'C' || fail "the header is not C"
#include <flash_attn/flash_attn.h>
int main(void) { return flash_attn_varlen_fwd((const flash_attn_varlen_fwd_args*)0, 0) == FLASH_ATTN_OK &&
                        flash_attn_capabilities() >= 0 && FLASH_ATTN_API_VERSION == 3; }
C

echo "== one tree with hopper/ and csrc/flash_attn: the flavour the package names, not the tree's"
both=$work/both
mkdir -p "$both/hopper/instantiations" "$both/csrc/flash_attn/src" "$both/csrc/cutlass/include/cutlass" "$both/flash_attn"
touch "$both/hopper/flash.h" "$both/hopper/flash_prepare_scheduler.cu" "$both/hopper/flash_fwd_combine.cu" \
  "$both/csrc/flash_attn/src/flash.h" "$both/csrc/cutlass/include/cutlass/cutlass.h"
echo '__version__ = "3.0.0"' > "$both/hopper/__init__.py"
echo '__version__ = "2.8.3"' > "$both/flash_attn/__init__.py"
for f in flash_fwd_hdim64_bf16_sm90.cu flash_fwd_hdim64_bf16_paged_sm90.cu flash_fwd_hdim64_bf16_split_sm90.cu \
         flash_bwd_hdim64_bf16_sm90.cu flash_fwd_hdim64_bf16_softcap_sm90.cu; do touch "$both/hopper/instantiations/$f"; done
for f in flash_fwd_hdim64_bf16_sm80.cu flash_fwd_hdim64_bf16_causal_sm80.cu flash_fwd_split_hdim64_bf16_sm80.cu \
         flash_bwd_hdim64_bf16_sm80.cu; do touch "$both/csrc/flash_attn/src/$f"; done
recipe=$src/recipes/flash-attn-lib  # the recipe this fabuild carries
configure() {  # flavour, disable
  cmake -S "$recipe" -B "$work/both-$1" -G Ninja -DFLASH_ATTN_SOURCE="$both" -DFLASH_ATTN_FLAVOUR="$1" -DFLASH_ATTN_ARCHS=90 \
    "-DFLASH_ATTN_DISABLE=$2" -DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc" > "$work/both-$1.log" 2>&1
}
configure fa3 "" || { cat "$work/both-fa3.log"; fail "the recipe did not configure FlashAttention 3 from the tree"; }
grep -q "flash_attn: fa3 3.0.0, .*paged split backward, profile full; 4 kernel files" "$work/both-fa3.log" ||
  { cat "$work/both-fa3.log"; fail "FlashAttention 3 from the tree with both: not its 4 files"; }
grep -q "hopper/flash_fwd_combine.cu" "$work/both-fa3/build.ninja" || fail "split without the combine kernel"
configure fa2 "BACKWARD" || { cat "$work/both-fa2.log"; fail "the recipe did not configure FlashAttention 2 from the tree"; }
grep -q "flash_attn: fa2 2.8.3, .*paged, profile full; 3 kernel files" "$work/both-fa2.log" ||
  { cat "$work/both-fa2.log"; fail "FlashAttention 2 from the tree with both: not its 3 forward files"; }
if grep -q "hopper/instantiations" "$work/both-fa2/build.ninja"; then fail "FlashAttention 2's build compiles hopper/ files"; fi
if configure "" ""; then fail "the recipe configured without a flavour"; fi
grep -q "pass -DFLASH_ATTN_FLAVOUR=fa3" "$work/both-.log" || { cat "$work/both-.log"; fail "no word on the missing flavour"; }

echo "== a re-run rebuilds nothing; --force takes every kernel from the cache and files the same bytes"
build | tee "$work/rerun.log" || fail "the re-run exited $?"
grep -q "1 up to date" "$work/rerun.log" || fail "the re-run built the library again"
build --force | tee "$work/force.log" || fail "the forced run exited $?"
grep -q "^7 of 7 compiles from the cache" "$work/force.log" || fail "--force did not take every compile from the cache"
[ "$(sha256sum "$archive" | cut -d' ' -f1)" = "$first_sha" ] || fail "the rebuilt archive differs from the first"

echo "== from another cache directory (its own recipe copy and objects): compiled again, the same bytes"
FABUILD_CACHE_DIR=$work/cache2 "$fabuild" "$src/matrix/example-lib.yaml" -o "$work/house2" --cache-dir "$work/objects2" |
  tee "$work/other.log" || fail "the run from another cache directory exited $?"
grep -q "^0 of 7 compiles from the cache" "$work/other.log" || fail "the other cache directory was not fresh"
[ "$(sha256sum "$work/house2/example0.1.0/lib/cu130/small/$stem.tar.gz" | cut -d' ' -f1)" = "$first_sha" ] ||
  fail "the library built from another cache directory differs from the first"

echo "== a filed archive changed behind fabuild's back is built again"
printf x >> "$archive"
build | tee "$work/changed.log" || fail "the run after the change exited $?"
grep -q "building again: its filed library .* changed since it was filed" "$work/changed.log" || fail "no word about the change"
(cd "$dir" && sha256sum -c SHA256SUMS) || fail "SHA256SUMS does not match the rebuilt archive"
echo "e2e library: ok"
