"""Shared by the index and page tests: a wheelhouse made by a real fabuild build whose cells
are commands writing small but complete wheels, and a real HTTP server on 127.0.0.1.

Also a command itself: `index_support.py make-wheel TAG OUT_DIR VERSION [--fail TAG]` writes the wheel
a cell for Python TAG would file (or fails as a broken compile would, for TAG given to --fail).
"""

import base64
import functools
import hashlib
import http.server
import os
import subprocess
import sys
import threading
import zipfile

PROJECT = "flash-example"
DIST = "flash_example"
VERSION = "0.1.0+cu130torch2.11cxx11abitrue"  # as make-wheel writes it (setuptools lower-cases); fabuild's own builds keep TRUE
VARIANT = "cu130/torch2.11"


# The checks of one test script: each printed as it is made, the failed ones kept for the end.
FAILURES = []
CHECKS = [0]


def check(ok, what):
    CHECKS[0] += 1
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILURES.append(what)
    return ok


def wheel_name(tag, version=VERSION):
    return f"{DIST}-{version}-{tag}-{tag}-linux_x86_64.whl"


def make_wheel(tag, out_dir, version=VERSION):
    """A wheel as setuptools writes one: METADATA (with Requires-Python and a torch
    requirement, like the real package), WHEEL, and a RECORD that hashes every member."""
    dist_info = f"{DIST}-{version}.dist-info"
    members = {
        f"{DIST}/__init__.py": f'BUILT_FOR = "{tag}"\n',
        f"{dist_info}/METADATA": (
            "Metadata-Version: 2.1\n"
            f"Name: {PROJECT}\n"
            f"Version: {version}\n"
            "Summary: fabuild index test wheel\n"
            "Requires-Python: >=3.9\n"
            "Requires-Dist: torch\n"
        ),
        f"{dist_info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: fabuild-test\nRoot-Is-Purelib: false\nTag: {tag}-{tag}-linux_x86_64\n",
    }
    record = ""
    for name, text in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record += f"{name},sha256={digest},{len(text.encode())}\n"
    members[f"{dist_info}/RECORD"] = record + f"{dist_info}/RECORD,,\n"
    path = os.path.join(out_dir, wheel_name(tag, version))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in members.items():
            z.writestr(name, text)
    return path


MATRIX = """\
package: flash-example
versions: [{versions}]
torch: ["2.11"]
cuda: ["13.0"]
python: [{pythons}]
archs: "90"
provision: host
budget: {{cores: 2, memory_gb: 8, reserve_gb: 0}}
command: [{python}, {script}, make-wheel, "{{python}}", "{{out}}", "{{version}}+{{label}}"{fail}]
"""


def build_wheelhouse(fabuild, work, pythons, fail=None, versions=("0.1.0",)):
    """Runs `fabuild MATRIX -o work/wheelhouse` for the given Python tags; a cell for `fail`
    fails. Returns (wheelhouse, fabuild's exit code, its output)."""
    matrix = os.path.join(work, "matrix.yaml")
    with open(matrix, "w") as f:
        f.write(MATRIX.format(pythons=", ".join(pythons), versions=", ".join(f'"{v}"' for v in versions), python=sys.executable, script=os.path.abspath(__file__),
                              fail=f', "--fail", "{fail}"' if fail else ""))
    house = os.path.join(work, "wheelhouse")
    r = subprocess.run([fabuild, matrix, "-o", house], capture_output=True, text=True, timeout=300)
    return house, r.returncode, r.stdout + r.stderr


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        self.server.requests.append(self.path)


def serve(directory):
    """A static HTTP server on 127.0.0.1 (a free port) in a thread; returns (server, base URL).
    server.requests lists the paths asked for."""
    handler = functools.partial(QuietHandler, directory=directory)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.requests = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


if __name__ == "__main__" and len(sys.argv) >= 4 and sys.argv[1] == "make-wheel":
    tag, out, version = sys.argv[2], sys.argv[3], sys.argv[4].lower()
    if "--fail" in sys.argv and sys.argv[sys.argv.index("--fail") + 1] == tag:
        print(f"nvcc: error: the compile for {tag} ran out of memory (a deliberate failure)", flush=True)
        sys.exit(3)
    print("wrote", make_wheel(tag, out, version))
