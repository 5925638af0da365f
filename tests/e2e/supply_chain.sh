#!/usr/bin/env bash
# End to end, the supply chain of a release (docs/security.md), on the example's cell (16
# kernels and its API: 17 compiles), cp312, sm_90, with Debian's nginx as the remote cache:
#   1. a trusted run (GitHub's schedule event) with the signing key, under umask 022, builds the
#      cell and sends its objects and signed row indexes: it PUTs (nginx's access log), the
#      control of step 4's read-only check;
#   2. a pull request's run, in another directory with an empty cache and under umask 0002: its
#      plan says the remote is read-only; its build takes every object from the remote and files
#      a wheel byte for byte the trusted run's (the wheel's modes do not follow the umask);
#   3. a "fork" job that may write but has no key builds the cell with one kernel patched (a
#      marker string in it) and points that kernel's result in the clean row's index at its own
#      object: a valid content-addressed blob, of another object;
#   4. the finishing job, verifying with the public key, refuses that index with one line
#      naming it, compiles the units itself and files a wheel byte for byte the trusted run's
#      (reproducible with no cache: another directory, another cache root); read-only
#      (FABUILD_CACHE_REMOTE_WRITE=false), it PUTs nothing though it compiled all 17 units, whose
#      objects, index and costs a run that writes sends (step 1), and says what it kept local;
#   5. with verification off the same index is used: the marker reaches the filed wheel's
#      module, which shows the check of step 4 can fail;
#   6. `--rebuild-check` on that wheelhouse builds the cell again from the matrix, every unit
#      compiled anew, gets the clean bytes, and names the module that differs (exit 1);
#   7. with no keys at all, every result of the row's indexes pointed at one object: the link
#      fails, the cell evicts what it took from the remote (on probation until a build proves
#      it), builds again without it and files the clean bytes; a run after it with no remote
#      takes all 17 from its now clean cache;
#   8. one result of the row's indexes pointed at its unit's object built for sm_80: the GPU code
#      check fails, the cell evicts what it took and builds again, and the import check started
#      beside the second build waits for its turn (not the first build's go file).
# Needs what tests/e2e/example_build.sh needs, nginx and openssl. FABUILD_SKIP_E2E=1 skips it.
set -euo pipefail
[ "${FABUILD_SKIP_E2E:-}" = 1 ] && { echo "skipped: FABUILD_SKIP_E2E=1"; exit 77; }
fabuild=${1:?usage: supply_chain.sh FABUILD SOURCE_DIR}
src=${2:?}
work=$(mktemp -d /tmp/fabuild-supply.XXXXXX)
# shellcheck source=../support/nginx_dav.sh
. "$src/tests/support/nginx_dav.sh"
trap 'stop_nginx_dav; [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT
fail() { echo "e2e: FAIL: $*"; exit 1; }
start_nginx_dav "$work/nginx"
remote=$NGINX_DAV_URL/cache
openssl genpkey -algorithm ed25519 -out "$work/signing.pem" 2>/dev/null
public=$(openssl pkey -in "$work/signing.pem" -pubout | grep -v -- -----)
cat > "$work/m.yaml" <<YAML
package: flash-example
versions: ["0.1.0"]
torch: ["2.11"]
cuda: ["13.0"]
python: [cp312]
archs: "90"
provision: host
source: {path: $src/examples/flash_example}
YAML
# The fork's change: a string in one kernel's object, which no check of the wheel looks for.
kernel=csrc/flash_example/src/flash_fwd_hdim64_fp16_sm80.cu
mkdir -p "$work/poison/a/$(dirname $kernel)" "$work/poison/b/$(dirname $kernel)"
cp "$src/examples/flash_example/$kernel" "$work/poison/a/$kernel"
sed 's/^namespace flash_example {$/&\n__attribute__((used)) static const char kPoison[] = "poisoned by a fork";/' \
  "$src/examples/flash_example/$kernel" > "$work/poison/b/$kernel"
(cd "$work/poison" && diff -u "a/$kernel" "b/$kernel" > "$work/poison.patch") && fail "the patch changes nothing"
{ cat "$work/m.yaml"; echo 'patches: {"0.1.0": [poison.patch]}'; } > "$work/fork.yaml"
wheel_of() { find "$1" -name '*.whl' -path '*torch2.11*' | head -1; }
# Whether a wheel's module holds the fork's marker (read whole: grep -q would cut the pipe short).
poisoned() { unzip -p "$1" '*.so' > "$work/module.so" && grep -aq "poisoned by a fork" "$work/module.so"; }
puts() { grep -c "\"PUT ${1:-}" "$work/nginx/access.log" || true; }  # all, or those under a path
ci() { env -u GITHUB_EVENT_PATH GITHUB_ACTIONS=true GITHUB_EVENT_NAME="$1" FABUILD_CACHE_REMOTE="$remote" "${@:2}"; }

