#!/usr/bin/env bash
# Cross-builds fabuild's libraries for Windows (x86_64, mingw-w64 with the posix thread model)
# from Debian's source packages, into a prefix that cmake/mingw-w64.cmake points at:
#   ${FABUILD_MINGW_DEPS:-~/.cache/fabuild-dev/mingw-deps}/<key>
# The key hashes this script, the toolchain file and the source versions, which are those of
# this machine's -dev packages (the Linux build's own), so a second run is a no-op and the
# Windows build compiles against the same library releases as the Linux one.
#
# Built (static, only what fabuild uses): fmt, spdlog (against that fmt), yaml-cpp, libcurl
# (HTTP(S) only, TLS through Windows' Schannel: no OpenSSL), libarchive (tar and zip, gzip
# through Debian's mingw zlib), googletest. Header-only: CLI11, nlohmann-json, tl-expected,
# copied with their CMake package files from the installed -dev packages. SHA-256 on Windows
# comes from the system (util/hash_win32.cpp, CNG), so OpenSSL is not built.
#
# The sources come through `apt-get source` from the archive apt already uses here: its deb
# entries (as `apt-get indextargets` reports them) are written again as deb-src into a private
# apt state under the work directory; the system's apt configuration is left alone.
#
# Usage: scripts/mingw-deps.sh            prints the prefix on stdout, its progress on stderr
#        scripts/mingw-deps.sh --prefix   prints the prefix it would use, builds nothing
set -euo pipefail
cd "$(dirname "$0")/.."

root=${FABUILD_MINGW_DEPS:-$HOME/.cache/fabuild-dev/mingw-deps}
host=x86_64-w64-mingw32
toolchain=$PWD/cmake/mingw-w64.cmake

# Source package <- the -dev package whose version it must match.
built=(fmtlib:libfmt-dev spdlog:libspdlog-dev yaml-cpp:libyaml-cpp-dev curl:libcurl4-openssl-dev
       libarchive:libarchive-dev googletest:libgtest-dev)
headers=(libcli11-dev nlohmann-json3-dev libexpected-dev libz-mingw-w64-dev)

