#!/usr/bin/env python3
"""SIGKILL during a real build of the bundled example (matrix/example.yaml: nvcc, torch's
extension builder, setup.py bdist_wheel), then the checks of kill_trials.py and a run that
must finish the cell. Minutes per trial, so not part of ctest; docs/reliability.md has the
figures of the last run.

usage: kill_real_build.py FABUILD [--trials N] [--python cp312] [--seed S]

Needs what tests/e2e/example_build.sh needs (the CUDA 13.0 toolkit, the Python, torch 2.11's
environment under ~/.cache/fabuild/venvs, made by a first build); exits 77 when a first
build cannot finish.
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kill_trials import check_wheelhouse  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def out_dirs_under(staging):
    """Processes whose FABUILD_OUT_DIR lies under `staging` (the cell's, nvcc's, cicc's...)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            env = open(f"/proc/{name}/environ", "rb").read().split(b"\0")
            state = open(f"/proc/{name}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(e.startswith(b"FABUILD_OUT_DIR=" + staging.encode() + b"/") for e in env):
            found.append(int(name))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fabuild")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--python", default="cp312")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="fabuild-kill-real-")
    house = os.path.join(work, "wheelhouse")
    staging = os.path.join(house, ".staging")
    cmd = [args.fabuild, os.path.join(ROOT, "matrix/example.yaml"), "--python", args.python, "-o", house]
    figures = {"seed": args.seed, "trials": 0, "kill_after_s": [], "orphans_after_sigkill": [],
               "orphans_left_after_next_run": 0, "failures": []}

    start = time.monotonic()
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    full = time.monotonic() - start
    if first.returncode != 0:
        print(first.stdout[-3000:], first.stderr[-3000:])
        return 77
    figures["full_build_s"] = round(full, 1)
    for trial in range(1, args.trials + 1):
        delay = rng.uniform(3, full * 0.9)
        p = subprocess.Popen(cmd + ["--force"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        figures["trials"] += 1
        figures["kill_after_s"].append(round(delay, 1))
        orphans = out_dirs_under(staging)
        figures["orphans_after_sigkill"].append(len(orphans))
        for problem in check_wheelhouse(house, strict=False):
            figures["failures"].append(f"trial {trial}: {problem}")
        again = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        m = re.search(r"recovered from an interrupted run: (.*)", again.stdout)
        figures.setdefault("recoveries", []).append(m.group(1) if m else "")
        if again.returncode != 0:
            figures["failures"].append(f"trial {trial}: the next run exited {again.returncode}: {again.stdout[-2000:]}")
        left = [pid for pid in orphans if os.path.exists(f"/proc/{pid}")
                and open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"]
        figures["orphans_left_after_next_run"] += len(left)
        for problem in check_wheelhouse(house, strict=True):
            figures["failures"].append(f"trial {trial}, after the next run: {problem}")
    print(json.dumps(figures, indent=2))
    shutil.rmtree(work, ignore_errors=True)
    return 1 if figures["failures"] or figures["orphans_left_after_next_run"] else 0


if __name__ == "__main__":
    sys.exit(main())