echo "== 1. the trusted run signs what it sends"
mkdir -p "$work/t" && cd "$work/t"
(umask 022 && ci schedule FABUILD_CACHE_SIGNING_KEY="$(cat "$work/signing.pem")" \
  "$fabuild" "$work/m.yaml" -o house --cache-dir objects) | tee run.log || fail "the trusted run exited $?"
# The control of step 4: a run that may write and compiles sends objects and its row's index.
[ "$(puts /cache/cas/)" -gt 0 ] && [ "$(puts /cache/ac/)" -gt 0 ] ||
  fail "the trusted run PUT $(puts /cache/cas/) objects and $(puts /cache/ac/) indexes"
python3 - house/report.json <<'PY' || fail "the trusted run's report.json does not say it writes"
import json, sys
r = json.load(open(sys.argv[1]))["remote_cache"]
assert r["write"] is True and "trusted, a schedule run on GitHub Actions" in r["why"] and r["sent"] > 0, r
PY
clean=$(wheel_of "$work/t/house")
[ -f "$clean" ] || fail "no wheel from the trusted run"
grep -rl '"signature"' "$work/nginx/data/cache/ac" > /dev/null || fail "no signed row index on the remote"

echo "== 2. a pull request reads the remote, writes nothing, and gets the same bytes"
mkdir -p "$work/p" && cd "$work/p"
ci pull_request FABUILD_CACHE_VERIFY_KEYS="$public" "$fabuild" "$work/m.yaml" --dry-run -o house > plan.log ||
  fail "the pull request's plan exited $?"
grep -q "remote cache read-only: untrusted, a pull_request run on GitHub Actions" plan.log ||
  { cat plan.log; fail "the pull request's plan does not say the remote is read-only"; }
(umask 0002 && ci pull_request FABUILD_CACHE_VERIFY_KEYS="$public" "$fabuild" "$work/m.yaml" -o house --cache-dir objects) |
  tee run.log || fail "the pull request's build exited $?"
grep -q "^17 of 17 compiles from the cache" run.log || fail "the pull request's build compiled something"
grep -q "read-only: untrusted, a pull_request run .*none sent" run.log || fail "the run's summary does not say it sent nothing"
cmp "$clean" "$(wheel_of "$work/p/house")" ||
  fail "the pull request's wheel (umask 0002) is not the trusted run's (umask 022), byte for byte"
python3 - "$work/p/house/report.json" <<'PY' || fail "report.json's remote_cache"
import json, sys
r = json.load(open(sys.argv[1]))["remote_cache"]
assert r["write"] is False and "pull_request" in r["why"] and r["sent"] == 0, r
assert "only indexes signed by key" in r["trust"], r
PY

echo "== 3. a fork job with write access and no key poisons one kernel of the clean row"
mkdir -p "$work/f" && cd "$work/f"
ci push FABUILD_CACHE_REMOTE_WRITE=true "$fabuild" "$work/fork.yaml" -o house --cache-dir objects > run.log ||
  fail "the fork's patched build exited $?"
python3 - "$work/t/objects" "$work/f/objects" "$work/nginx/data/cache/ac" "$remote" <<'PY' || fail "the poisoned index"
import glob, hashlib, json, os, sys, urllib.request
clean_cache, fork_cache, ac, remote = sys.argv[1:]
def results(cache):  # each compile's source, by its sha256 -> its result key
    out = {}
    for m in glob.glob(os.path.join(cache, "manifests", "*", "*")):
        for e in json.load(open(m))["entries"]:
            out[dict(e["deps"]).get("@SOURCE@")] = e["result"]
    return out
clean, fork = results(clean_cache), results(fork_cache)
(theirs,), (mine,) = set(clean) - set(fork), set(fork) - set(clean)  # the patched kernel, before and after
path = f"results/{clean[theirs][:2]}/{clean[theirs][2:]}"
blob = open(os.path.join(fork_cache, "results", fork[mine][:2], fork[mine][2:]), "rb").read()
assert b"poisoned by a fork" in blob, "the patched object lacks its marker"
for f in glob.glob(os.path.join(ac, "*")):
    index = json.load(open(f))
    if path in index.get("objects", {}):
        index["objects"][path] = hashlib.sha256(blob).hexdigest()  # the old signature stays: it no longer holds
        req = urllib.request.Request(f"{remote}/ac/{os.path.basename(f)}", data=json.dumps(index).encode(), method="PUT")
        urllib.request.urlopen(req).read()
        print(f"poisoned {os.path.basename(f)[:16]}...: {path} -> the patched object {hashlib.sha256(blob).hexdigest()[:16]}...")
        break
