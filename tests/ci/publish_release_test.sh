#!/usr/bin/env bash
# scripts/ci/publish-release.sh against a stand-in for gh (tests/ci/fake-gh) that answers as
# GitHub's API does: a new release gets the wheels, their build records and one SHA256SUMS that
# checks them; a second run uploads nothing; a record rewritten by another run stays as the
# release has it; a record that comes later goes up alone; a wheel rebuilt with other bytes is
# refused, nothing uploaded; assets without a digest (downloaded and hashed); several pages of
# assets; and two wheels of one name.
# Usage: publish_release_test.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: publish_release_test.sh SOURCE_DIR}
work=$(mktemp -d /tmp/fabuild-publish.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/state"
cp "$src/tests/ci/fake-gh" "$work/bin/gh"
export PATH="$work/bin:$PATH" FAKE_GH_STATE="$work/state" GITHUB_REPOSITORY=owner/wheels
publish="$src/scripts/ci/publish-release.sh"
fail() { echo "publish_release_test: FAIL: $*"; exit 1; }
wheel() { mkdir -p "$(dirname "$1")"; printf '%s' "$2" > "$1"; }
assets() { python3 -c 'import json,sys; print(" ".join(sorted(a["name"] for a in json.load(open(sys.argv[1]))["releases"][sys.argv[2]]["assets"])))' "$work/state/releases.json" nightly-1; }
# Downloads every asset of a release into a directory, as a user would.
download() {
  rm -rf "$2" && mkdir -p "$2"
  python3 - "$work/state" "$1" "$2" <<'PY'
import json, shutil, sys
state, tag, out = sys.argv[1:]
for a in json.load(open(f"{state}/releases.json"))["releases"][tag]["assets"]:
    shutil.copyfile(f"{state}/asset-{a['id']}", f"{out}/{a['name']}")
PY
}
uploads() { grep -c 'release upload' "$work/state/calls.log" || true; }

house=$work/wheelhouse
cu128=$house/fa2.8.3/torch2.8/cu128
wheel "$cu128/a-cp311.whl" "wheel a"
wheel "$cu128/a-cp311.whl.build.json" '{"ci": {"run_id": "1"}, "wheel": "a"}'
wheel "$cu128/b-cp312.whl" "wheel b"
wheel "$cu128/b-cp312.whl.build.json" '{"ci": {"run_id": "1"}, "wheel": "b"}'
wheel "$house/fa2.8.3/torch2.8/cu126/c-cp312.whl" "wheel c"  # filed before fabuild wrote records
wheel "$house/logs/not-a.whl" "logs are not published"
wheel "$house/.staging/x/d.whl" "hidden: not published"

echo "== a new release gets every wheel, its build record and one SHA256SUMS"
"$publish" nightly-1 "$house" > "$work/out1" || fail "first run exited $?"
cat "$work/out1"
grep -q "creating release nightly-1" "$work/out1" || fail "the release was not created"
grep -q "0 wheel(s) already on nightly-1 with the same sha256, 3 to upload" "$work/out1" || fail "expected 3 uploads"
grep -q "2 build record(s) to upload beside them" "$work/out1" || fail "expected 2 records"
[ "$(assets)" = "SHA256SUMS a-cp311.whl a-cp311.whl.build.json b-cp312.whl b-cp312.whl.build.json c-cp312.whl" ] ||
  fail "assets: $(assets)"
download nightly-1 "$work/got"
(cd "$work/got" && sha256sum -c SHA256SUMS) || fail "SHA256SUMS does not check the assets"
[ "$(wc -l < "$work/got/SHA256SUMS")" -eq 5 ] || fail "SHA256SUMS should list 3 wheels and 2 records: $(cat "$work/got/SHA256SUMS")"

echo "== again: nothing to upload (six assets, three pages)"
before=$(uploads)
"$publish" nightly-1 "$house" > "$work/out2" || fail "second run exited $?"
grep -q "3 wheel(s) already on nightly-1 with the same sha256, 0 to upload" "$work/out2" || fail "$(cat "$work/out2")"
grep -q "SHA256SUMS on nightly-1 already lists them" "$work/out2" || fail "$(cat "$work/out2")"
[ "$(uploads)" -eq "$before" ] || fail "uploaded again"

echo "== the same wheels from another run (records naming it): the release keeps its records"
wheel "$cu128/a-cp311.whl.build.json" '{"ci": {"run_id": "2"}, "wheel": "a"}'
wheel "$house/fa2.8.3/torch2.8/cu126/c-cp312.whl.build.json" '{"ci": {"run_id": "2"}, "wheel": "c"}'
"$publish" nightly-1 "$house" > "$work/out3" || fail "a run with other records exited $?"
grep -q "1 build record(s) to upload beside them" "$work/out3" || fail "only c's record is new: $(cat "$work/out3")"
[ "$(assets)" = "SHA256SUMS a-cp311.whl a-cp311.whl.build.json b-cp312.whl b-cp312.whl.build.json c-cp312.whl c-cp312.whl.build.json" ] ||
  fail "assets: $(assets)"
download nightly-1 "$work/got"
grep -q '"run_id": "1"' "$work/got/a-cp311.whl.build.json" || fail "a's record on the release was replaced"
(cd "$work/got" && sha256sum -c SHA256SUMS) || fail "SHA256SUMS does not check the assets after the record came"
[ "$(wc -l < "$work/got/SHA256SUMS")" -eq 6 ] || fail "SHA256SUMS should list c's record too"
wheel "$cu128/a-cp311.whl.build.json" '{"ci": {"run_id": "1"}, "wheel": "a"}'

echo "== a wheel rebuilt with other bytes is refused, and the new wheel is not uploaded either"
wheel "$cu128/b-cp312.whl" "wheel b, rebuilt"
wheel "$house/fa2.8.3/torch2.8/cu126/e-cp313.whl" "wheel e"
if "$publish" nightly-1 "$house" > "$work/out4" 2> "$work/err4"; then fail "a different wheel was accepted"; fi
cat "$work/err4"
grep -q "conflict: b-cp312.whl" "$work/err4" || fail "the conflict is not named"
grep -q "on release nightly-1: sha256 $(printf 'wheel b' | sha256sum | cut -d' ' -f1)" "$work/err4" || fail "the release's digest is not shown"
grep -q "b-cp312.whl: sha256 $(printf 'wheel b, rebuilt' | sha256sum | cut -d' ' -f1)" "$work/err4" || fail "the local digest is not shown"
grep -q "nothing was uploaded" "$work/err4" || fail "no word that nothing was uploaded"
[ "$(assets)" = "SHA256SUMS a-cp311.whl a-cp311.whl.build.json b-cp312.whl b-cp312.whl.build.json c-cp312.whl c-cp312.whl.build.json" ] ||
  fail "assets changed: $(assets)"

echo "== a new wheel joins the release: SHA256SUMS keeps the earlier lines and adds it"
wheel "$cu128/b-cp312.whl" "wheel b"
mv "$cu128/a-cp311.whl" "$work/a-aside.whl"  # not in this wheelhouse: its line stays
"$publish" nightly-1 "$house" > "$work/out5" || fail "a run with a new wheel exited $?"
mv "$work/a-aside.whl" "$cu128/a-cp311.whl"
download nightly-1 "$work/got"
(cd "$work/got" && sha256sum -c SHA256SUMS) || fail "SHA256SUMS does not check the assets with e"
[ "$(wc -l < "$work/got/SHA256SUMS")" -eq 7 ] || fail "SHA256SUMS should list a, its record and e: $(cat "$work/got/SHA256SUMS")"
[ "$(assets | tr ' ' '\n' | grep -c '^SHA256SUMS$')" -eq 1 ] || fail "more than one SHA256SUMS"

echo "== assets without a digest are downloaded and compared"
FAKE_GH_NO_DIGEST=1 "$publish" old-1 "$house" > /dev/null || fail "upload without digests"
before=$(grep -c 'Accept: application/octet-stream' "$work/state/calls.log")
"$publish" old-1 "$house" > "$work/out6" || fail "re-run against assets without digest exited $?"
grep -q "4 wheel(s) already on old-1 with the same sha256, 0 to upload" "$work/out6" || fail "$(cat "$work/out6")"
# 4 wheels and 3 records hashed, and the release's SHA256SUMS read.
[ "$(( $(grep -c 'Accept: application/octet-stream' "$work/state/calls.log") - before ))" -eq 8 ] || fail "expected 8 downloads"
wheel "$house/fa2.8.3/torch2.8/cu126/e-cp313.whl" "wheel e, rebuilt"
if "$publish" old-1 "$house" > /dev/null 2> "$work/err7"; then fail "a different wheel was accepted (no digest)"; fi
grep -q "conflict: e-cp313.whl" "$work/err7" || fail "the conflict without digest is not named"

echo "== two wheels of one name cannot both be release assets"
wheel "$house/fa2.8.3/torch2.8/cu130/a-cp311.whl" "another a"
if "$publish" nightly-2 "$house" > /dev/null 2> "$work/err8"; then fail "two wheels of one name were accepted"; fi
grep -q "two wheels named a-cp311.whl" "$work/err8" || fail "$(cat "$work/err8")"
echo "publish_release_test: ok"
