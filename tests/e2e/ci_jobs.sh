#!/usr/bin/env bash
# The nightly's job graph for a row split into compile shares, run here as fresh runners would
# run it (scripts/ci/run-jobs.py: each job its own fabuild cache, object cache, Python
# environments and wheelhouse; the remote object cache and the download caches shared), with
# real builds of the example package (real nvcc, torch, pip). The matrix is matrix/example.yaml
# with `ci: {compile_shares: 4}`, cp311 and cp312, and the remote is Debian's nginx with WebDAV
# PUT on 127.0.0.1, started by run-jobs.py (--remote) and given to every job as the workflow's
# secret would be. The jobs are runner-shaped, on this 2-core box: two at once, each confined to
# one core of its own and 7 GB (run-jobs.py --parallel 2 --cores 1 --memory-gb 7), and each job's
# fabuild sees one core.
#   - the plan: 4 compile entries (shares 1/4..4/4) then 1 build entry (the finishing job) for the
#     row, and with no remote set, no shares at all;
#   - each share files no wheel, says it compiled its share, and between them the shares compiled
#     each of the 16 kernel units exactly once (their recorded unit costs name what they compiled);
#   - the finishing job compiles no kernel (every compile it missed is api.cpp, built per Python
#     tag), and its two wheels, verified and imported before they were filed, are merged;
#   - every job recorded its setup (FABUILD_JOB_STARTED to its first compile) in the row's
#     record, and the next plan, from the remote alone, times the row's jobs by them;
#   - a share run again on a fresh runner takes back what it sent (its own units, not the whole
#     row) from the remote and compiles nothing;
#   - a share whose remote is down (a closed port) still compiles its units, but fails (its work
#     did not reach the finishing job), and its log says the remote failed.
# Needs what tests/e2e/example_build.sh needs, and nginx. FABUILD_SKIP_E2E=1 skips it (exit 77).
# Usage: ci_jobs.sh FABUILD SOURCE_DIR
set -euo pipefail
[ "${FABUILD_SKIP_E2E:-}" = 1 ] && { echo "skipped: FABUILD_SKIP_E2E=1"; exit 77; }
fabuild=${1:?usage: ci_jobs.sh FABUILD SOURCE_DIR}
src=${2:?}
work=$(mktemp -d /tmp/fabuild-ci-jobs.XXXXXX)
# shellcheck source=../support/nginx_dav.sh
. "$src/tests/support/nginx_dav.sh"
trap 'rm -rf "$work"' EXIT
cd "$work"
# The plan needs a remote to plan shares; the jobs get run-jobs.py's own nginx (--remote), which
# serves $work/remote to each run of the script in turn.
export FABUILD_CACHE_REMOTE=http://127.0.0.1:$(free_port)/cache
fail() { echo "e2e: FAIL: $*"; exit 1; }
seconds() { echo $(( $(date +%s) - $1 )); }
run_jobs=$src/scripts/ci/run-jobs.py
cells=example0.1.0-torch2.11-cu130-cp311-linux_x86_64,example0.1.0-torch2.11-cu130-cp312-linux_x86_64
sed -e "s#source: {path: ../examples/flash_example}#source: {path: $src/examples/flash_example}#" \
  "$src/matrix/example.yaml" > m.yaml
grep -q "^source: {path: $src/examples/flash_example}" m.yaml || fail "matrix/example.yaml names its source otherwise now"
echo 'ci: {compile_shares: 4}' >> m.yaml
# entry_json FILE K: a plan of the K-th (1-based) entry of jobs.json alone.
entry_json() { python3 -c 'import json,sys; print(json.dumps({"include": [json.load(open("jobs.json"))["include"][int(sys.argv[1]) - 1]]}))' "$2" > "$1"; }
start=$(date +%s)

echo "== the plan"
# Its own fabuild cache: no unit costs recorded on this machine weigh in.
FABUILD_CACHE_DIR=$work/plan-cache "$fabuild" m.yaml --python cp311,cp312 --ci-matrix github > jobs.json 2> plan.log ||
  { cat plan.log; fail "--ci-matrix github exited $?"; }