else:
    sys.exit("no index of the clean row lists " + path)
PY

echo "== 4. the finishing job refuses the index, compiles, and files the clean bytes"
mkdir -p "$work/v" && cd "$work/v"
before=$(puts)
ci schedule FABUILD_CACHE_REMOTE_WRITE=false FABUILD_CACHE_VERIFY_KEYS="$public" \
  "$fabuild" "$work/m.yaml" -o house --cache-dir objects | tee run.log || fail "the finishing job exited $?"
grep -q "^0 of 17 compiles from the cache" run.log || fail "the finishing job did not compile every unit"
[ "$(puts)" = "$before" ] || fail "the read-only finishing job PUT $(( $(puts) - before )) times"
grep -q "read-only: FABUILD_CACHE_REMOTE_WRITE is false; [1-9][0-9]* objects kept local (.*), none sent" run.log ||
  fail "the read-only run does not say what it kept local"
grep -q "row index refused (not signed by an accepted key: compiled here)" run.log || fail "the summary does not count the refused index"
grep -h "refused the row index" house/logs/*.log | tee refused.log
[ "$(wc -l < refused.log)" -eq 1 ] || fail "expected one line naming the refused index"
grep -q "writer cp312): its signature by key [0-9a-f]\{16\} does not verify for this row and writer" refused.log ||
  fail "the refusal does not say why"
cmp "$clean" "$(wheel_of "$work/v/house")" || fail "the finishing job's wheel is not the clean build's, byte for byte"

poisoned "$(wheel_of "$work/v/house")" && fail "the refused object reached the wheel"

echo "== 5. with verification off the same index is used (what step 4 stops)"
mkdir -p "$work/o" && cd "$work/o"
ci schedule FABUILD_CACHE_REMOTE_WRITE=false "$fabuild" "$work/m.yaml" -o house --cache-dir objects > run.log ||
  fail "the unverified build exited $?"
grep -q "^17 of 17 compiles from the cache" run.log || fail "without verification the poisoned index was not used"
poisoned "$(wheel_of "$work/o/house")" || fail "the poisoned object did not reach the wheel"
echo "without verification: 17 of 17 from the cache, and the filed wheel's module holds the fork's marker"

echo "== 6. --rebuild-check finds the poisoned wheel: built again from the matrix, its module differs"
rc=0
ci schedule FABUILD_CACHE_REMOTE_WRITE=false "$fabuild" "$work/m.yaml" -o house --rebuild-check > check.log || rc=$?
grep "^rebuild-check:" check.log
[ "$rc" -eq 1 ] || fail "--rebuild-check of the poisoned wheel exited $rc, not 1"
grep -q "^rebuild-check: example0.1.0-torch2.11-cu130-cp312-linux_x86_64: differs .*flash_example_cuda[^ ]*\.so (" check.log ||
  fail "--rebuild-check does not name the module that differs"
python3 - house/.rebuild-check <<'PY' || fail "the rebuilt wheel is not the clean one"
import json, sys
cells = json.load(open(sys.argv[1] + "/manifest.json"))["cells"]
print("rebuilt:", [c["sha256"][:16] for c in cells.values()])
PY
[ "$(sha256sum < "$(wheel_of "$work/o/house/.rebuild-check")" | cut -d' ' -f1)" = "$(sha256sum < "$clean" | cut -d' ' -f1)" ] ||
  fail "the rebuilt wheel is not the clean build's"
echo "== 7. an index pointing every result at one object: the link fails, the cell builds again without them"
python3 - "$work/nginx/data/cache/ac" "$remote" <<'PY' || fail "the one-object index"
import glob, json, os, sys, urllib.request
ac, remote = sys.argv[1:]
changed = 0
for f in sorted(glob.glob(os.path.join(ac, "*"))):
    index = json.load(open(f))
    objects = index.get("objects", {})
    results = sorted(p for p in objects if p.startswith("results/"))
    if len(results) < 2:
        continue
    for p in results:
        objects[p] = objects[results[0]]
    req = urllib.request.Request(f"{remote}/ac/{os.path.basename(f)}", data=json.dumps(index).encode(), method="PUT")
    urllib.request.urlopen(req).read()
    changed += 1
print(f"{changed} indexes now point every result at one object")
assert changed > 0
PY
mkdir -p "$work/q" && cd "$work/q"
rc=0
ci schedule FABUILD_CACHE_REMOTE_WRITE=false "$fabuild" "$work/m.yaml" -o house --cache-dir objects > run.log || rc=$?
[ "$rc" -eq 0 ] || { cat run.log; fail "the build with the one-object index exited $rc"; }
grep "^object cache: 1 cell failed with objects taken from the remote" run.log ||
  { cat run.log; fail "the summary does not say the cell was built again"; }
grep -q "ok the second time" run.log || fail "the summary does not say the second build went well"
grep -q "multiple definition" house/logs/*.log || fail "the first link did not fail as expected"
grep -q "fabuild: going back to step build" house/logs/*.log || fail "the log does not say the cell went back"
cmp "$clean" "$(wheel_of "$work/q/house")" || fail "the wheel built again is not the clean build's, byte for byte"
[ -z "$(find objects/probation -type f -size +0 2>/dev/null)" ] || fail "objects stayed on probation"
env -u FABUILD_CACHE_REMOTE "$fabuild" "$work/m.yaml" -o house2 --cache-dir objects > again.log ||
  fail "the run without the remote exited $?"
grep -q "^17 of 17 compiles from the cache" again.log || fail "the run without the remote did not take all 17 from the cache"
cmp "$clean" "$(wheel_of "$work/q/house2")" || fail "the run without the remote filed other bytes"

echo "== 8. one result pointed at its unit's sm_80 object: the GPU code check sends the cell back to build"
# One kernel compiled for sm_80 (a compile share of 1 unit: the cheapest way to get one), and a
# cache of the clean objects less that kernel's: the build takes that one from the remote.
mkdir -p "$work/a80" && cd "$work/a80"
ci push FABUILD_CACHE_REMOTE_WRITE=true "$fabuild" "$work/m.yaml" --set archs=80 --compile-share 1/16 \
  --share-costs none -o house --cache-dir objects > run.log || { cat run.log; fail "the sm_80 compile share exited $?"; }
mkdir -p "$work/w" && cd "$work/w"
cp -a "$work/t/objects" objects
python3 - "$work/t/objects" "$work/a80/objects" objects "$work/nginx/data/cache/ac" "$remote" <<'PY' || fail "the sm_80 index"
import glob, hashlib, json, os, sys, urllib.request
clean_cache, sm80_cache, mine, ac, remote = sys.argv[1:]
def results(cache):  # each compile's source, by its sha256 -> its result key
    out = {}
    for m in glob.glob(os.path.join(cache, "manifests", "*", "*")):
        for e in json.load(open(m))["entries"]:
            out[dict(e["deps"]).get("@SOURCE@")] = e["result"]
    return out
clean, sm80 = results(clean_cache), results(sm80_cache)
src = next(s for s in sorted(sm80) if s in clean and sm80[s] != clean[s])
key, wrong = clean[src], sm80[src]
path = f"results/{key[:2]}/{key[2:]}"
os.remove(os.path.join(mine, path))  # taken from the remote, then
sha = hashlib.sha256(open(os.path.join(sm80_cache, "results", wrong[:2], wrong[2:]), "rb").read()).hexdigest()
changed = 0
for f in sorted(glob.glob(os.path.join(ac, "*"))):
    index = json.load(open(f))
    if path not in index.get("objects", {}):
        continue
    index["objects"][path] = sha
    req = urllib.request.Request(f"{remote}/ac/{os.path.basename(f)}", data=json.dumps(index).encode(), method="PUT")
    urllib.request.urlopen(req).read()
    changed += 1
print(f"{changed} indexes of the sm_90 row point {path[:20]}... at its unit's sm_80 object {sha[:16]}...")
assert changed > 0
PY
rc=0
ci schedule FABUILD_CACHE_REMOTE_WRITE=false "$fabuild" "$work/m.yaml" -o house --cache-dir objects > run.log || rc=$?
[ "$rc" -eq 0 ] || { cat run.log; fail "the build with the sm_80 object exited $rc"; }
grep "^object cache: 1 cell failed" run.log | grep -q "(archs: ok the second time)" ||
  { cat run.log; fail "the summary does not say the GPU code check sent the cell back and the second build went well"; }
grep -q "and sm_80 it was not asked for" house/logs/*.log || fail "the log does not say the module held sm_80 code"
[ "$(grep -c "step import, started beside build" house/logs/*.log)" -eq 2 ] || fail "the import did not start beside both builds"
cmp "$clean" "$(wheel_of "$work/w/house")" || fail "the wheel built again is not the clean build's, byte for byte"
echo "e2e: supply chain ok"
