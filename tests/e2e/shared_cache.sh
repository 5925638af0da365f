#!/usr/bin/env bash
# Runs that share one cache never corrupt each other (docs/reliability.md, "Shared caches"):
# N fabuild processes (3, then 8) start at once on one fresh cache root, each into its own
# wheelhouse, all needing the same Python environment (the example's cp312 x torch 2.11 x cu130,
# real uv and real torch from pip's index; --prepare makes it and builds no cell). All succeed,
# one of them makes it and the others wait for it and say whom for. Then the maker is SIGKILLed
# in the middle of installing torch, which leaves its uv running: two new runs start, one kills
# that leftover (found by the cache entry it works on, though it belonged to another wheelhouse),
# removes what it left and makes the environment; both succeed.
# Needs python3.12 and pip's index (torch 2.11, once: uv's cache keeps it). FABUILD_SKIP_E2E=1
# skips it (exit 77).
set -euo pipefail
[ "${FABUILD_SKIP_E2E:-}" = 1 ] && { echo "skipped: FABUILD_SKIP_E2E=1"; exit 77; }
fabuild=${1:?usage: shared_cache.sh FABUILD SOURCE_DIR}
src=${2:?}
command -v uv >/dev/null || { echo "skipped: no uv on PATH"; exit 77; }
work=$(mktemp -d /tmp/fabuild-shared.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "shared-cache: FAIL: $*"; exit 1; }
key=cp312-torch2.11-cu130
matrix=$src/matrix/example.yaml

# Processes whose environment names the cache entry $1 (FABUILD_CACHE_ENTRY), as pids.
working_on() {
  grep -lsaz "^FABUILD_CACHE_ENTRY=$1/\$" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true
}

# Starts run $2 on cache $1 into its own wheelhouse, in the background; its pid in $started.
start_run() {
  FABUILD_CACHE_DIR=$1 "$fabuild" "$matrix" --python cp312 --prepare -o "$work/wh-$2" > "$work/out-$2" 2>&1 &
  started=$!
  pids+=("$started")
}

# Starts $2 runs at once on the fresh cache $1 and checks that all succeed and one made it.
concurrent() {
  local cache=$1 n=$2 runs=() made=0 waited=0
  echo "== $n runs at once on one fresh cache"
  local start=$SECONDS
  for i in $(seq 1 "$n"); do start_run "$cache" "$n-$i"; runs+=("$started"); done
  for i in $(seq 1 "$n"); do
    local code=0
    wait "${runs[$((i - 1))]}" || code=$?
    [ "$code" = 0 ] || { cat "$work/out-$n-$i"; fail "run $i of $n exited $code"; }
    local log=$work/wh-$n-$i/logs/env-$key.log
    [ -f "$log" ] || fail "run $i of $n has no environment log"
    if grep -q "^fabuild: step torch" "$log"; then
      made=$((made + 1))
    else
      grep -q "was made meanwhile by another process" "$log" || fail "run $i neither made nor waited: $(cat "$log")"
      grep -q "$key: waiting for pid [0-9]* on .* (making Python environment $key for fabuild" "$work/out-$n-$i" ||
        fail "run $i did not say whom it waited for: $(cat "$work/out-$n-$i")"
      waited=$((waited + 1))
    fi
  done
  echo "$n runs: $made made the environment, $waited waited for it; $((SECONDS - start))s"
  [ "$made" = 1 ] || fail "the environment was made $made times"
  [ -f "$cache/venvs/$key/.fabuild-ready" ] || fail "the environment is not marked ready"
  "$cache/venvs/$key/bin/python" -c "import torch, ninja, wheel; print('torch', torch.__version__)" ||
    fail "the environment does not hold torch and the build tools"
}

concurrent "$work/cache3" 3
concurrent "$work/cache8" 8

echo "== the maker is killed while it installs torch; its uv is left running"
cache=$work/cache-kill
venv=$cache/venvs/$key
# uv copies torch out of its cache instead of linking it: the install lasts long enough to be
# caught in the middle.
export UV_LINK_MODE=copy
start_run "$cache" killed
maker=$started
log=$work/wh-killed/logs/env-$key.log
for _ in $(seq 1 600); do
  grep -qs "^fabuild: step torch" "$log" && break
  sleep 0.1
done
grep -qs "^fabuild: step torch" "$log" || { cat "$work/out-killed"; fail "the maker never started installing torch"; }
sleep 1
kill -KILL "$maker"
wait "$maker" 2>/dev/null || true
orphans=$(working_on "$venv")
[ -n "$orphans" ] || fail "no process of the killed maker was left working on $venv: the test proves nothing"
[ -f "$venv/.fabuild-ready" ] && fail "the killed maker left an environment that looks ready"
echo "left running: $(wc -w <<<"$orphans") process(es): $(tr '\n' ' ' <<<"$orphans")"
declare -A after
for run in after1 after2; do
  start_run "$cache" "$run"
  after[$run]=$started
done
for run in after1 after2; do
  code=0
  wait "${after[$run]}" || code=$?
  [ "$code" = 0 ] || { cat "$work/out-$run"; fail "$run (a run after the kill) exited $code"; }
done
for p in $orphans; do
  [ -d "/proc/$p" ] && [ "$(cut -d' ' -f3 "/proc/$p/stat")" != Z ] && fail "leftover $p still runs"
done
# grep reads the logs itself: `cat | grep -q` under pipefail fails when grep stops before cat is done.
grep -qs "killed [0-9]* leftover process.* of a run that died making $venv" "$work"/wh-after*/logs/env-$key.log ||
  fail "no run said it killed the leftovers: $(cat "$work"/wh-after*/logs/env-$key.log)"
[ -f "$venv/.fabuild-ready" ] || fail "the environment is not marked ready after the takeover"
"$venv/bin/python" -c "import torch; print('torch', torch.__version__, 'after the takeover')" ||
  fail "the environment made after the kill does not import torch"
echo "shared-cache: ok"
