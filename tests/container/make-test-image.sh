#!/usr/bin/env bash
# Builds the image the container tests run cells in, offline from any registry: a Debian 12
# root filesystem made with debootstrap from this machine's own apt archive (the URI in its apt
# sources), with Python 3.11 (venv, headers) and g++, imported with `docker import`. The CUDA
# toolkit is not in it: the tests mount the host's read-only (container: {toolkit: host}).
#
# Usage: make-test-image.sh [TAG]   (default fabuild-test/bookworm:1)
# The root filesystem is cached as a tarball under $FABUILD_TEST_CACHE (default
# ~/.cache/fabuild-test), so a second machine run only imports it. Prints the tag.
set -euo pipefail
tag=${1:-fabuild-test/bookworm:1}
engine=${FABUILD_TEST_ENGINE:-docker}
cache=${FABUILD_TEST_CACHE:-$HOME/.cache/fabuild-test}
packages=python3,python3-venv,python3-dev,g++,libc6-dev,ca-certificates
rootfs_tar=$cache/bookworm-rootfs-$(printf '%s' "$packages" | sha256sum | cut -c1-12).tar

if "$engine" image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"
  exit 0
fi

# The archive this machine installs from: the first URI of its apt sources (deb822 or one-line).
mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk '/^URIs:/ {print $2; exit}' "$f" | grep . && return 0
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '$1 == "deb" && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; exit}}' "$f" | grep . && return 0
  done
  return 1
}

if [ ! -s "$rootfs_tar" ]; then
  command -v debootstrap >/dev/null || { echo "make-test-image: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 1; }
  uri=$(mirror) || { echo "make-test-image: no apt archive URI found in /etc/apt/sources*" >&2; exit 1; }
  mkdir -p "$cache"
  root=$(mktemp -d "$cache/rootfs.XXXXXX")
  trap 'rm -rf "$root"' EXIT
  echo "make-test-image: debootstrap bookworm ($packages)" >&2
  debootstrap --variant=minbase --include="$packages" bookworm "$root" "$uri" >"$cache/debootstrap.log" 2>&1 ||
    { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -cf "$rootfs_tar.part" . && mv "$rootfs_tar.part" "$rootfs_tar"
fi
"$engine" import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' "$rootfs_tar" "$tag" >/dev/null
echo "$tag"
