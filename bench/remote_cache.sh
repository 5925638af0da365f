#!/usr/bin/env bash
# Two "runners" sharing one remote object cache (docs/performance.md, "Sharing the cache between
# machines"): Debian's nginx with WebDAV PUT on 127.0.0.1 as the remote, and two fabuild runs of
# the example's cp312 cell, each with its own fabuild cache (so its own local object cache and
# Python environment), its own copy of the source, its own wheelhouse and working directory:
# what two CI jobs on two machines have. The first compiles every kernel and sends them; the
# second must take every one from the remote (its local cache starts empty). A third run, with
# the remote down, builds with a note.
# Prints each run's time and compile tally, and the ratio second/first.
# Needs: nginx, python3.12, torch 2.11 from pip's index (uv shares its download cache).
# Usage: bench/remote_cache.sh FABUILD
set -euo pipefail
fabuild=$(realpath "${1:?usage: bench/remote_cache.sh FABUILD}")
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/fabuild-bench-remote.XXXXXX")
# shellcheck source=tests/support/nginx_dav.sh
. "$src/tests/support/nginx_dav.sh"
trap 'stop_nginx_dav; rm -rf "$work"' EXIT
start_nginx_dav "$work/nginx"

runner() {  # runner NAME REMOTE: one job on its own "machine"
  local name=$1 remote=$2 root=$work/$1
  mkdir -p "$root"
  cp -r "$src/examples/flash_example" "$root/source"
  cat > "$root/m.yaml" <<MATRIX
package: flash-example
versions: ["0.1.0"]
torch: ["2.11"]
cuda: ["13.0"]
python: [cp312]
archs: "90"
provision: host
source: {path: source}
build: {nvcc_threads: 1}
MATRIX
  local start end
  start=$(date +%s.%N)
  (cd "$root" && FABUILD_CACHE_DIR=$root/cache FABUILD_CACHE_REMOTE=$remote "$fabuild" m.yaml -o house > out.log 2>&1) ||
    { cat "$root/out.log"; exit 1; }
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.1f}')" > "$root/seconds"
  echo "$name: $(cat "$root/seconds") s; $(grep -E '^[0-9]+ of [0-9]+ compiles' "$root/out.log" | cut -d';' -f1)"
  grep -E '^remote cache' "$root/out.log" || true
  grep -h "object cache: miss" "$root"/house/logs/*.log | head -3 || true
}

runner first "$NGINX_DAV_URL/fabuild"
runner second "$NGINX_DAV_URL/fabuild"
runner down "http://127.0.0.1:$(free_port)/fabuild"
grep -h "remote cache: note" "$work"/down/house/logs/*.log | head -2
python3 - "$work" <<'PY'
import sys, pathlib
w = pathlib.Path(sys.argv[1])
a, b = (float((w / n / "seconds").read_text()) for n in ("first", "second"))
print(f"second runner / first runner: {b / a:.2f} of the time ({b:.1f} s against {a:.1f} s)")
PY
