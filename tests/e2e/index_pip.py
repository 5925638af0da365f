#!/usr/bin/env python3
"""pip installs from the index fabuild generates, served by a real HTTP server on 127.0.0.1.

  index_pip.py FABUILD               builds a wheelhouse with fabuild (cells for cp311 and cp312
                                     whose commands write complete wheels), then checks it
  index_pip.py FABUILD --wheelhouse DIR
                                     checks a wheelhouse a real build made (tests/e2e/example_build.sh)

Checks, each with a real pip in a fresh virtualenv of a real Python of this machine:
  - the variant index (cu130/torch2.11/simple/) gives each Python the wheel of its own tag;
  - pip reads the PEP 658 metadata (it asks for <wheel>.metadata);
  - --require-hashes with the wheel's sha256 installs; a wrong sha256 is refused;
  - a wheel changed after indexing is refused through the index's #sha256= fragment;
  - the same index works from file://.
FABUILD_SKIP_PIP_TESTS=1 skips (exit 77); otherwise a missing Python is a failure.
"""

import argparse
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import index_support as support  # noqa: E402

check, FAILURES, CHECKS = support.check, support.FAILURES, support.CHECKS


def find_python(version):
    """This machine's CPython `version` ("3.11"): on PATH, else pyenv's."""
    found = shutil.which(f"python{version}")
    candidates = ([found] if found else []) + sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python")))
    for c in candidates:
        r = subprocess.run([c, "-c", "import sys, venv; print(sys.version_info[:2])"], capture_output=True, text=True)
        if r.returncode == 0:
            return c
    return None


def pip_env():
    """pip with nothing but the command line: no configured index, find-links or cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_CACHE_DIR"] = "1"
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


class Venv:
    def __init__(self, python, path):
        subprocess.run([python, "-m", "venv", path], check=True)
        self.python = os.path.join(path, "bin", "python")

    def pip(self, *args):
        return subprocess.run([self.python, "-m", "pip", "install", "--no-deps", "--force-reinstall", *args],
                              capture_output=True, text=True, env=pip_env(), timeout=300)

    def installed_tag(self):
        """The Python tag of the flash-example wheel pip installed, from its WHEEL file (the
        package itself may need torch to import)."""
        code = ("import importlib.metadata as m; w = m.distribution('flash-example').read_text('WHEEL'); "
                "print([l.split(':', 1)[1].strip() for l in w.splitlines() if l.startswith('Tag:')][0].split('-')[0])")
        r = subprocess.run([self.python, "-c", code], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def wheel_for(house, tag):
    # A label's case: fabuild's own builds keep it (cxx11abiTRUE), make-wheel lower-cases it.
    want = support.wheel_name(tag).lower()
    hits = [p for p in glob.glob(os.path.join(house, "**", "*.whl"), recursive=True) if os.path.basename(p).lower() == want]
    return hits[0] if hits else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("fabuild")
    parser.add_argument("--wheelhouse")
    parser.add_argument("--pythons", default="3.11,3.12")
    args = parser.parse_args()
    if os.environ.get("FABUILD_SKIP_PIP_TESTS") == "1":
        print("skipped: FABUILD_SKIP_PIP_TESTS=1")
        return 77
    start = time.monotonic()
    work = tempfile.mkdtemp(prefix="fabuild-index-pip-")
    try:
        return run(args, work, start)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, work, start):
    versions = args.pythons.split(",")
    pythons = {v: find_python(v) for v in versions}
    for v, p in pythons.items():
        if not check(p is not None, f"a Python {v} to run pip with (on PATH as python{v}, or under ~/.pyenv)"):
            return 1
    tags = ["cp" + v.replace(".", "") for v in versions]

    if args.wheelhouse:
        house = args.wheelhouse
        r = subprocess.run([args.fabuild, "index", house], capture_output=True, text=True)
        check(r.returncode == 0, f"fabuild index {house} exits 0 (got {r.returncode}: {r.stderr.strip()})")
    else:
        house, code, output = support.build_wheelhouse(args.fabuild, work, tags)
        if not check(code == 0, f"fabuild builds the wheelhouse (exit {code})"):
            print(output)
            return 1
        check("fabuild: index:" in output, "the build made the index at its end")
    for f in ["simple/index.html", f"simple/{support.PROJECT}/index.html", f"{support.VARIANT}/simple/{support.PROJECT}/index.html"]:
        check(os.path.isfile(os.path.join(house, f)), f"{f} exists")

    server, base = support.serve(house)
    variant = f"{base}{support.VARIANT}/simple/"
    venvs = {}
    try:
        for v, tag in zip(versions, tags):
            venv = venvs[tag] = Venv(pythons[v], os.path.join(work, f"venv-{tag}"))
            before = len(server.requests)
            r = venv.pip("--index-url", variant, support.PROJECT)
            if not check(r.returncode == 0, f"python{v}: pip install {support.PROJECT} --index-url {variant}"):
                print(r.stdout + r.stderr)
                continue
            check(venv.installed_tag() == tag, f"python{v}: pip picked the {tag} wheel (got {venv.installed_tag()})")
            asked = server.requests[before:]
            check(any(p.endswith(".whl.metadata") for p in asked), f"python{v}: pip read the PEP 658 metadata ({asked})")

        tag, venv = tags[0], venvs[tags[0]]
        wheel = wheel_for(house, tag)
        req = os.path.join(work, "requirements.txt")
        with open(req, "w") as f:
            f.write(f"{support.PROJECT}=={support.VERSION} --hash=sha256:{sha256(wheel)}\n")
        r = venv.pip("--require-hashes", "-r", req, "--index-url", f"{base}simple/")
        check(r.returncode == 0, f"pip install --require-hashes from {base}simple/ " + ("" if r.returncode == 0 else r.stderr[-800:]))
        check(venv.installed_tag() == tag, "--require-hashes installed the right wheel")
        with open(req, "w") as f:
            f.write(f"{support.PROJECT}=={support.VERSION} --hash=sha256:{'0' * 64}\n")
        r = venv.pip("--require-hashes", "-r", req, "--index-url", f"{base}simple/")
        check(r.returncode != 0 and "DO NOT MATCH THE HASHES" in r.stderr, "a wrong --hash is refused")

        r = venv.pip("--index-url", f"file://{os.path.abspath(house)}/{support.VARIANT}/simple/", support.PROJECT)
        check(r.returncode == 0 and venv.installed_tag() == tag, "the variant index works from file://" + ("" if r.returncode == 0 else r.stderr[-800:]))

        if not args.wheelhouse:  # never damage a wheelhouse we were given
            with open(wheel, "ab") as f:
                f.write(b"tampered after indexing")
            r = venv.pip("--index-url", variant, support.PROJECT)
            check(r.returncode != 0 and "DO NOT MATCH THE HASHES" in r.stderr,
                  "a wheel changed after indexing is refused through its #sha256= link")
    finally:
        server.shutdown()
    print(f"took {time.monotonic() - start:.1f}s")
    print(f"index_pip: {CHECKS[0] - len(FAILURES)} passed, {len(FAILURES)} failed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
