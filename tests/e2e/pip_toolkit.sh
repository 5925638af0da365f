#!/usr/bin/env bash
# `fabuild toolkit install` with real pip against local stand-ins for NVIDIA's packages (wheels
# made here, served by pip's --find-links or by an index on 127.0.0.1), so that every way an
# install can go wrong is seen without downloading 300 MB (tests/e2e/multi_version.sh installs
# the real one from PyPI):
#   - a good install: the tree, its marker and links, nothing else left; a second run is a no-op;
#     two installs at once make one toolkit;
#   - an nvcc that reports another release, an nvcc that cannot compile, a CUDA version the
#     index does not have, a download that stops halfway, a full disk (root: a small tmpfs):
#     each a clear error (exit 1) naming what failed, and nothing left that looks installed;
#   - CUDA 12.x: exit 2, PyPI has no compiler for it;
#   - a build whose cells need a toolkit that cannot be installed fails them at the toolkit
#     step and files nothing.
# Usage: pip_toolkit.sh FABUILD SOURCE_DIR
set -euo pipefail
fabuild=${1:?usage: pip_toolkit.sh FABUILD SOURCE_DIR}
src=${2:?}
work=$(mktemp -d /tmp/fabuild-pip-toolkit.XXXXXX)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  mountpoint -q "$work/small" 2>/dev/null && umount "$work/small" || true
  mountpoint -q "$work/full" 2>/dev/null && umount "$work/full" || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "pip_toolkit: FAIL: $*"; exit 1; }
passed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }

