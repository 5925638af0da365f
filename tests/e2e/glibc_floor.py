#!/usr/bin/env python3
"""The glibc floor fabuild records for each filed wheel, against auditwheel's reading of it.

Usage: glibc_floor.py WHEELHOUSE

A wheel tagged manylinux_2_X (`platform_tag:`) must be tagged with the policy auditwheel reads.

For every wheel in WHEELHOUSE/manifest.json: the manifest's "needs" must name a glibc, and the
most compatible manylinux policy auditwheel knows that admits that glibc (and the recorded
GLIBCXX_ version) must be the one `auditwheel show` constrains the wheel to; report.json,
summary.md and index.html must show it. auditwheel comes from pip's index into a cached
virtualenv ($FABUILD_TEST_CACHE or ~/.cache/fabuild-test); exit 77 when it cannot be installed.
"""
import json
import os
import re
import subprocess
import sys

CACHE = os.environ.get("FABUILD_TEST_CACHE") or os.path.expanduser("~/.cache/fabuild-test")
VENV = os.path.join(CACHE, "auditwheel-venv")
SKIP = 77


def auditwheel():
    """The cached virtualenv's auditwheel, installed on first use; None when it cannot be."""
    exe = os.path.join(VENV, "bin", "auditwheel")
    if os.path.exists(exe):
        return exe
    try:
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([os.path.join(VENV, "bin", "python"), "-m", "pip", "install", "--quiet", "auditwheel"],
                       check=True, timeout=300)
    except (subprocess.SubprocessError, OSError) as e:
        print(f"glibc floor: auditwheel cannot be installed into {VENV}: {e}")
        return None
    return exe


def policies():
    """auditwheel's manylinux policies, most compatible first: (name, glibc as a tuple, GLIBCXX versions)."""
    python = os.path.join(VENV, "bin", "python")
    path = subprocess.run([python, "-c", "import auditwheel.policy as p, os; print(os.path.dirname(p.__file__))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    found = []
    for p in json.load(open(os.path.join(path, "manylinux-policy.json"))):
        m = re.fullmatch(r"manylinux_(\d+)_(\d+)", p["name"])
        if m:  # not "linux"
            found.append((p["priority"], p["name"], (int(m[1]), int(m[2])),
                          set(p["symbol_versions"].get("x86_64", {}).get("GLIBCXX", []))))
    return [(name, glibc, glibcxx) for _, name, glibc, glibcxx in sorted(found, key=lambda f: -f[0])]


def numbers(version):
    return tuple(int(part) for part in version.split("."))


def expected_policy(needs, known):
    """The most compatible policy that admits what fabuild recorded (PEP 600: manylinux_2_X runs on glibc >= 2.X)."""
    for name, glibc, glibcxx in known:
        if glibc >= numbers(needs["glibc"]) and ("glibcxx" not in needs or needs["glibcxx"] in glibcxx):
            return name
    return None


def constrained_to(exe, wheel):
    """The policy `auditwheel show` constrains the wheel to; None when its symbols allow the most compatible one."""
    out = subprocess.run([exe, "show", wheel], check=True, capture_output=True, text=True).stdout
    text = " ".join(out.split())  # auditwheel wraps its lines
    m = re.search(r'This constrains the platform tag to "(manylinux_\d+_\d+)_x86_64"', text)
    return m[1] if m else None


def main():
    house = sys.argv[1]
    exe = auditwheel()
    if exe is None:
        return SKIP
    known = policies()
    cells = json.load(open(os.path.join(house, "manifest.json")))["cells"]
    page = open(os.path.join(house, "index.html"), encoding="utf-8").read()
    summary = open(os.path.join(house, "summary.md"), encoding="utf-8").read()
    report = {c["id"]: c for c in json.load(open(os.path.join(house, "report.json")))["cells"]}
    failures = 0
    for cid, cell in sorted(cells.items()):
        needs = cell.get("needs", {})
        if "glibc" not in needs:
            print(f"glibc floor: FAIL: {cid}: the manifest records no glibc floor: {needs}")
            failures += 1
            continue
        want = expected_policy(needs, known)
        got = constrained_to(exe, os.path.join(house, cell["wheel"]))
        got = got or known[0][0]
        shown = f"needs glibc ≥ {needs['glibc']}"
        problems = []
        if want != got:
            problems.append(f"fabuild's floor {needs} means {want}, auditwheel says {got}")
        # A wheel fabuild tagged manylinux (platform_tag:) carries the policy auditwheel reads from it.
        tag = os.path.basename(cell["wheel"])[:-len(".whl")].split("-")[-1]
        if tag.startswith("manylinux") and tag != f"{got}_x86_64":
            problems.append(f"it is tagged {tag}, auditwheel constrains it to {got}_x86_64")
        if report.get(cid, {}).get("needs") != needs:
            problems.append(f"report.json says {report.get(cid, {}).get('needs')}")
        if shown not in summary:
            problems.append(f"summary.md does not say '{shown}'")
        if shown not in page:
            problems.append(f"index.html does not say '{shown}'")
        print(f"glibc floor: {cid}: glibc {needs['glibc']}, GLIBCXX_{needs.get('glibcxx', '-')} -> {want}; "
              f"auditwheel: {got}" + ("" if not problems else "; FAIL: " + "; ".join(problems)))
        failures += bool(problems)
    if page.count("needs glibc ≥") < len(cells):
        print(f"glibc floor: FAIL: index.html shows {page.count('needs glibc ≥')} floors for {len(cells)} wheels")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
