#!/usr/bin/env python3
"""What pip installs of each torch series, read from pip's configured index, for fabuild's
compatibility tables (docs/matrix.md, "Compatibility tables"; src/matrix/compat.cpp).

For every torch series from 2.4 on that the index carries, newest release first:
  - the Pythons it has wheels for (`pip index versions torch --python-version 3.X`), and the
    free-threaded ones (the same with `--abi cp3Xt`);
  - the CUDA build of its Linux wheel, from the wheel's own dependencies as pip resolves them
    (`pip install --dry-run --report`: nvidia-cuda-runtime-cu12==12.8.90 means cu128,
    cuda-toolkit==13.2.2 means cu132), without downloading the wheel.
Prints them as a `compat:` block (torch_pypi_cuda, torch_python, torch_free_threaded) that a matrix can carry as
overrides, or that goes into compat.cpp when the built-in tables are refreshed.

With --check FABUILD, also plans one matrix per series with that fabuild (torch from pip's
index, every known Python, the series' own CUDA build and one other) and says where its
tables disagree: a Python kept or dropped wrongly, PyPI's build dropped or another kept.
Exit 1 when they disagree.

Usage: scripts/refresh-compat.py [--series 2.11 2.15 ...] [--check build/fabuild]
Needs network access to pip's index: minutes, not seconds (two dozen index queries).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

PYTHONS = [f"3.{m}" for m in range(8, 16)]
FREE_THREADED = [f"3.{m}" for m in range(13, 16)]  # CPython builds free-threaded since 3.13
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64"]


def pip(*args):
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    return subprocess.run(cmd, capture_output=True, text=True)


def platform_args():
    return [a for p in PLATFORMS for a in ("--platform", p)]


def versions_for(python, free_threaded=False):
    """torch versions with a wheel for this Python (its free-threaded build), newest first."""
    abi = ["--abi", "cp" + python.replace(".", "") + "t"] if free_threaded else []
    r = pip("index", "versions", "torch", "--python-version", python, "--only-binary=:all:",
            "--implementation", "cp", *abi, *platform_args())
    m = re.search(r"Available versions: (.*)", r.stdout)
    return [v.strip() for v in m.group(1).split(",")] if m else []


def series_of(version):
    return ".".join(version.split(".")[:2])


def key(series):
    return tuple(int(x) for x in series.split("."))


def cuda_build(series, python):
    """The CUDA major.minor of PyPI's wheel of this series, from its dependencies."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        r = pip("install", "--dry-run", "--quiet", "--report", report, "--no-deps", "--ignore-installed",
                "--only-binary", ":all:", "--python-version", python, *platform_args(),
                "--target", os.path.join(tmp, "t"), f"torch=={series}.*")
        if r.returncode != 0:
            return None, None
        item = json.load(open(report))["install"][0]["metadata"]
    for dep in item.get("requires_dist", []):
        m = re.match(r"(nvidia-cuda-runtime-cu\d+|cuda-toolkit)\b[^=]*==\s*(\d+)\.(\d+)", dep.replace(" (", "").replace(")", ""))
        if m:
            return f"{m.group(2)}.{m.group(3)}", item["version"]
    return "none", item["version"]  # a CPU-only build


def facts(wanted):
    by_python = {p: versions_for(p) for p in PYTHONS}
    series = {}
    for python, versions in by_python.items():
        for v in versions:
            s = series_of(v)
            if key(s) >= (2, 4) and (not wanted or s in wanted):
                series.setdefault(s, set()).add(python)
    free = {}
    for python in FREE_THREADED:
        for v in versions_for(python, free_threaded=True):
            free.setdefault(series_of(v), set()).add(python)
    out = {}
    for s in sorted(series, key=key):
        pythons = sorted(series[s], key=lambda p: key(p))
        cuda, version = cuda_build(s, pythons[-1])
        ft = sorted(free.get(s, ()), key=key)
        out[s] = {"python": (pythons[0], pythons[-1]), "cuda": cuda, "latest": version,
                  "free_threaded": (ft[0], ft[-1]) if ft else None}
    return out


def check(fabuild, table):
    """Plans each series with fabuild's own tables and lists where they disagree."""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for s, f in table.items():
            if f["cuda"] in (None, "none"):
                continue
            other = "12.6" if f["cuda"] != "12.6" else "12.8"
            matrix = os.path.join(tmp, f"torch{s}.yaml")
            with open(matrix, "w") as m:
                m.write(f'package: flash-example\nversions: ["0.1.0"]\ntorch: ["{s}"]\n'
                        f'cuda: [{{toolkit: "{f["cuda"]}", torch_cuda: "{f["cuda"]}"}}, '
                        f'{{toolkit: "{other}", torch_cuda: "{other}"}}]\n'
                        f'python: [{", ".join(json.dumps(p) for p in PYTHONS + [t + "t" for t in FREE_THREADED])}]\n'
                        'provision: host\nsource: {path: .}\n')
            r = subprocess.run([fabuild, matrix, "--dry-run", "--format", "json", "--allow-empty"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                problems.append(f"torch {s}: fabuild exited {r.returncode}: {r.stderr.strip()}")
                continue
            plan = json.loads(r.stdout)
            kept = {(c["python"], c["torch_cuda"]) for c in plan["cells"]}
            lo, hi = (key(p) for p in f["python"])
            for p in PYTHONS:
                tag = "cp" + p.replace(".", "")
                inside = lo <= key(p) <= hi
                if inside != ((tag, f["cuda"]) in kept):
                    problems.append(f"torch {s}: Python {p} is {'dropped' if inside else 'kept'}, PyPI has "
                                    f"{'a' if inside else 'no'} wheel for it")
                if p in FREE_THREADED:
                    ft = f["free_threaded"]
                    inside_ft = bool(ft) and key(ft[0]) <= key(p) <= key(ft[1])
                    if inside_ft != ((tag + "t", f["cuda"]) in kept):
                        problems.append(f"torch {s}: Python {p}t is {'dropped' if inside_ft else 'kept'}, PyPI has "
                                        f"{'a' if inside_ft else 'no'} free-threaded wheel for it")
                if (tag, other) in kept:
                    problems.append(f"torch {s}: a cu{other.replace('.', '')} cell is kept, PyPI's build is "
                                    f"cu{f['cuda'].replace('.', '')}")
            if plan["warnings"]:
                problems.append(f"torch {s}: {'; '.join(plan['warnings'])}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--series", nargs="*", default=[], help="only these torch series (default: all from 2.4)")
    ap.add_argument("--check", metavar="FABUILD", help="compare with what this fabuild's tables plan")
    args = ap.parse_args()
    table = facts(set(args.series))
    print("# pip's index, " + ", ".join(f"{s}: torch {f['latest']}" for s, f in table.items()))
    print("compat:")
    print("  torch_pypi_cuda: {" + ", ".join(f'"{s}": "{f["cuda"]}"' for s, f in table.items() if f["cuda"]) + "}")
    print("  torch_python: {" + ", ".join(f'"{s}": "{f["python"][0]}-{f["python"][1]}"' for s, f in table.items()) + "}")
    print("  torch_free_threaded: {" + ", ".join(f'"{s}": "{f["free_threaded"][0]}-{f["free_threaded"][1]}"'
                                                  for s, f in table.items() if f["free_threaded"]) + "}")
    if args.check:
        problems = check(args.check, table)
        for p in problems:
            print("disagrees:", p, file=sys.stderr)
        print(f"check: {len(table)} series, {len(problems)} disagreement{'s' if len(problems) != 1 else ''}",
              file=sys.stderr)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
