#!/usr/bin/env bash
# The object cache on real cells, side by side in one run (docs/performance.md):
#
#   one cell    one Python tag of the example, cold cache
#   warm        that cell again with --force on the warm cache (target: <= 0.1 x one cell)
#   row         every tag of the row (one FlashAttention, torch, CUDA, archs), cold cache
#               (target for four tags: <= 1.3 x one cell)
#   no cache    the row with --no-cache: every tag compiles everything, as today's tools do
#
# Usage: bench/python_tags.sh FABUILD [TAGS [ARCHS]]
#   TAGS   default cp311,cp312,cp313 (the example matrix's); cp310 works too
#   ARCHS  default 90 (the example matrix's); "80;90;100;120" is FlashAttention's default set
# Needs what matrix/example.yaml needs (the CUDA 13.0 toolkit, the Pythons). Every build goes
# to a scratch wheelhouse and cache; the virtualenvs are fabuild's, made before the timings.
set -euo pipefail
fabuild=${1:?usage: python_tags.sh FABUILD [TAGS [ARCHS]]}
tags=${2:-cp311,cp312,cp313}
archs=${3:-90}
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/fabuild-python-tags.XXXXXX)
trap 'rm -rf "$work"' EXIT
first=${tags%%,*}
n=$(tr ',' '\n' <<<"$tags" | wc -l)
# The example matrix with these tags and archs, its source named by an absolute path.
sed -e "s#^python: .*#python: [$tags]#" -e "s#^archs: .*#archs: \"$archs\"#" \
    -e "s#source: {path: ../examples/flash_example}#source: {path: $src/examples/flash_example}#" \
    "$src/matrix/example.yaml" > "$work/example.yaml"

# build NAME ARGS...: runs fabuild into $work/NAME; prints and records its wall time and the CPU
# time (user + system) of fabuild and everything it ran.
build() {
  local name=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$work/$name.time" "$fabuild" "$work/example.yaml" "$@" > "$work/$name.log" 2>&1 ||
    { cat "$work/$name.log"; echo "bench: $name failed"; exit 1; }
  read -r wall user sys < "$work/$name.time"
  printf -v "t_$name" '%s' "$wall"
  printf -v "cpu_$name" '%s' "$(echo "$user + $sys" | bc)"
  local c="cpu_$name"
  printf '%-9s %7.1f s   CPU %6.1f s   %s\n' "$name" "$wall" "${!c}" \
    "$(grep -E '^[0-9]+ of [0-9]+ compiles' "$work/$name.log" | cut -d';' -f1)"
  sed -n '/^CELL /,/^[0-9]* ok/p' "$work/$name.log" | sed 's/^/          /'
}

echo "bench/python_tags.sh: $n tags ($tags), archs $archs, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
# No timing may include making a virtualenv.
for t in ${tags//,/ }; do
  [ -x "${FABUILD_CACHE_DIR:-$HOME/.cache/fabuild}/venvs/$t-torch2.11-cu130/bin/python" ] ||
    { echo "bench: no virtualenv for $t yet: run \`fabuild matrix/example.yaml\` for it once (see docs/performance.md)"; exit 1; }
done
build one --python "$first" -o "$work/one" --cache-dir "$work/cache-one"
build warm --python "$first" -o "$work/one" --cache-dir "$work/cache-one" --force
build row --python "$tags" -o "$work/row" --cache-dir "$work/cache-row"
build nocache --python "$tags" -o "$work/nocache" --no-cache
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
ratio() { echo "scale=2; $1 / $2" | bc; }
echo "warm --force / one cell:             $(ratio "$t_warm" "$t_one")   (target <= 0.1)"
echo "$n tags with the cache / one cell:      $(ratio "$t_row" "$t_one")   (target for 4 tags <= 1.3)"
echo "$n tags without the cache / one cell:   $(ratio "$t_nocache" "$t_one")   (today's tools: $n.0)"
echo "each further tag with the cache / one cell: $(echo "scale=2; ($t_row - $t_one) / ($n - 1) / $t_one" | bc)"
# However well the cache and the schedule work, the row cannot take less than its CPU work
# over the cores: what is left per further tag (its Python-specific units, the package's own
# steps, the checks) bounds the ratio from below on this machine.
cores=$(nproc)
echo "CPU of one cell: $cpu_one s; of each further tag with the cache: $(echo "scale=1; ($cpu_row - $cpu_one) / ($n - 1)" | bc) s"
echo "floor for the row on $cores cores: CPU $cpu_row s / $cores = $(echo "scale=1; $cpu_row / $cores" | bc) s, $(ratio "$(echo "$cpu_row / $cores" | bc -l)" "$t_one") x one cell"
