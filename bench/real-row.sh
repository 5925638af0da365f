#!/usr/bin/env bash
# A real FlashAttention 2 row through runner-sized jobs (docs/performance.md, "A real row on
# runner-sized jobs"): the row planned into compile shares and a finishing job by
# `fabuild --ci-matrix github`, run by scripts/ci/run-jobs.py with each job confined to a
# runner's shape and Debian's nginx as the remote; then the merged wheel installed with pip from
# the merged index, fabuild's GPU check, a fixed sample of FlashAttention's own tests, and the same
# cell built in one fabuild run on the whole machine as the baseline, its wheel's hash beside.
#
# Usage: bench/real-row.sh SDIST [SHARES [PARALLEL [CORES [MEMORY_GB]]]]
#   SDIST     flash_attn-X.Y.Z.tar.gz (the PyPI sdist)
#   SHARES    ci.compile_shares (default 8); PARALLEL jobs at once (default 8)
#   CORES, MEMORY_GB  each job's shape (default 4 and 16: a hosted runner)
# Environment: FABUILD (default build/fabuild), WORK (default /tmp/real-row; emptied), TESTS
# (a directory with FlashAttention's tests/test_flash_attn.py and bench/fa-tests/conftest.py, which samples it;
# none: no tests; copied first), TESTS_K (pytest's -k: the test functions to run), GPUS (xdist workers
# alternate over them), SEED_COSTS=ROWKEY=FILE (a row's unit-cost record, such as
# data/fa2.8.3-row-h200x2-record.json, put on the remote before the plan, as an earlier night of
# the release would have left it: the plan then splits and times the shares by it, and the
# memory gate runs), PROFILE (the cell's kernel profile, e.g. minimal; default full), RESERVE_GB (the matrix's budget.reserve_gb; default fabuild's),
# BASELINE=0 (skip the single-run baseline; else it runs while the tests use the GPUs), TORCH (the
# matrix's torch list, default "2.11"; the machine's own torch builds), PLAN_ARGS (more flags for
# the plan, e.g. --torch 2.11 to plan one series of several). Progress lines with epoch
# seconds go to WORK/progress; what each step printed to WORK/out/. Run it in the background
# (setsid) on a lent machine and poll WORK/progress: a second start kills the first's process
# group first, so an earlier try never shares the cores with this one.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
sdist=$(realpath "${1:?usage: real-row.sh SDIST [SHARES [PARALLEL [CORES [MEMORY_GB]]]]}")
shares=${2:-8} parallel=${3:-8} cores=${4:-4} memory=${5:-16}
fabuild=$(realpath "${FABUILD:-$repo/build/fabuild}")
W=${WORK:-/tmp/real-row}
if [ -f "$W/pid" ]; then kill -- -"$(cat "$W/pid")" 2>/dev/null; sleep 2; fi
rm -rf "$W" && mkdir -p "$W/out" && cd "$W" || exit 2
echo $$ > "$W/pid"
# Every input copied here first: a lent machine may replace the checkout under a running script.
cp "$sdist" "$W/" && sdist=$W/$(basename "$sdist") || exit 2
mkdir -p "$W/tests" && cp -r "$repo/scripts" "$W/" && cp -r "$repo/tests/support" "$W/tests/" && repo=$W || exit 2
if [ -n "${TESTS:-}" ]; then cp -r "$TESTS" "$W/fa-tests" && TESTS=$W/fa-tests || exit 2; fi
if [ -n "${SEED_COSTS:-}" ]; then
  cp "${SEED_COSTS#*=}" "$W/seed-record.json" && SEED_COSTS=${SEED_COSTS%%=*}=$W/seed-record.json || exit 2