source_version() {  # source_version DEV_PACKAGE -> "srcpkg=version" of the installed package
  local v
  v=$(dpkg-query -W -f='${source:Package}=${source:Version}' "$1" 2>/dev/null) || {
    echo "mingw-deps: $1 is not installed; run scripts/install-deps.sh --tests first" >&2
    exit 1
  }
  echo "$v"
}
versions=()
for entry in "${built[@]}"; do versions+=("$(source_version "${entry#*:}")"); done
for dev in "${headers[@]}"; do versions+=("$(source_version "$dev")"); done
key=$( (cat "$0" "$toolchain"; printf '%s\n' "${versions[@]}"; ${host}-g++-posix -dumpfullversion) | sha256sum | cut -c1-16)
prefix=$root/$key

# stdout is the prefix alone; everything else (progress, the tools' own output) goes to stderr.
exec 3>&1 1>&2
if [ "${1:-}" = --prefix ]; then echo "$prefix" >&3; exit 0; fi
if [ -f "$prefix/.complete" ]; then
  echo "mingw-deps: cached in $prefix"
  echo "$prefix" >&3
  exit 0
fi

start=$SECONDS
work=$root/.work-$key
rm -rf "$work" "$prefix"  # a run cut short left them incomplete (no .complete)
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/apt/parts" "$work/src" "$work/build"
trap 'rm -rf "$work"' EXIT
# Installed in place: the libraries' CMake files may record the prefix; .complete comes last.
staged=$prefix

# deb-src entries for the distribution's own archive, from what apt is configured with.
. /etc/os-release
# The distribution's own: its Release file says so (Origin), or, before apt's first update has
# fetched one, its suite is this release's codename (bookworm, bookworm-updates, ...).
apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT) $(ORIGIN)' 'Created-By: Packages' |
  awk -v id="$ID" -v codename="${VERSION_CODENAME:-}" '
    $3 == "main" && (tolower($4) == tolower(id) || ($4 !~ /^[A-Za-z]/ && codename != "" && index($2, codename) == 1)) {
      print "deb-src " $1 " " $2 " main"
    }' |
  sort -u > "$work/apt/sources.list"
if [ ! -s "$work/apt/sources.list" ]; then
  echo "mingw-deps: apt has no '$ID' archive with a main component configured (apt-get indextargets)" >&2
  exit 1
fi
apt_opts=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o "Dir::Etc::SourceParts=$work/apt/parts"
          -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache" -o APT::Sandbox::User=root)
echo "mingw-deps: fetching sources: ${versions[*]:0:${#built[@]}}"
apt-get "${apt_opts[@]}" -qq update
(cd "$work/src" && apt-get "${apt_opts[@]}" -qq source --download-only "${versions[@]:0:${#built[@]}}" >/dev/null)
for dsc in "$work"/src/*.dsc; do
  name=$(basename "$dsc" .dsc)
  dpkg-source --no-check -x "$dsc" "$work/src/${name%%_*}" >/dev/null  # applies Debian's patches
done

jobs=$(nproc)
# Through ccache when there is one: a new key (this script changed) compiles little again.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$work CCACHE_NOHASHDIR=true
fi
# cmake_lib SOURCE_PACKAGE [CMAKE_ARGS...]: configure, build and install one library (the ninja
# targets in $targets, `install` unless said).
cmake_lib() {
  local name=$1 t=$SECONDS
  shift
  cmake -S "$work/src/$name" -B "$work/build/$name" -G Ninja -Wno-dev -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DFABUILD_MINGW_PREFIX="$staged" -DCMAKE_INSTALL_PREFIX="$staged" \
    -DBUILD_SHARED_LIBS=OFF -DBUILD_TESTING=OFF "${launcher[@]}" "$@" >"$work/build/$name.log" 2>&1 ||
    { tail -30 "$work/build/$name.log"; echo "mingw-deps: configuring $name failed" >&2; exit 1; }
  nice -n 10 ninja -C "$work/build/$name" -j "$jobs" ${targets:-install} >>"$work/build/$name.log" 2>&1 ||
    { tail -30 "$work/build/$name.log"; echo "mingw-deps: building $name failed" >&2; exit 1; }
  echo "mingw-deps: $name $((SECONDS - t))s"
}

# Three chains at once: a configure step runs its checks one by one, on one core.
small_libs() {
  cmake_lib fmtlib -DFMT_DOC=OFF -DFMT_TEST=OFF -DFMT_INSTALL=ON
  cmake_lib spdlog -DSPDLOG_FMT_EXTERNAL=ON -DSPDLOG_BUILD_EXAMPLE=OFF -DSPDLOG_BUILD_TESTS=OFF -DSPDLOG_INSTALL=ON
  cmake_lib yaml-cpp -DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=OFF -DYAML_CPP_BUILD_CONTRIB=OFF \
    -DYAML_BUILD_SHARED_LIBS=OFF
  cmake_lib googletest -DBUILD_GMOCK=ON -DINSTALL_GTEST=ON -Dgtest_force_shared_crt=OFF
}
# HTTP and HTTPS are all fabuild asks of curl (source/http_transfer, remote/store).
curl_lib() {
  cmake_lib curl -DCURL_USE_SCHANNEL=ON -DCURL_USE_OPENSSL=OFF -DHTTP_ONLY=ON -DBUILD_CURL_EXE=OFF \
    -DCURL_ZLIB=OFF -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF -DUSE_NGHTTP2=OFF -DUSE_LIBIDN2=OFF -DCURL_USE_LIBSSH2=OFF \
    -DCURL_DISABLE_LDAP=ON -DENABLE_MANUAL=OFF -DENABLE_UNIX_SOCKETS=OFF -DCURL_CA_BUNDLE=none -DCURL_CA_PATH=none
}
# Wheels are zips and sdists gzipped tars (wheel/inspect, source/archive): zlib only, static.
# Debian's mingw zlib is built without ZLIB_WINAPI: said here, because libarchive would find out
# by running a test program, which a cross build cannot (and CMake 3.25 crashes trying).
# libarchive builds a DLL beside its static library whatever BUILD_SHARED_LIBS says: only the
# static one is built, and installed with its two headers (FindLibArchive looks for no more).
archive_lib() {
  local zlib=/usr/$host/lib/libz.a
  targets=archive_static cmake_lib libarchive -DZLIB_LIBRARY="$zlib" -DZLIB_WINAPI=OFF \
    -DZLIB_WINAPI_WITH_LIB="$zlib" -DENABLE_ZLIB=ON -DENABLE_OPENSSL=OFF -DENABLE_CNG=OFF -DENABLE_MBEDTLS=OFF \
    -DENABLE_NETTLE=OFF -DENABLE_LIBB2=OFF -DENABLE_LZ4=OFF -DENABLE_LZO=OFF -DENABLE_LZMA=OFF -DENABLE_ZSTD=OFF \
    -DENABLE_BZip2=OFF -DENABLE_LIBXML2=OFF -DENABLE_EXPAT=OFF -DENABLE_PCREPOSIX=OFF -DENABLE_LibGCC=OFF \
    -DENABLE_ICONV=OFF -DENABLE_TAR=OFF -DENABLE_CPIO=OFF -DENABLE_CAT=OFF -DENABLE_XATTR=OFF -DENABLE_ACL=OFF \
    -DENABLE_TEST=OFF
  mkdir -p "$staged/lib" "$staged/include"
  cp "$work/build/libarchive/libarchive/libarchive_static.a" "$staged/lib/libarchive.a"
  cp "$work/src/libarchive/libarchive/archive.h" "$work/src/libarchive/libarchive/archive_entry.h" "$staged/include/"
}
pids=()
small_libs & pids+=($!)
curl_lib & pids+=($!)
archive_lib & pids+=($!)
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ] || { echo "mingw-deps: a library failed to build (above)" >&2; exit 1; }

# Header-only libraries with their CMake package files, as the -dev packages install them.
for dev in libcli11-dev nlohmann-json3-dev libexpected-dev; do
  dpkg-query -L "$dev" | while read -r f; do
    [ -f "$f" ] || continue
    case "$f" in
      /usr/include/*) rel=${f#/usr/} ;;
      /usr/share/cmake/* | /usr/lib/cmake/* | /usr/share/pkgconfig/*) rel=${f#/usr/} ;;
      /usr/lib/*/cmake/*) rel=lib/cmake/${f#/usr/lib/*/cmake/} ;;
      *) continue ;;
    esac
    mkdir -p "$staged/$(dirname "$rel")"
    cp "$f" "$staged/$rel"
  done
done

touch "$prefix/.complete"
# Builds for other keys (an older script or other library versions) are not used again.
for old in "$root"/*/; do
  [ "${old%/}" = "$prefix" ] || rm -rf "${old%/}"
done
echo "mingw-deps: built in $((SECONDS - start))s into $prefix"
echo "$prefix" >&3
