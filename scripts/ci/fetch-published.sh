#!/usr/bin/env bash
# The wheelhouse an earlier nightly published (GitHub Pages), for the stable-ABI cells it already
# filed (docs/stable-abi.md):
#   fetch-published.sh URL --manifest DIR   its manifest.json into DIR, for the plan to see what is
#                                           filed and which torch releases each wheel is proven under;
#                                           nothing published yet is no error
#   fetch-published.sh URL CELL_ID DIR      that cell's wheel, checked against the manifest's sha256,
#                                           filed into DIR as a build files it (the wheel, its
#                                           SHA256SUMS line, a manifest with that cell alone), for a
#                                           verify job to check under one more torch release
#   fetch-published.sh URL --all DIR        the whole published wheelhouse into DIR (its manifest,
#                                           report.json, and each directory's SHA256SUMS with every
#                                           file it lists, checked), for the merge job to merge the
#                                           night's parts into: what no job touched tonight stays
#                                           published, and the run record keeps its torch history;
#                                           nothing published yet is no error
set -euo pipefail
url=${1:?usage: fetch-published.sh URL (--manifest DIR | --all DIR | CELL_ID DIR)}
url=${url%/}
fetch() { curl -fsSL --retry 3 "$url/${1//+/%2B}" -o "$2"; }  # a label's + is a space in some servers' eyes
if [ "${2:-}" = --all ]; then
  dir=${3:?}
  mkdir -p "$dir"
  if ! fetch manifest.json "$dir/manifest.json.part"; then
    rm -f "$dir/manifest.json.part"
    echo "fetch-published: no manifest at $url (nothing published yet)"
    exit 0
  fi
  fetch report.json "$dir/report.json" || rm -f "$dir/report.json"
  n=0
  while read -r sub; do
    mkdir -p "$dir/$sub"
    fetch "$sub/SHA256SUMS" "$dir/$sub/SHA256SUMS"
    while read -r sha name; do
      fetch "$sub/$name" "$dir/$sub/$name"
      n=$((n + 1))
    done < "$dir/$sub/SHA256SUMS"
    (cd "$dir/$sub" && sha256sum -c --quiet SHA256SUMS) ||
      { echo "fetch-published: $sub: a file does not match its SHA256SUMS line" >&2; exit 1; }
  done < <(python3 -c '
import json, os, sys
cells = json.load(open(sys.argv[1]))["cells"]
for d in sorted({os.path.dirname(e.get("wheel") or e.get("library") or "") for e in cells.values()}):
    print(d)' "$dir/manifest.json.part")
  mv "$dir/manifest.json.part" "$dir/manifest.json"
  echo "fetch-published: $url: $n files of $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["cells"]))' "$dir/manifest.json") cells, checked against their SHA256SUMS"
  exit 0
fi
if [ "${2:-}" = --manifest ]; then
  dir=${3:?}
  mkdir -p "$dir"
  if curl -fsSL --retry 3 "$url/manifest.json" -o "$dir/manifest.json.part"; then
    mv "$dir/manifest.json.part" "$dir/manifest.json"
    echo "fetch-published: $url/manifest.json: $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["cells"]))' "$dir/manifest.json") cells filed"
  else
    rm -f "$dir/manifest.json.part"
    echo "fetch-published: no manifest at $url (nothing published yet)"
  fi
  exit 0
fi
cell=${2:?}
dir=${3:?}
mkdir -p "$dir"
curl -fsSL --retry 3 "$url/manifest.json" -o "$dir/published.json"
python3 - "$dir" "$cell" <<'PY'
import json, os, sys
d, cell = sys.argv[1], sys.argv[2]
cells = json.load(open(os.path.join(d, "published.json")))["cells"]
if cell not in cells:
    sys.exit(f"fetch-published: the published manifest has no cell {cell}")
entry = cells[cell]
json.dump({"cells": {cell: entry}}, open(os.path.join(d, "manifest.json"), "w"), indent=2)
open(os.path.join(d, "wheel.txt"), "w").write(entry["wheel"] + "\n" + entry["sha256"] + "\n")
PY
rm "$dir/published.json"
{ read -r wheel; read -r sha; } < "$dir/wheel.txt"
rm "$dir/wheel.txt"
mkdir -p "$dir/$(dirname "$wheel")"
fetch "$wheel" "$dir/$wheel"
echo "$sha  $(basename "$wheel")" | (cd "$dir/$(dirname "$wheel")" && sha256sum -c --quiet -) ||
  { echo "fetch-published: $wheel does not match the sha256 its manifest names" >&2; exit 1; }
echo "$sha  $(basename "$wheel")" > "$dir/$(dirname "$wheel")/SHA256SUMS"
echo "fetch-published: $cell: $wheel ($sha)"
