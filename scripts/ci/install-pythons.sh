#!/usr/bin/env bash
# Installs with uv the Pythons of the host cells that one CI job builds (container cells use
# their image's). Called by the nightly's compile and build jobs (.github/workflows/nightly.yml).
# Usage: scripts/ci/install-pythons.sh MATRIX ARG...
#   ARG...: the fabuild arguments that select the job's cells, as the job passes them to fabuild:
#   `--only IDS`, the run's filters and `--shard K/N`, or a share's `--only IDS --compile-share
#   K/N` (which lists the cell the share compiles for).
# fabuild is build/fabuild (FABUILD overrides it).
set -euo pipefail
fabuild=${FABUILD:-build/fabuild}
matrix=${1:?usage: install-pythons.sh MATRIX ARG...}
shift
cells=$("$fabuild" "$matrix" "$@" --allow-empty --list --format json)
read -ra pythons <<< "$(printf '%s' "$cells" | python3 -c '
import json, sys
print(" ".join(sorted({"3." + c["python"][3:] for c in json.load(sys.stdin) if c["provision"] == "host"})))')"
if [ ${#pythons[@]} -gt 0 ]; then
  uv python install "${pythons[@]}"
else
  echo "no host cells: no Python to install"
fi