# wheels DIR RELEASE NVCC_MODE [BIG]: the five packages for CUDA 13.2 (nvidia-cuda-nvcc 13.2.1),
# whose nvcc reports RELEASE and compiles (NVCC_MODE=compiles) or fails (fails); BIG adds a
# member of that many MB of zeros (small packed, large unpacked).
wheels() {
  python3 - "$@" <<'PY'
import base64, hashlib, os, sys, zipfile
out, release, mode = sys.argv[1:4]
big = int(sys.argv[4]) if len(sys.argv) > 4 else 0
os.makedirs(out, exist_ok=True)
nvcc = f"""#!/bin/sh
if [ "$1" = --version ]; then echo "Cuda compilation tools, release {release}, V{release}.1"; exit 0; fi
{'echo "nvcc fatal : Failed to preprocess host compiler properties." >&2; exit 1' if mode == 'fails' else ''}
out=""; while [ $# -gt 0 ]; do [ "$1" = -o ] && out="$2"; shift; done
[ -n "$out" ] && : > "$out"
"""
files = {
    "nvidia-cuda-nvcc": {"nvidia/cu13/bin/nvcc": (nvcc.encode(), 0o755)},
    "nvidia-nvvm": {"nvidia/cu13/nvvm/bin/cicc": (b"#!/bin/sh\n", 0o755)},
    "nvidia-cuda-crt": {"nvidia/cu13/include/crt/host_config.h": (b"/* crt */\n", 0o644)},
    "nvidia-cuda-runtime": {"nvidia/cu13/lib/libcudart.so.13": (b"\x7fELF", 0o644),
                            "nvidia/cu13/include/cuda_runtime.h": (b"/* runtime */\n", 0o644)},
    "nvidia-cuda-cccl": {"nvidia/cu13/include/cccl/cuda/std/cstdint": (b"/* cccl */\n", 0o644)},
}
if big:
    files["nvidia-cuda-cccl"]["nvidia/cu13/include/cccl/huge.bin"] = (bytes(big << 20), 0o644)
for project, members in files.items():
    dist, version = project.replace("-", "_"), "13.2.1"
    info = f"{dist}-{version}.dist-info"
    members = dict(members)
    members[f"{info}/METADATA"] = (f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n".encode(), 0o644)
    members[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n", 0o644)
    record = ""
    for name, (data, _) in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{name},sha256={digest},{len(data)}\n"
    record += f"{info}/RECORD,,\n"
    members[f"{info}/RECORD"] = (record.encode(), 0o644)
    with zipfile.ZipFile(os.path.join(out, f"{dist}-{version}-py3-none-any.whl"), "w", zipfile.ZIP_DEFLATED) as z:
        for name, (data, mode) in members.items():
            zi = zipfile.ZipInfo(name)
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
PY
}

# install ROOT LINKS [CUDA]: fabuild toolkit install with pip reading only LINKS; output in $out.
install() {
  local root=$1 links=$2 cuda=${3:-13.2}
  set +e
  out=$(PIP_NO_INDEX=1 PIP_FIND_LINKS="$links" PIP_INDEX_URL= PIP_RETRIES=0 \
        "$fabuild" toolkit install "$cuda" --dir "$root" 2>&1)
  code=$?
  set -e
}

# Nothing under ROOT that looks installed or half made (the entries' lock files may stay).
nothing_left() {
  local left
  left=$(ls -A "$1" 2>/dev/null | grep -vE '^\..+\.(make|use)$' || true)
  [ -z "$left" ] || fail "$2: left behind in $1: $left"
}

wheels "$work/good" 13.2 compiles
wheels "$work/wrong" 13.1 compiles
wheels "$work/broken" 13.2 fails

install "$work/tk" "$work/good"
[ "$code" = 0 ] || fail "a good install exited $code: $out"
home=$work/tk/cuda-13.2/nvidia/cu13
[ "$(printf '%s\n' "$out" | tail -n 1)" = "$home" ] || fail "the last line is not CUDA_HOME: $out"
[ -L "$home/lib64" ] && [ -L "$home/lib/libcudart.so" ] || fail "no lib64 or libcudart.so link in $home"
python3 -c "import json,sys; m=json.load(open(sys.argv[1])); assert m['cuda']=='13.2' and m['nvcc']=='13.2.1' and m['packages']['nvidia-cuda-nvcc']=='13.2.1', m" \
  "$work/tk/cuda-13.2/.fabuild-toolkit.json" || fail "the marker"
[ -z "$(ls -A "$work/tk" | grep partial || true)" ] || fail "a staging directory was left"
[ ! -e "$home/../../.fabuild-check" ] || fail "the check kernel was left"
ok "a good install: the tree, its links and marker, nothing else"

start=$(date +%s%N)
install "$work/tk" "$work/good"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$code" = 0 ] && grep -q "is ready at" <<<"$out" || fail "a second install: $code $out"
[ "$ms" -lt 2000 ] || fail "a second install took ${ms} ms"
ok "a second install is a no-op (${ms} ms)"

install "$work/w" "$work/wrong"
[ "$code" = 1 ] || fail "a wrong nvcc exited $code"
grep -q "its nvcc reports release 13.1, not 13.2" <<<"$out" || fail "no word of the wrong release: $out"
nothing_left "$work/w" "a wrong nvcc"
ok "an nvcc of another release is refused, nothing left"

install "$work/b" "$work/broken"
[ "$code" = 1 ] && grep -q "its nvcc did not compile a test kernel" <<<"$out" || fail "a broken nvcc: $code $out"
grep -q "Failed to preprocess host compiler properties" <<<"$out" || fail "nvcc's own words are missing: $out"
nothing_left "$work/b" "a broken nvcc"
ok "an nvcc that cannot compile is refused, with its error"

install "$work/m" "$work/good" 13.7
[ "$code" = 1 ] && grep -q "pip's index has no CUDA 13.7 compiler packages" <<<"$out" || fail "13.7: $code $out"
nothing_left "$work/m" "a missing version"
ok "a CUDA version the index does not carry: what pip said, and what to do"

install "$work/c" "$work/good" 12.8
[ "$code" = 2 ] && grep -q "PyPI has no CUDA 12.8 compiler" <<<"$out" || fail "12.8: $code $out"
ok "CUDA 12.x: exit 2, no compiler on PyPI"

# A download that stops halfway: an index on 127.0.0.1 whose nvcc wheel ends early.
mkdir -p "$work/index"
python3 - "$work/good" "$work/index/port" <<'PY' &
import http.server, os, sys, threading
wheels, port_file = sys.argv[1:3]
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        parts = [p for p in self.path.split("/") if p]
        if len(parts) == 2 and parts[0] == "simple":
            project = parts[1].replace("-", "_")
            names = [n for n in os.listdir(wheels) if n.startswith(project + "-")]
            body = "".join(f'<a href="/files/{n}">{n}</a>\n' for n in names).encode()
            self.send_response(200); self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
        elif len(parts) == 2 and parts[0] == "files":
            data = open(os.path.join(wheels, parts[1]), "rb").read()
            self.send_response(200); self.send_header("Content-Length", str(len(data))); self.end_headers()
            self.wfile.write(data[: len(data) // 2] if "nvcc" in parts[1] else data)
            self.wfile.flush(); self.close_connection = True
        else:
            self.send_error(404)
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(port_file, "w").write(str(s.server_address[1]))
s.serve_forever()
PY
server_pid=$!
for _ in $(seq 50); do [ -s "$work/index/port" ] && break; sleep 0.1; done
port=$(cat "$work/index/port")
set +e
out=$(PIP_NO_INDEX= PIP_FIND_LINKS= PIP_INDEX_URL="http://127.0.0.1:$port/simple" PIP_RETRIES=0 PIP_NO_CACHE_DIR=1 \
      "$fabuild" toolkit install 13.2 --dir "$work/h" 2>&1)
code=$?
set -e
[ "$code" = 1 ] && grep -q "cannot install the CUDA 13.2 toolkit from PyPI: pip failed" <<<"$out" || fail "halfway: $code $out"
nothing_left "$work/h" "a download that stopped halfway"
ok "a download that stops halfway: pip's error, nothing left"

# Two installs at once: one installs, the other waits for its lock and finds it ready.
( install "$work/two" "$work/good"; echo "$code" > "$work/two-a" ) &
first=$!
( install "$work/two" "$work/good"; echo "$code" > "$work/two-b" ) &
wait "$first" "$!"
[ "$(cat "$work/two-a")" = 0 ] && [ "$(cat "$work/two-b")" = 0 ] || fail "two installs at once: $(cat "$work/two-a" "$work/two-b")"
[ "$(ls "$work/two" | grep -c '^cuda-13.2$')" = 1 ] && [ -z "$(ls -A "$work/two" | grep partial || true)" ] || fail "two installs left $(ls -A "$work/two")"
ok "two installs at once make one toolkit"

if [ "$(id -u)" = 0 ] && mkdir -p "$work/small" "$work/full" && mount -t tmpfs -o size=64m tmpfs "$work/small" 2>/dev/null; then
  install "$work/small" "$work/good"
  [ "$code" = 1 ] && grep -q "GB free on the disk of" <<<"$out" || fail "a small disk: $code $out"
  nothing_left "$work/small" "a small disk"
  ok "too little free space is refused before pip starts"
  wheels "$work/huge" 13.2 compiles 1200
  mount -t tmpfs -o size=1100m tmpfs "$work/full"
  install "$work/full" "$work/huge"
  [ "$code" = 1 ] && grep -q "the disk filled up" <<<"$out" || fail "a full disk: $code $out"
  nothing_left "$work/full" "a full disk"
  [ "$(df --output=used -B1M "$work/full" | tail -n 1 | tr -d ' ')" -lt 10 ] || fail "the full disk still holds $(df -h "$work/full" | tail -n 1)"
  ok "a disk that fills up during the install: pip's error, the space given back"
else
  echo "skipped: the full-disk cases need root to mount a tmpfs"
fi

# A build whose cells need a toolkit that cannot be installed: they fail at that step, and
# nothing is filed.
cat > "$work/m.yaml" <<EOF
package: flash-example
versions: ["0.1.0"]
torch: ["2.11"]
cuda: ["13.0"]
python: [cp312]
archs: "90"
provision: host
toolkit: pip
source: {path: $src/examples/flash_example}
EOF
set +e
out=$(FABUILD_CACHE_DIR="$work/cache" PIP_NO_INDEX=1 PIP_FIND_LINKS="$work/good" PIP_RETRIES=0 \
      "$fabuild" "$work/m.yaml" -o "$work/house" 2>&1)
code=$?
set -e
[ "$code" = 1 ] || fail "a build with an uninstallable toolkit exited $code: $out"
grep -q "FAILED" <<<"$out" || fail "no failed cell: $out"
grep -q "pip's index has no CUDA 13.0 compiler packages" "$work/house/logs/toolkit-cuda-13.0.log" || fail "the toolkit log: $(cat "$work/house/logs/toolkit-cuda-13.0.log")"
[ -z "$(find "$work/house" -name '*.whl')" ] || fail "a wheel was filed"
ok "cells whose toolkit cannot be installed fail, and nothing is filed"

echo "pip_toolkit: $passed passed, 0 failed"