FABUILD_CACHE_DIR=$work/plan-cache env -u FABUILD_CACHE_REMOTE "$fabuild" m.yaml --python cp311,cp312 \
  --ci-matrix github > jobs-no-remote.json 2>> plan.log || { cat plan.log; fail "--ci-matrix github without a remote exited $?"; }
python3 - "$cells" <<'PY' || { cat plan.log; fail "the plan"; }
import json, shlex, sys
cells = sys.argv[1]
jobs = json.load(open("jobs.json"))["include"]
stages = [j.get("stage") for j in jobs]
assert stages == ["compile"] * 4 + ["build"], f"expected 4 compile entries then 1 build entry: {stages}"
for k, j in enumerate(jobs[:4], start=1):
    # No record of the row on the remote yet: every share (and a re-run of one) splits by the guess.
    assert shlex.split(j["args"]) == ["--only", cells, "--compile-share", f"{k}/4", "--share-costs", "none"], j
    assert j["shares"] == 4 and j["only"] == cells and j["rows"] == 1, j
    assert not j["artifact"].startswith("wheelhouse-"), f"the merge would take a share's logs: {j}"
build = jobs[4]
assert shlex.split(build["args"]) == ["--only", cells], build
assert build["shares"] == 4 and build["cells"] == 2 and build["artifact"].startswith("wheelhouse-"), build
assert len({j["artifact"] for j in jobs}) == 5, "artifact names are not unique"
# Shares need a remote: without one the row is one ordinary job.
plain = json.load(open("jobs-no-remote.json"))["include"]
assert [j.get("stage", "build") for j in plain] == ["build"], plain
assert shlex.split(plain[0]["args"]) == ["--only", cells], plain
print("plan: shares 1/4..4/4 (stage compile), then the finishing job (stage build, shares 4); no remote: 1 job")
PY

echo "== the job graph (scripts/ci/run-jobs.py)"
s=$(date +%s)
# Runner-sized jobs on this 2-core box: two at once, one core and 7 GB each.
"$run_jobs" --parallel 2 --cores 1 --memory-gb 7 --remote "nginx:$work/remote" "$fabuild" m.yaml jobs.json run |
  tee run.log || fail "run-jobs.py exited $?"
grep -Eq "^jobs     5, 2 at once, 1 cores and 7 GB a job, by (systemd|cgroup v1|taskset)" run.log ||
  fail "run-jobs.py does not say how it confined its jobs: $(grep '^jobs' run.log)"
remote=$(sed -n 's/^remote   nginx \(http[^ ]*\) .*/\1/p' run.log)
[ -n "$remote" ] || fail "run-jobs.py started no nginx"
echo "job graph: $(seconds "$s")s"

echo "== the shares, the finishing job and the merge"
python3 - "$src/examples/flash_example" run <<'PY' || fail "the job graph's results"
import csv, glob, json, os, re, sys
tree, run = sys.argv[1], sys.argv[2]
kernels = {os.path.relpath(p, tree) for p in glob.glob(os.path.join(tree, "**", "*.cu"), recursive=True)}
assert len(kernels) == 16, f"the example has {len(kernels)} kernel units, not 16"
jobs = list(csv.DictReader(open(os.path.join(run, "jobs.tsv")), delimiter="\t"))
assert [(j["stage"], j["exit"]) for j in jobs] == [("compile", "0")] * 4 + [("build", "0"), ("merge", "0")], jobs
for j in jobs[:5]:  # each job in its own 1-core shape: its own fabuild saw one core
    out = open(os.path.join(j["dir"], "out.log")).read()
    assert "budget 1 cores" in out or "budget 1 core" in out, f"job {j['n']} did not run in one core: " + out[:300]
    assert float(j["cpu_seconds"]) > 0, j
    if j["confined_by"] in ("cgroup v1", "cgroup v2"):
        assert 0 < float(j["peak_mb"]) < 7 * 1024, j
    assert int(j["disk_peak_mb"]) > 0 and float(j["start_s"]) >= 0, j  # its directory's most, sampled
