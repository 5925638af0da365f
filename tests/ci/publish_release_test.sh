#!/usr/bin/env bash
# scripts/ci/publish-release.sh against a stand-in for gh (tests/ci/fake-gh) that answers as
# GitHub's API does: a new release, a second run that uploads nothing, a wheel rebuilt with other
# bytes (refused, nothing uploaded), assets without a digest (downloaded and hashed), several
# pages of assets, and two wheels of one name.
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
assets() { python3 -c 'import json,sys; print(" ".join(sorted(a["name"] for r in json.load(open(sys.argv[1]))["releases"].values() for a in r["assets"])))' "$work/state/releases.json"; }

house=$work/wheelhouse
wheel "$house/fa2.8.3/torch2.8/cu128/a-cp311.whl" "wheel a"
wheel "$house/fa2.8.3/torch2.8/cu128/b-cp312.whl" "wheel b"
wheel "$house/fa2.8.3/torch2.8/cu126/c-cp312.whl" "wheel c"
wheel "$house/logs/not-a.whl" "logs are not published"
wheel "$house/.staging/x/d.whl" "hidden: not published"

echo "== a new release gets every wheel"
"$publish" nightly-1 "$house" > "$work/out1" || fail "first run exited $?"
cat "$work/out1"
grep -q "creating release nightly-1" "$work/out1" || fail "the release was not created"
grep -q "0 wheel(s) already on nightly-1 with the same sha256, 3 to upload" "$work/out1" || fail "expected 3 uploads"
[ "$(assets)" = "a-cp311.whl b-cp312.whl c-cp312.whl" ] || fail "assets: $(assets)"

echo "== again: nothing to upload (three assets, two pages)"
"$publish" nightly-1 "$house" > "$work/out2" || fail "second run exited $?"
grep -q "3 wheel(s) already on nightly-1 with the same sha256, 0 to upload" "$work/out2" || fail "$(cat "$work/out2")"
[ "$(grep -c 'release upload' "$work/state/calls.log")" -eq 1 ] || fail "uploaded again"

echo "== a wheel rebuilt with other bytes is refused, and the new wheel is not uploaded either"
wheel "$house/fa2.8.3/torch2.8/cu128/b-cp312.whl" "wheel b, rebuilt"
wheel "$house/fa2.8.3/torch2.8/cu126/e-cp313.whl" "wheel e"
if "$publish" nightly-1 "$house" > "$work/out3" 2> "$work/err3"; then fail "a different wheel was accepted"; fi
cat "$work/err3"
grep -q "conflict: b-cp312.whl" "$work/err3" || fail "the conflict is not named"
grep -q "on release nightly-1: sha256 $(printf 'wheel b' | sha256sum | cut -d' ' -f1)" "$work/err3" || fail "the release's digest is not shown"
grep -q "b-cp312.whl: sha256 $(printf 'wheel b, rebuilt' | sha256sum | cut -d' ' -f1)" "$work/err3" || fail "the local digest is not shown"
grep -q "nothing was uploaded" "$work/err3" || fail "no word that nothing was uploaded"
[ "$(assets)" = "a-cp311.whl b-cp312.whl c-cp312.whl" ] || fail "assets changed: $(assets)"

echo "== assets without a digest are downloaded and compared"
wheel "$house/fa2.8.3/torch2.8/cu128/b-cp312.whl" "wheel b"
FAKE_GH_NO_DIGEST=1 "$publish" old-1 "$house" > /dev/null || fail "upload without digests"
"$publish" old-1 "$house" > "$work/out4" || fail "re-run against assets without digest exited $?"
grep -q "4 wheel(s) already on old-1 with the same sha256, 0 to upload" "$work/out4" || fail "$(cat "$work/out4")"
[ "$(grep -c 'Accept: application/octet-stream' "$work/state/calls.log")" -eq 4 ] || fail "expected 4 downloads"
wheel "$house/fa2.8.3/torch2.8/cu126/e-cp313.whl" "wheel e, rebuilt"
if "$publish" old-1 "$house" > /dev/null 2> "$work/err5"; then fail "a different wheel was accepted (no digest)"; fi
grep -q "conflict: e-cp313.whl" "$work/err5" || fail "the conflict without digest is not named"

echo "== two wheels of one name cannot both be release assets"
wheel "$house/fa2.8.3/torch2.8/cu130/a-cp311.whl" "another a"
if "$publish" nightly-2 "$house" > /dev/null 2> "$work/err6"; then fail "two wheels of one name were accepted"; fi
grep -q "two wheels named a-cp311.whl" "$work/err6" || fail "$(cat "$work/err6")"
echo "publish_release_test: ok"
