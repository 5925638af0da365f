#!/usr/bin/env python3
"""Wheels built under `naming: upstream` install the ways FlashAttention's own wheels do.

  upstream_install.py --wheel WHEEL --python PY --source DIR [--fabuild-wheel WHEEL]

WHEEL is a wheel fabuild filed under `naming: upstream` (tests/e2e/example_build.sh builds one):
the label in its file name, the plain version in METADATA. It is served as a release asset,
<base>/v<version>/<file>, by a real HTTP server on 127.0.0.1, and installed with the real pip and
the real uv, each into a fresh --target directory with PY (an interpreter with torch):

  - the setup.py download path: `pip install --no-build-isolation DIR` (and uv's) on the example's
    source tree, whose setup.py does what FlashAttention's does (compute the asset's name from
    torch's CUDA major, torch's version and C++ ABI and the Python, download it, rename it to
    the plain version's name, hand it to the installer) with FLASH_EXAMPLE_BASE_WHEEL_URL
    pointing at the server;
  - by direct URL.

Each install must fetch that asset, compile nothing, and give a module that imports against
torch. With --fabuild-wheel (the same cell built under fabuild's naming, the label in METADATA
too) served under the same asset name, the setup.py path must fail: the control that shows the
check can fail, and why `naming: upstream` keeps METADATA plain.
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import index_support as support  # noqa: E402

check = support.check


def installer_env(base_url):
    """Nothing from the caller's pip or uv configuration: no index, no cache, no find-links."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update({"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_CACHE_DIR": "1", "PIP_CONFIG_FILE": os.devnull,
                "UV_NO_CACHE": "1", "UV_NO_CONFIG": "1", "PIP_NO_INDEX": "1",
                "FLASH_EXAMPLE_BASE_WHEEL_URL": base_url + "{tag_name}/{wheel_name}"})
    env.pop("FLASH_ATTENTION_FORCE_BUILD", None)
    return env


def install(tool, python, what, target, env, build_isolation_off):
    if tool == "pip":
        argv = [python, "-m", "pip", "install", "--no-deps", "--target", target]
    else:
        argv = [shutil.which("uv") or "uv", "pip", "install", "--python", python, "--no-deps", "--no-index",
                "--target", target]
    if build_isolation_off:
        argv.append("--no-build-isolation")
    argv.append(what)
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)


def extension_digest(directory):
    """sha256 of the one compiled module (flash_example_cuda*.so) under `directory`."""
    for root, _, files in os.walk(directory):
        for f in files:
            if f.startswith("flash_example_cuda") and f.endswith(".so"):
                with open(os.path.join(root, f), "rb") as fh:
                    return hashlib.sha256(fh.read()).hexdigest()
    return None


def wheel_extension_digest(wheel):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            base = os.path.basename(name)
            if base.startswith("flash_example_cuda") and base.endswith(".so"):
                return hashlib.sha256(z.read(name)).hexdigest()
    return None


def imports(python, target):
    env = dict(os.environ, PYTHONPATH=target)
    r = subprocess.run([python, "-c", "import torch, flash_example, flash_example_cuda; print(flash_example.__file__)"],
                       env=env, capture_output=True, text=True, cwd="/")
    return r.returncode == 0 and r.stdout.strip().startswith(target), r.stderr.strip()[-400:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--fabuild-wheel")
    a = ap.parse_args()

    name = os.path.basename(a.wheel)
    version, label = name.split("-")[1].split("+")
    want = wheel_extension_digest(a.wheel)
    check(want is not None, f"{name} holds the compiled module")
    with zipfile.ZipFile(a.wheel) as z:
        metadata = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        check(metadata == [f"flash_example-{version}.dist-info/METADATA"], f"dist-info named for {version}: {metadata}")
        text = z.read(metadata[0]).decode() if metadata else ""
        check(f"\nVersion: {version}\n" in text, f"METADATA says Version: {version}, the label ({label}) in the file name only")

    work = tempfile.mkdtemp(prefix="fabuild-upstream-")
    try:
        release = os.path.join(work, "release")
        os.makedirs(os.path.join(release, f"v{version}"))
        shutil.copy(a.wheel, os.path.join(release, f"v{version}", name))
        server, base = support.serve(release)
        env = installer_env(base)
        asset = f"/v{version}/{urllib.parse.quote(name)}"
        for tool in ("pip", "uv"):
            # setup.py's download path, from a clean copy of the source tree each time.
            src = os.path.join(work, f"src-{tool}")
            shutil.copytree(a.source, src, ignore=shutil.ignore_patterns("build", "dist", "*.egg-info"))
            target = os.path.join(work, f"setup-{tool}")
            server.requests.clear()
            r = install(tool, a.python, src, target, env, True)
            out = r.stdout + r.stderr
            fetched = [p for p in server.requests if urllib.parse.unquote(p) == urllib.parse.unquote(asset)]
            check(r.returncode == 0, f"{tool}: setup.py's download path installs ({out.strip()[-600:]})")
            check(bool(fetched), f"{tool}: setup.py fetched the release asset {asset} (asked: {server.requests})")
            check(extension_digest(target) == want, f"{tool}: the installed module is the served wheel's, not a build")
            ok, err = imports(a.python, target)
            check(ok, f"{tool}: the installed module imports against torch {err}")
            # By URL, as people write it in requirements files.
            target = os.path.join(work, f"url-{tool}")
            r = install(tool, a.python, base.rstrip("/") + asset, target, env, False)
            check(r.returncode == 0, f"{tool}: installs by direct URL ({(r.stdout + r.stderr).strip()[-600:]})")
            check(extension_digest(target) == want, f"{tool}: the URL install holds the served module")
            ok, err = imports(a.python, target)
            check(ok, f"{tool}: the URL install imports {err}")
        server.shutdown()

        if a.fabuild_wheel:
            # The same cell under fabuild's naming (the label in METADATA too), served as the same
            # asset: setup.py renames it to the plain version and pip refuses the mismatch.
            bad = os.path.join(work, "release-fabuild")
            os.makedirs(os.path.join(bad, f"v{version}"))
            shutil.copy(a.fabuild_wheel, os.path.join(bad, f"v{version}", name))
            server, base = support.serve(bad)
            src = os.path.join(work, "src-control")
            shutil.copytree(a.source, src, ignore=shutil.ignore_patterns("build", "dist", "*.egg-info"))
            r = install("pip", a.python, src, os.path.join(work, "control"), installer_env(base), True)
            out = r.stdout + r.stderr
            check(r.returncode != 0 and "unexpected file name" in out,
                  "control: a wheel with its label in METADATA fails setup.py's download path under pip "
                  f"(exit {r.returncode}: {out.strip()[-300:]})")
            server.shutdown()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"upstream_install: {support.CHECKS[0] - len(support.FAILURES)} of {support.CHECKS[0]} checks passed")
    return 1 if support.FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
