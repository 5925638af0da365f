#!/usr/bin/env bash
# Done-when check for CI sharding, with real builds of the example package (real nvcc, torch,
# pip): two cells (cp311, cp312) built whole into one wheelhouse, and the same two cells built
# as shards 1/2 and 2/2 into two partial wheelhouses and merged with `fabuild merge`, give the
# same wheelhouse: the same files, the same manifest cells (cell -> wheel), SHA256SUMS that
# agree with the wheels, and an index and page that list them. Builds of the example are not
# byte for byte reproducible (the extension embeds its build directory, the zip its times), so
# the wheels' digests are compared only when they happen to agree; a whole-build wheel against
# a shard's wheel of the same name is then a real conflicting duplicate, which merge refuses,
# and a shard merged twice is an identical duplicate, taken once.
# The runs share a remote object cache (Debian's nginx with WebDAV PUT on 127.0.0.1, set by
# FABUILD_CACHE_REMOTE as a CI secret would), and each shard starts with an empty local object
# cache of its own, as a CI runner does: every kernel a shard compiles comes from what the whole
# run sent, which the shard's log and summary must say. Before shard 2, one object on the remote
# is damaged: that shard compiles that kernel itself, says so, and its wheel is still good.
# Needs what tests/e2e/example_build.sh needs, and nginx. FABUILD_SKIP_E2E=1 skips it (exit 77).
set -euo pipefail
[ "${FABUILD_SKIP_E2E:-}" = 1 ] && { echo "skipped: FABUILD_SKIP_E2E=1"; exit 77; }
fabuild=${1:?usage: shard_merge.sh FABUILD SOURCE_DIR}
src=${2:?}
work=$(mktemp -d /tmp/fabuild-shards.XXXXXX)
# shellcheck source=../support/nginx_dav.sh
. "$src/tests/support/nginx_dav.sh"
trap 'stop_nginx_dav; rm -rf "$work"' EXIT
cd "$work"
start_nginx_dav "$work/nginx"
export FABUILD_CACHE_REMOTE=$NGINX_DAV_URL/fabuild
matrix=$src/matrix/example.yaml
dir=example0.1.0/torch2.11/cu130
fail() { echo "e2e: FAIL: $*"; exit 1; }
seconds() { echo $(( $(date +%s) - $1 )); }
files() { (cd "$1" && find . -name '*.whl' -not -path '*/.*' | sort); }
cells() { python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["cells"]; print("\n".join(k + " " + v["wheel"] for k, v in sorted(c.items())))' "$1/manifest.json"; }
# Every file but the wheelhouse lock, which whoever takes it rewrites (merge does, then refuses).
tree_digest() { (cd "$1" && find . -type f -not -name .fabuild.lock -print0 | sort -z | xargs -0 sha256sum | sha256sum); }

start=$(date +%s)
echo "== whole: cp311 and cp312 in one run"
"$fabuild" "$matrix" --python cp311,cp312 -o whole > whole.log || { cat whole.log; fail "whole build exited $?"; }
echo "whole: $(seconds "$start")s"
for k in 1 2; do
  s=$(date +%s)
  echo "== shard $k/2"
  if [ "$k" = 2 ]; then
    # A fault case on a real run: the remote's smallest compile result (a kernel's; api.cpp's,
    # built with -g, is the largest and serves no other path) is damaged in place. Shard 2 must
    # refuse it with a note, compile that kernel itself, and still file a good wheel (verified
    # and imported by its own steps).
    damaged=$(grep -l --null -r '^FABUILD-CC-RESULT' "$work/nginx/data/fabuild/cas" | xargs -0 ls -S | tail -1)
    python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[len(b)//2]^=0xFF; open(p,"wb").write(b)' "$damaged"
  fi
  "$fabuild" "$matrix" --python cp311,cp312 --split-rows --shard "$k/2" -o "shard$k" --cache-dir "objects-shard$k" \
    > "shard$k.log" || { cat "shard$k.log"; fail "shard $k exited $?"; }
  [ "$(files "shard$k" | wc -l)" -eq 1 ] || fail "shard $k/2 should hold one of the two cells (balanced by cost)"
  # Its local cache started empty: its 16 kernels came from the remote (api.cpp is built with
  # -g, whose objects record their paths and are shared only between the same paths).
  grep -Eq "^remote cache $FABUILD_CACHE_REMOTE: 1 of 1 cells found their row; [1-9][0-9]* objects taken" "shard$k.log" ||
    fail "shard $k took nothing from the remote: $(grep -E '^remote cache|compiles from' "shard$k.log")"
  hits=$(sed -n 's/^\([0-9]*\) of 17 compiles from the cache.*/\1/p' "shard$k.log")
  if [ "$k" = 1 ]; then
    [ "${hits:-0}" -ge 16 ] || fail "shard $k compiled its kernels again: $(grep -E 'compiles from' "shard$k.log")"
    shard1_hits=$hits
  else
    [ "${hits:-0}" -eq $((shard1_hits - 1)) ] ||
      fail "shard $k: not one kernel compiled for the damaged object: $(grep -E 'compiles from' "shard$k.log")"
    grep -q "the remote's copy does not match its SHA-256 (damaged or tampered with; not used)" \
      "shard$k/logs/"*.log || fail "shard $k took the damaged object without a note"
    grep -Eq "^remote cache .*, 1 refused \(damaged or missing\).*; 1 note in the cells' logs" "shard$k.log" ||
      fail "shard $k's summary does not count the refusal and the note: $(grep -E '^remote cache' "shard$k.log")"
  fi
  echo "shard $k: $(seconds "$s")s; $(grep -E '^remote cache' "shard$k.log")"
done

echo "== merge the shards"
"$fabuild" merge shard1 shard2 -o merged | tee merge.log || fail "merge exited $?"
grep -q "wheels      2 copied, 0 already there" merge.log || fail "merge did not copy two wheels"

echo "== the merged wheelhouse is the whole one"
[ "$(files merged)" = "$(files whole)" ] || fail "different wheels: $(files merged) vs $(files whole)"
[ "$(cells merged)" = "$(cells whole)" ] || fail "different manifest cells: $(cells merged) vs $(cells whole)"
[ "$(cells merged | wc -l)" -eq 2 ] || fail "two cells expected in the manifest"
(cd "merged/$dir" && sha256sum -c --strict SHA256SUMS) || fail "merged SHA256SUMS does not match its wheels"
(cd "whole/$dir" && sha256sum -c --strict SHA256SUMS) || fail "whole SHA256SUMS does not match its wheels"
[ "$(cut -d' ' -f3 "merged/$dir/SHA256SUMS")" = "$(cut -d' ' -f3 "whole/$dir/SHA256SUMS")" ] || fail "SHA256SUMS lists other names"
python3 - merged <<'PY' || fail "the merged manifest, report or index"
import json, os, sys
root = sys.argv[1]
cells = json.load(open(os.path.join(root, "manifest.json")))["cells"]
for cid, c in cells.items():
    assert c["versions"]["torch"].startswith("2.11"), c
    assert c["build_seconds"] > 0, c
report = json.load(open(os.path.join(root, "report.json")))
assert sorted(c["id"] for c in report["cells"]) == sorted(cells), report["cells"]
assert all(c["status"] == "ok" for c in report["cells"]), report["cells"]
index = open(os.path.join(root, "cu130/torch2.11/simple/flash-example/index.html")).read()
for c in cells.values():
    assert os.path.basename(c["wheel"]).replace("+", "%2B") in index, c["wheel"]
summary = open(os.path.join(root, "summary.md")).read()
assert summary.count("| ok |") == 2, summary
print("merged: manifest, report.json, summary.md and the index list both cells")
PY
if [ "$(cat "merged/$dir/SHA256SUMS")" = "$(cat "whole/$dir/SHA256SUMS")" ]; then
  echo "the wheels are byte for byte the same as the whole build's"
else
  echo "the wheels differ in bytes from the whole build's (builds are not reproducible); names, cells and sums agree"
fi
for w in $(files merged); do cmp -s "merged/$w" "shard1/$w" || cmp -s "merged/$w" "shard2/$w" || fail "$w is not its shard's wheel"; done

echo "== an identical duplicate is taken once; merging again changes nothing"
cp -a shard1 shard1-again
"$fabuild" merge shard1 shard1-again shard2 -o merged | tee again.log || fail "merge with an identical duplicate exited $?"
grep -q "taken once: $dir/.*: identical in shard1 and shard1-again" again.log || fail "the duplicate was not reported"
grep -q "wheels      0 copied, 2 already there" again.log || fail "merging again copied something"
[ "$(files merged | wc -l)" -eq 2 ] || fail "the duplicate added a wheel"

echo "== a different wheel under the same name is refused, and nothing is written"
before=$(tree_digest merged)
w311=$(files whole | grep cp311)
if cmp -s "whole/$w311" "merged/$w311"; then
  # Reproducible after all: the whole build's wheel is then an identical duplicate.
  "$fabuild" merge whole -o merged > same.log || fail "identical wheels from two builds were refused"
else
  set +e
  "$fabuild" merge whole -o merged > refused.log 2>&1
  code=$?
  set -e
  cat refused.log
  [ "$code" -eq 1 ] || fail "a conflicting duplicate gave exit $code, not 1"
  grep -q "merge refused, nothing was written to merged" refused.log || fail "no refusal"
  grep -q "merged (already there): sha256 $(sha256sum "merged/$w311" | cut -d' ' -f1)" refused.log || fail "the output's digest is not named"
  grep -q "whole: sha256 $(sha256sum "whole/$w311" | cut -d' ' -f1)" refused.log || fail "the part's digest is not named"
  [ "$(tree_digest merged)" = "$before" ] || fail "the refused merge changed the output"
fi
echo "e2e shard/merge: ok in $(seconds "$start")s"
