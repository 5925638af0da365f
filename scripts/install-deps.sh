#!/usr/bin/env bash
# Installs what fabuild needs to build and test, from Debian/Ubuntu packages only.
# Usage: scripts/install-deps.sh   (as root, or with sudo available)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  ccache  # scripts/test.sh compiles through it: a second run on the same box rebuilds little
  libyaml-cpp-dev libfmt-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
  libcurl4-openssl-dev libarchive-dev libssl-dev libelf-dev
  patch  # patches: applied to a cell's source (docs/packages.md)
  libgtest-dev libgmock-dev libbenchmark-dev
  python3
  python3-yaml  # tests/ci/workflow_test.py reads the CI workflow
  chromium chromium-driver  # the matrix page checked in a headless browser (tests/e2e/index_page_browser.py)
  docker.io cgroupfs-mount debootstrap  # container cells and their tests (docs/containers.md)
  clang libclang-rt-14-dev  # libFuzzer and the sanitizer runtimes for clang (scripts/fuzz.sh, docs/reliability.md)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