assert float(jobs[4]["start_s"]) >= max(float(j["start_s"]) + float(j["seconds"]) for j in jobs[:4]) - 1, jobs
print("jobs:", [(j["n"], j["seconds"], j["cpu_seconds"], j["peak_mb"], j["disk_peak_mb"], j["confined_by"]) for j in jobs[:5]])
summary = re.compile(r"^compile share (\d+)/4 of (\S+): (\d+) compiled \(its share: (\d+) kernel units\), (\d+) from "
                     r"the cache, (\d+) left to other shares; (\d+) files sent to the remote while compiling; "
                     r"no wheel filed", re.M)
compiled_by = {}  # unit -> the shares that compiled it
for k, job in enumerate(jobs[:4], start=1):
    d = job["dir"]
    out = open(os.path.join(d, "out.log")).read()
    wheels = glob.glob(os.path.join(d, "part", "**", "*.whl"), recursive=True)
    assert not wheels, f"share {k}/4 filed wheels: {wheels}"
    assert not os.path.exists(os.path.join(d, "part", "manifest.json")), f"share {k}/4 wrote a manifest"
    found = summary.findall(out)
    assert len(found) == 1, f"share {k}/4: no (or more than one) summary line:\n{out}"
    share, cell, compiled, units, hits, left, sent = found[0]
    compiled, units, hits, left, sent = map(int, (compiled, units, hits, left, sent))
    assert int(share) == k and cell.endswith("-cp311-linux_x86_64"), found
    assert units == 4, f"share {k}/4 was given {units} kernel units, not 4 of 16"
    # A compile neither stored nor a placeholder (uncacheable, a cache error) is in no count of the
    # summary: its object never reaches the remote, and the finishing job compiles it again.
    assert compiled + hits + left == 17, (
        f"share {k}/4: {compiled} compiled + {hits} hits + {left} placeholders is not the cell's 17 compiles: "
        f"{17 - compiled - hits - left} were not stored (uncacheable or a cache error), which its summary does not say")
    assert sent >= compiled > 0, f"share {k}/4 compiled {compiled} and sent {sent} files while compiling"
    logs = glob.glob(os.path.join(d, "part", "logs", "example*.log"))
    assert len(logs) == 1, logs
    log = open(logs[0]).read()
    assert f"fabuild: compile share {k}/4: 4 of the 16 kernel units" in log, f"share {k}/4's log does not name its share"
    assert "remote cache: note:" not in log, f"share {k}/4 had trouble with the remote: " + \
        "".join(l for l in log.splitlines(True) if "remote cache: note:" in l)
    # What it compiled, by name: the unit costs it recorded for its share (one entry a compile).
    record = glob.glob(os.path.join(d, "cache", "costs", f"*.share{k}.json"))
    assert len(record) == 1, f"share {k}/4 recorded no unit costs: {record}"
    units_done = set(json.load(open(record[0]))["units"])
    assert len(units_done) == compiled, f"share {k}/4 says {compiled} compiled, its record names {sorted(units_done)}"
    mine = units_done & kernels
    assert len(mine) == 4, f"share {k}/4 compiled {len(mine)} kernel units, not its 4: {sorted(mine)}"
    for u in units_done:
        compiled_by.setdefault(u, []).append(k)
    others = sorted(units_done - kernels)
    print(f"share {k}/4: {compiled} compiled ({', '.join(sorted(os.path.basename(u) for u in mine))}"
          f"{'; also ' + ', '.join(others) if others else ''}), {hits} from the cache, {left} left, {sent} files sent")
twice = {u: s for u, s in compiled_by.items() if len(s) > 1}
assert not twice, f"units compiled by more than one share: {twice}"
missing = kernels - set(compiled_by)
assert not missing, f"kernel units no share compiled: {sorted(missing)}"
print(f"the 4 shares compiled each of the 16 kernel units once")

# The finishing job: every kernel from the remote; the only compiles are api.cpp, one a tag.
d = jobs[4]["dir"]
out = open(os.path.join(d, "out.log")).read()
total = re.search(r"^(\d+) of (\d+) compiles from the cache", out, re.M)
# What the job's logs say of the remote and of each compile it did not take from the cache.
said = [l for l in out.splitlines() if l.startswith("remote cache")]
for py in ("cp311", "cp312"):
    log = open(os.path.join(d, "part", "logs", f"example0.1.0-torch2.11-cu130-{py}-linux_x86_64.log")).read()
    said += [f"{py}: {l}" for l in log.splitlines()
             if re.match(r"fabuild: (remote cache|object cache: (miss|error|uncacheable))", l)]
