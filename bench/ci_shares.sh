#!/usr/bin/env bash
# A row compiled in shares over CI jobs (docs/ci.md) against the same row built on one machine:
#
#   single     one fabuild run of the example's row (cp311, cp312) with a fabuild cache of its
#              own, so an empty object cache and Python environments of its own, no remote
#   shares     the --ci-matrix github plan with `ci: {compile_shares: 4}`, run by
#              scripts/ci/run-jobs.py as fresh runners would run it: the 4 compile shares, one
#              after another (CI runs them at once), then the finishing job, every job with its
#              own fabuild cache and Python environments, all sharing a remote object cache
#              (Debian's nginx with WebDAV PUT on 127.0.0.1)
#
# Prints the wall time of each job, their sum (the runner time the shares cost), the critical
# path CI would see (the longest share, then the finishing job) and, last, the ratios against
# the single-machine build. Every time includes making the job's Python environments (uv, from
# its warm download cache). No target: on the example the kernels are 16 small units and the
# finishing job's own compiles (api.cpp, once a Python tag) are most of a build, so the example
# says what a share job costs beyond its compiles; on FlashAttention the kernels are hours.
# Exits non-zero when a job fails or the finishing job compiles a kernel (then it measured
# something else).
# Needs what matrix/example.yaml needs (the CUDA 13.0 toolkit, python3.11 and 3.12, torch 2.11
# from pip's index), and nginx.
# Usage: bench/ci_shares.sh FABUILD
set -euo pipefail
fabuild=$(realpath "${1:?usage: bench/ci_shares.sh FABUILD}")
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/fabuild-bench-ci-shares.XXXXXX")
# shellcheck source=tests/support/nginx_dav.sh
. "$src/tests/support/nginx_dav.sh"
trap 'stop_nginx_dav; rm -rf "$work"' EXIT
cd "$work"
sed -e "s#source: {path: ../examples/flash_example}#source: {path: $src/examples/flash_example}#" \
  "$src/matrix/example.yaml" > m.yaml
echo 'ci: {compile_shares: 4}' >> m.yaml
tags=cp311,cp312
echo "bench/ci_shares.sh: the example's row ($tags) in 4 compile shares, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== single: the row on one machine, empty object cache"
start=$(date +%s.%N)
env -u FABUILD_CACHE_REMOTE FABUILD_CACHE_DIR="$work/single/cache" "$fabuild" m.yaml --python "$tags" -o single/house \
  > single.log 2>&1 || { cat single.log; echo "bench: the single-machine build failed"; exit 1; }
t_single=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
echo "single: $t_single s; $(grep -E '^[0-9]+ of [0-9]+ compiles' single.log | cut -d';' -f1)"

echo "== shares: the job graph (scripts/ci/run-jobs.py)"
start_nginx_dav "$work/nginx"
export FABUILD_CACHE_REMOTE=$NGINX_DAV_URL/fabuild
"$fabuild" m.yaml --python "$tags" --ci-matrix github > jobs.json 2> plan.log || { cat plan.log; exit 1; }
"$src/scripts/ci/run-jobs.py" "$fabuild" m.yaml jobs.json run > run.log || { cat run.log; echo "bench: a job failed"; exit 1; }
python3 - run "$t_single" <<'PY'
import csv, os, re, sys
run, single = sys.argv[1], float(sys.argv[2])
jobs = list(csv.DictReader(open(os.path.join(run, "jobs.tsv")), delimiter="\t"))
shares = [j for j in jobs if j["stage"] == "compile"]
finishing = [j for j in jobs if j["stage"] == "build"]
assert len(finishing) == 1 and shares, f"expected shares and one finishing job: {[j['name'] for j in jobs]}"
failed = [j for j in jobs if j["exit"] != "0"]
if failed:
    sys.exit(f"bench: failed jobs: {[(j['name'], j['exit']) for j in failed]}")
for j in shares:
    out = open(os.path.join(j["dir"], "out.log")).read()
    line = re.search(r"^compile share (\d+/\d+) of \S+: (.*?); no wheel filed", out, re.M)
    print(f"share {line.group(1) if line else '?'}: {float(j['seconds']):6.1f} s   {line.group(2) if line else '(no summary)'}")
fin = finishing[0]
out = open(os.path.join(fin["dir"], "out.log")).read()
tally = re.search(r"^(\d+ of \d+ compiles from the cache)", out, re.M)
compiled = []
for log in sorted(os.listdir(os.path.join(fin["dir"], "part", "logs"))):
    text = open(os.path.join(fin["dir"], "part", "logs", log)).read()
    compiled += re.findall(r"^fabuild: object cache: \w+ (\S+): ", text, re.M)
print(f"finishing: {float(fin['seconds']):6.1f} s   {tally.group(1) if tally else '(no tally)'}; compiled: "
      f"{', '.join(os.path.basename(c) for c in compiled) or 'nothing'}")
kernels = [c for c in compiled if c.endswith(".cu")]
t_shares = [float(j["seconds"]) for j in shares]
t_fin = float(fin["seconds"])
total = sum(t_shares) + t_fin
path = max(t_shares) + t_fin
print("load after: " + " ".join(open("/proc/loadavg").read().split()[:3]))
print(f"single machine:                      {single:6.1f} s")
print(f"sum of the jobs (runner time):       {total:6.1f} s ({len(shares)} shares {sum(t_shares):.1f} s + finishing {t_fin:.1f} s)")
print(f"critical path (longest share + finishing, shares at once as on CI): {path:.1f} s")
print(f"finishing job / single machine:      {t_fin / single:.2f}")
print(f"critical path / single machine:      {path / single:.2f}")
print(f"sum of the jobs / single machine:    {total / single:.2f}")
if kernels:
    sys.exit(f"bench: the finishing job compiled kernels the shares should have sent: {kernels}")
PY