fi
p() { echo "$(date +%s) $*" >> "$W/progress"; }
p start
cat > m.yaml <<Y
package: flash-attn
versions: ["$(basename "$sdist" | sed -E 's/^flash_attn-(.*)\.tar\.gz$/\1/')"]
torch: [${TORCH:-"2.11"}]
cuda: ["13.0"]
python: [$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')]
archs: "90"
${PROFILE:+profile: [$PROFILE]}
provision: host
source: {sdist: $sdist, sha256: $(sha256sum "$sdist" | cut -d' ' -f1)}
ci: {compile_shares: $shares}
${RESERVE_GB:+budget: {reserve_gb: $RESERVE_GB\}}
Y
{ nproc; free -g; df -h "$W" | tail -1; cat /sys/fs/cgroup/cgroup.controllers; ls -d /run/systemd/system
  python3 -c 'import sys, torch; print(sys.version, torch.__version__, torch.cuda.device_count())'
  nvcc --version | tail -2; "$fabuild" --version; nginx -v; ninja --version; } > out/machine.txt 2>&1
# The plan reads the remote as CI's plan job would: nginx on the directory the jobs' nginx serves.
. "$repo/tests/support/nginx_dav.sh"
start_nginx_dav "$W/remote" > out/plan-nginx.txt 2>&1 || exit 2
if [ -n "${SEED_COSTS:-}" ]; then
  python3 - "${SEED_COSTS%%=*}" "${SEED_COSTS#*=}" "$W/remote/data/cache" <<'PY' || exit 2
import hashlib, os, sys
row, record, data = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(record, "rb").read()
# Where fabuild's finishing job keeps a row's record: under its index key and by its digest.
for key in ("ac/" + hashlib.sha256((row + "/costs").encode()).hexdigest(), "cas/" + hashlib.sha256(text).hexdigest()):
    os.makedirs(os.path.dirname(os.path.join(data, key)), exist_ok=True)
    with open(os.path.join(data, key), "wb") as f:
        f.write(text)
PY
fi
# shellcheck disable=SC2086  # PLAN_ARGS: flags, split on spaces
FABUILD_CACHE_DIR=$W/plan-cache FABUILD_CACHE_REMOTE=$NGINX_DAV_URL/cache "$fabuild" m.yaml ${PLAN_ARGS:-} --ci-matrix github \
  > jobs.json 2> out/plan.log
p "planned $?"
stop_nginx_dav
python3 "$repo/scripts/ci/run-jobs.py" --parallel "$parallel" --cores "$cores" --memory-gb "$memory" \
  --remote "nginx:$W/remote" "$fabuild" m.yaml jobs.json "$W/run" > out/run-jobs.txt 2>&1
p "jobs $?"
{ du -sm remote/data; find remote/data -type f | wc -l; } > out/remote-du.txt
# A profile's wheel and index sit one folder deeper (cu<xyz>/torch<series>/<profile>/simple).
wheels() { find "$1" -path "$1/fa*" -name '*.whl' | sort; }
{ wheels run/merged | xargs ls -l; wheels run/merged | xargs sha256sum; } > out/wheel.txt 2>&1
files() { python3 - "$@" <<'PY'
import hashlib, sys, zipfile
for path in sys.argv[1:]:
    with zipfile.ZipFile(path) as z:
        for i in z.infolist():
            print(hashlib.sha256(z.read(i)).hexdigest(), i.file_size, i.filename)
PY
}
files $(wheels run/merged) > out/wheel-files.txt 2>&1
python3 -m pip install -q --no-deps --target "$W/site" --index-url "file://$(dirname "$(find "$W/run/merged" -path "$W/run/merged/cu*" -name index.html -path '*/simple/index.html' | head -1)")/" \
  flash-attn > out/pip.txt 2>&1
p "pip $?"
python3 "$repo/scripts/gpu-check-flash-attn.py" run/merged > out/gpu-check.txt 2>&1
p "gpucheck $?"
if [ -n "${TESTS:-}" ]; then
  (cd "$TESTS" && PYTHONPATH=$W/site FA_GPUS=${GPUS:-1} timeout 420 python3 -m pytest -q -n "$((4 * ${GPUS:-1}))" \
    -p no:cacheprovider ${TESTS_K:+-k "$TESTS_K"} test_flash_attn.py > "$W/out/pytest.txt" 2>&1
   p "pytest $?") &
fi
if [ "${BASELINE:-1}" != 0 ]; then
  s=$(date +%s)
  FABUILD_CACHE_DIR=$W/base-cache "$fabuild" m.yaml -o "$W/base" > out/baseline.txt 2>&1
  p "baseline $? $(( $(date +%s) - s ))"
  wheels base | xargs sha256sum >> out/wheel.txt 2>&1
  files $(wheels base) > out/base-wheel-files.txt 2>&1
fi
wait
p "done"