assert total and (int(total.group(1)), int(total.group(2))) == (32, 34), \
    f"the finishing job: {total.group(0) if total else 'no tally'} (32 of 34 expected: api.cpp once a tag); " + \
    "its logs say:\n  " + "\n  ".join(said)
for py in ("cp311", "cp312"):
    log = open(os.path.join(d, "part", "logs", f"example0.1.0-torch2.11-cu130-{py}-linux_x86_64.log")).read()
    tally = re.findall(r"^fabuild: object cache: (\d+) of (\d+) compiles from the cache$", log, re.M)
    assert len(tally) == 1, f"{py}: {tally}"
    hits, compiles = map(int, tally[0])
    not_hits = [l for l in re.findall(r"^fabuild: object cache: (.*)$", log, re.M) if not re.match(r"\d+ of \d+ compiles", l)]
    assert compiles == 17 and hits + len(not_hits) == compiles, f"{py}: {hits} of {compiles}, not hits: {not_hits}"
    bad = [l for l in not_hits if not re.match(r"miss \S*/csrc/flash_example/api\.cpp: ", l)]
    assert not bad, f"{py}: the finishing job compiled more than api.cpp: {bad}"
    for step in ("cache-fetch", "build", "verify", "import"):
        assert f"fabuild: step {step} took" in log, f"{py}: no {step} step in its log"
    print(f"finishing job, {py}: {hits} of {compiles} compiles from the cache; compiled: "
          f"{', '.join(os.path.basename(l.split(':')[0].split()[1]) for l in not_hits) or 'nothing'}")
PY
merged=run/merged
grep -q "wheels      2 copied, 0 already there" run.log || fail "the merge did not copy the finishing job's two wheels"
[ "$(find "$merged" -name '*.whl' | wc -l)" -eq 2 ] || fail "the merged wheelhouse does not hold 2 wheels: $(find "$merged" -name '*.whl')"
for py in cp311 cp312; do
  [ -f "$merged/example0.1.0/torch2.11/cu130/flash_example-0.1.0+cu130torch2.11cxx11abiTRUE-$py-$py-linux_x86_64.whl" ] ||
    fail "no $py wheel in the merged wheelhouse"
done
(cd "$merged/example0.1.0/torch2.11/cu130" && sha256sum -c --strict --quiet SHA256SUMS) || fail "merged SHA256SUMS does not match its wheels"
# The module names no job's directory: each job compiled under its own staging directory and
# Python environment, both mapped out (docs/security.md, "Reproducible wheels"); before, 44
# strings named the environment of the job that compiled the unit.
python3 - "$merged" "$work" <<'PY' || fail "the finishing job's module names a job's directory"
import glob, sys, zipfile
merged, work = sys.argv[1], sys.argv[2].encode()
for wheel in glob.glob(merged + "/example0.1.0/torch2.11/cu130/*.whl"):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.endswith(".so"):
                n = z.read(name).count(work)
                assert n == 0, f"{wheel}: {name} names {work.decode()} {n} times"
PY
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["cells"]; assert sorted(c) == sorted(sys.argv[2].split(",")), c' \
  "$merged/manifest.json" "$cells" || fail "the merged manifest does not list both cells"

echo "== the next plan: each job's setup, from the row's record"
# Every job measured its setup (FABUILD_JOB_STARTED, which run-jobs.py sets as the workflow's first
# step does, to its first compile); the finishing job's record holds the shares' and its own.
finish=$(awk -F'\t' '$2 == "build" {print $6}' run/jobs.tsv)
grep -Eq "^fabuild: job setup: [0-9]+\.[0-9] min from the job's start to its first compile" \
  "$finish"/part/logs/example0.1.0-torch2.11-cu130-cp311-linux_x86_64.log || fail "the finishing job recorded no setup"
grep -q "^Job setup, from the job's start to its first compile: [0-9]*\.[0-9] min\.$" "$finish/part/summary.md" ||
  fail "the finishing job's step summary does not say its setup: $(head -5 "$finish/part/summary.md")"
python3 -c 'import glob,json,sys; r=[json.load(open(p)) for p in glob.glob(sys.argv[1] + "/cache/costs/*.json") if ".share" not in p]; assert len(r) == 1 and len(r[0].get("setups", [])) == 5, r' \
  "$finish" || fail "the row's record does not hold the 4 shares' setups and the finishing job's"
# ...and the kernels the build compiles, each with the cost a share measured.
python3 -c 'import glob,json,sys; r=[json.load(open(p)) for p in glob.glob(sys.argv[1] + "/cache/costs/*.json") if ".share" not in p][0]; b=r.get("built", []); assert b and b == sorted(u for u in r["units"] if u.endswith(".cu")), r' \
  "$finish" || fail "the row's record does not list the kernels the build compiles"
# ...and how busy the machine was while each compiled (costs/contention.h).
python3 -c 'import glob,json,sys; r=[json.load(open(p)) for p in glob.glob(sys.argv[1] + "/cache/costs/*.json") if ".share" not in p][0]; assert all(0 <= u.get("busy", -1) <= 1 for u in r["units"].values()), r' \
  "$finish" || fail "the row's record does not say how busy the machine was for each compile"
start_nginx_dav "$work/remote"  # what the jobs sent, served again for the next plan
trap 'stop_nginx_dav; rm -rf "$work"' EXIT
FABUILD_CACHE_DIR=$work/next-plan-cache FABUILD_CACHE_REMOTE=$NGINX_DAV_URL/cache "$fabuild" m.yaml --python cp311,cp312 \
  --ci-matrix github > next.json 2> next.log || { cat next.log; fail "the next --ci-matrix github exited $?"; }
# A torch series the nightly has not built yet plans by this row's record (costs/borrowed.h): its
# shares split and timed by the same record, which they fetch by its digest.
FABUILD_CACHE_DIR=$work/next-plan-cache FABUILD_CACHE_REMOTE=$NGINX_DAV_URL/cache "$fabuild" m.yaml --python cp311,cp312 \
  --set torch=2.11,2.12 --ci-matrix github > newtorch.json 2> newtorch.log ||
  { cat newtorch.log; fail "--ci-matrix github with torch 2.12 added exited $?"; }
stop_nginx_dav
grep -q "row times: 2 of 2 from recorded unit costs.*; 1 of them not yet built, by the record of the same kernels for another torch series" \
  newtorch.log || { cat newtorch.log; fail "the plan does not time the new torch series' row by the built one's record"; }
python3 -c '
import json, sys
jobs = json.load(open(sys.argv[1]))["include"]
costs = {j["name"]: j["args"].split("--share-costs ")[1].split()[0] for j in jobs if j["stage"] == "compile"}
new = {c for n, c in costs.items() if "torch2.12" in n}
old = {c for n, c in costs.items() if "torch2.11" in n}
assert len(costs) == 8 and new == old and len(new) == 1 and "none" not in new, costs
' newtorch.json || fail "the new torch series' shares do not split by the built row's record"
grep -Eq "row times: 1 of 1 from recorded unit costs.*; 1 of them recorded on a machine [0-9-]+ % busy, timed as a runner's own compiles load it" \
  next.log || { cat next.log; fail "the plan does not say how busy the record's machine was"; }
grep -Eq "job setup: recorded by the jobs of 1 of 1 rows \(the longest of each row's latest, at most [0-9]+\.[0-9] min\)" next.log ||
  { cat next.log; fail "the next plan does not time its jobs by the recorded setups"; }
python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["include"]; assert j and all(x["expected_s"] > 0 and x["timeout"] >= 10 for x in j), j' \
  next.json || fail "the next plan's jobs carry no expected time, or a timeout under 10 minutes"
echo "next plan: $(grep -o 'job setup: .*' next.log)"

echo "== a share run again on a fresh runner: its units from the remote"
s=$(date +%s)
entry_json share1.json 1
"$run_jobs" --remote "nginx:$work/remote" "$fabuild" m.yaml share1.json again > again.log ||
  { cat again.log; fail "run-jobs.py exited $?"; }
remote=$(sed -n 's/^remote   nginx \(http[^ ]*\) .*/\1/p' again.log)
again=again/jobs/1
grep -Eq "^compile share 1/4 of \S+: 0 compiled \(its share: 4 kernel units\), 4 from the cache, 13 left to other shares; 0 files sent" \
  "$again/out.log" || fail "share 1/4 again: $(grep -E '^compile share|^remote cache' "$again/out.log")
$(grep -hE 'fabuild: (remote cache|object cache: (miss|error|uncacheable))' "$again"/part/logs/example*.log)"
grep -Eq "^remote cache $remote: 1 of 1 cells found their row; [1-9][0-9]* objects taken" "$again/out.log" ||
  fail "share 1/4 again took nothing from the remote: $(grep -E '^remote cache' "$again/out.log")"
grep -q "^fabuild: compile share 1/4: 0 compiled, 4 from the cache" "$again"/part/logs/example*.log ||
  fail "share 1/4 again: its log does not say its units came from the cache"
[ -z "$(find "$again/part" -name '*.whl')" ] || fail "share 1/4 again filed a wheel"
echo "share 1/4 again: $(seconds "$s")s; $(grep -E '^compile share' "$again/out.log" | cut -d';' -f1)"

echo "== a share with its remote down"
s=$(date +%s)
closed=http://127.0.0.1:$(free_port)/fabuild
FABUILD_CACHE_REMOTE=$closed "$run_jobs" "$fabuild" m.yaml share1.json down > down.log || { cat down.log; fail "run-jobs.py exited $?"; }
down=down/jobs/1
[ "$(cut -f2,4 down/jobs.tsv | sed -n 2p)" = "$(printf 'compile\t1')" ] ||
  { cat "$down/out.log"; fail "the share with its remote down did not fail: $(sed -n 2p down/jobs.tsv)"; }
grep -q "share: its objects did not all reach the remote cache" "$down/out.log" ||
  fail "the share's failure does not say why: $(grep -E 'FAILED|share' "$down/out.log")"
grep -Eq "^compile share 1/4 of \S+: 4 compiled \(its share: 4 kernel units\), 0 from the cache, [0-9]+ left to other shares; 0 files sent" \
  "$down/out.log" || fail "share 1/4 with the remote down: $(grep -E '^compile share' "$down/out.log")"
grep -q "^fabuild: remote cache: note: .*${closed#http://}.*Couldn't connect" "$down"/part/logs/example*.log ||
  fail "the share's log does not say the remote failed: $(grep 'remote cache' "$down"/part/logs/example*.log)"
grep -Eq "^remote cache $closed: .*[1-9][0-9]* notes? in the cells' logs" "$down/out.log" ||
  fail "the share's summary does not point at the notes: $(grep -E '^remote cache' "$down/out.log")"
echo "share 1/4, remote down: $(seconds "$s")s; $(grep -c 'remote cache: note:' "$down"/part/logs/example*.log) notes in its log, e.g.:"
grep -m1 'remote cache: note:' "$down"/part/logs/example*.log
echo "== a job past its timeout is cancelled, as GitHub cancels it"
s=$(date +%s)
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j["include"][0]["timeout"] = 0.05; print(json.dumps(j))' \
  share1.json > late.json  # 3 s: the share compiles for longer
FABUILD_CACHE_REMOTE=$closed "$run_jobs" "$fabuild" m.yaml late.json late > late.log || { cat late.log; fail "run-jobs.py exited $?"; }
[ "$(cut -f4,12 late/jobs.tsv | sed -n 2p)" = "$(printf '143\tyes')" ] ||
  { cat late/jobs/1/out.log; fail "the job past its timeout was not cancelled: $(sed -n 2p late/jobs.tsv)"; }
grep -q "^compile .*: exit 143 (cancelled at its 0.05-minute timeout)" late.log || fail "run-jobs.py does not say it cancelled the job"
sleep 1
[ -z "$(pgrep -f "$work/late/" || true)" ] || fail "the cancelled job left processes: $(pgrep -af "$work/late/")"
echo "a job at a 3 s timeout: cancelled, exit 143, in $(seconds "$s")s"
echo "e2e ci jobs: ok in $(seconds "$start")s"
