#!/usr/bin/env python3
"""Scheduler efficiency: the same real cells built three ways, side by side in one run.

  fabuild      fabuild's budgeted schedule (--no-cache, so that only scheduling differs)
  sequential   one cell after another at a fixed MAX_JOBS (the bash build scripts' way)
  all-at-once  every cell at once, each build guessing MAX_JOBS from free memory
               (FlashAttention's setup.py way: min(cores / 2, free GB / 9))

The cells are the example package's (matrix/example.yaml: examples/flash_example, torch 2.11,
CUDA 13.0, sm_90), one per Python tag, built with the virtualenvs fabuild keeps in its cache.
For each way: makespan, peak memory (the sum of the proportional set size of every process of
that way, sampled every 0.2 s from /proc) and CPU time (user + system of all its processes).
Ratios last.

Usage: bench/schedule.py FABUILD [--python cp311,cp312,cp313] [--fixed-jobs N]
Exit 0 when the budgeted schedule meets its targets: peak memory under the budget and makespan
<= 1.15 x max(longest cell, total CPU work / cores).
"""

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent
VENVS = Path(os.environ.get("FABUILD_CACHE_DIR", Path.home() / ".cache" / "fabuild")) / "venvs"
CUDA_HOME = Path("/usr/local/cuda-13.0") if Path("/usr/local/cuda-13.0").exists() else Path("/usr/local/cuda")


def descendants(root):
    """Pids of `root` and every process below it."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except OSError:
            continue
    out, stack = [], [root]
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(children.get(pid, []))
    return out


def pss_bytes(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class Sampler(threading.Thread):
    """Peak of the summed PSS of the process trees under `roots()`."""

    def __init__(self, roots):
        super().__init__(daemon=True)
        self.roots, self.peak, self.stop = roots, 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            pids = set()
            for r in self.roots():
                pids.update(descendants(r))
            self.peak = max(self.peak, sum(pss_bytes(p) for p in pids))
            self.stop.wait(0.2)


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(name, start_all):
    """Runs start_all() -> list of Popen (possibly started over time by a thread), samples them."""
    procs = []
    sampler = Sampler(lambda: [p.pid for p in procs if p.poll() is None])
    cpu0, t0 = children_cpu(), time.monotonic()
    sampler.start()
    cell_times = start_all(procs)
    sampler.stop.set()
    sampler.join()
    return {"name": name, "makespan": time.monotonic() - t0, "peak": sampler.peak,
            "cpu": children_cpu() - cpu0, "cells": cell_times}


def cell_env(tag, jobs):
    venv = VENVS / f"{tag}-torch2.11-cu130"
    env = {k: v for k, v in os.environ.items() if k in ("HOME", "LANG", "TMPDIR", "USER", "LOGNAME")}
    env.update({
        "PATH": f"{CUDA_HOME}/bin:{venv}/bin:/usr/local/bin:/usr/bin:/bin",
        "CUDA_HOME": str(CUDA_HOME), "FLASH_ATTENTION_FORCE_BUILD": "TRUE", "BUILD_TARGET": "cuda",
        "FLASH_ATTN_CUDA_ARCHS": "90", "NVCC_THREADS": "1", "FLASH_ATTENTION_FORCE_CXX11_ABI": "TRUE",
        "FLASH_ATTN_LOCAL_VERSION": "cu130torch2.11cxx11abiTRUE",
    })
    if jobs:
        env["MAX_JOBS"] = str(jobs)
    return venv / "bin" / "python", env


def setup_py(tag, work, jobs, log):
    """`python setup.py bdist_wheel` in a fresh copy of the example, as the old tools run it."""
    tree = work / tag / "src"
    shutil.copytree(SOURCE / "examples" / "flash_example", tree)
    python, env = cell_env(tag, jobs)
    return subprocess.Popen([str(python), "setup.py", "bdist_wheel", "--dist-dir", str(work / tag / "dist")],
                            cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT)


def sequential(tags, work, jobs):
    def go(procs):
        times = {}
        for tag in tags:
            with open(work / f"{tag}.log", "w") as log:
                start = time.monotonic()
                p = setup_py(tag, work, jobs, log)
                procs.append(p)
                if p.wait() != 0:
                    sys.exit(f"sequential: {tag} failed; see {work / (tag + '.log')}")
                times[tag] = time.monotonic() - start
        return times
    return go


def all_at_once(tags, work):
    def go(procs):
        starts, logs = {}, {}
        for tag in tags:
            logs[tag] = open(work / f"{tag}.log", "w")
            starts[tag] = time.monotonic()
            procs.append(setup_py(tag, work, None, logs[tag]))
        times = {}
        for tag, p in zip(tags, procs):
            if p.wait() != 0:
                sys.exit(f"all-at-once: {tag} failed; see {work / (tag + '.log')}")
            times[tag] = time.monotonic() - starts[tag]
            logs[tag].close()
        return times
    return go


def example_matrix(tags, work):
    """matrix/example.yaml for these Python tags, its source named by an absolute path."""
    text = (SOURCE / "matrix" / "example.yaml").read_text()
    text = re.sub(r"^python: .*$", f"python: [{', '.join(tags)}]", text, flags=re.M)
    text = text.replace("source: {path: ../examples/flash_example}", f"source: {{path: {SOURCE / 'examples' / 'flash_example'}}}")
    path = work / "example.yaml"
    path.write_text(text)
    return path


def fabuild_way(fabuild, tags, work):
    def go(procs):
        matrix = example_matrix(tags, work)
        with open(work / "fabuild.log", "w") as log:
            p = subprocess.Popen([fabuild, str(matrix), "-o", str(work / "house"), "--no-cache"],
                                 stdout=log, stderr=subprocess.STDOUT)
            procs.append(p)
            if p.wait() != 0:
                sys.exit(f"fabuild failed:\n{(work / 'fabuild.log').read_text()[-3000:]}")
        text = (work / "fabuild.log").read_text()
        times = {}
        for line in text.splitlines():
            m = re.match(r"^(\S+-(cp\d+)-linux_x86_64)\s+ok\s+(\d+):(\d+)\s", line)
            if m:
                times[m.group(2)] = int(m.group(3)) * 60 + int(m.group(4))
        budget = re.search(r"budget ([\d.]+) cores, ([\d.]+) GB", text)
        go.budget = (float(budget.group(1)), float(budget.group(2))) if budget else (0, 0)
        return times
    return go


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("fabuild")
    ap.add_argument("--python", default="cp311,cp312,cp313")
    ap.add_argument("--fixed-jobs", type=int, default=os.cpu_count(),
                    help="MAX_JOBS of the sequential way (default: the machine's cores)")
    a = ap.parse_args()
    tags = a.python.split(",")
    for tag in tags:
        if not (VENVS / f"{tag}-torch2.11-cu130" / "bin" / "python").exists():
            sys.exit(f"no virtualenv {VENVS / (tag + '-torch2.11-cu130')}: run `fabuild matrix/example.yaml` once first")
    cores = len(os.sched_getaffinity(0))
    print(f"bench/schedule.py: {len(tags)} cells ({', '.join(tags)}), {cores} cores, load {os.getloadavg()[0]:.2f}",
          flush=True)
    root = Path(tempfile.mkdtemp(prefix="fabuild-schedule-"))
    results = []
    try:
        ways = [("fabuild", fabuild_way(a.fabuild, tags, root / "fabuild")),
                ("sequential", sequential(tags, root / "sequential", a.fixed_jobs)),
                ("all-at-once", all_at_once(tags, root / "all-at-once"))]
        for name, go in ways:
            (root / name).mkdir()
            print(f"== {name} ...", flush=True)
            r = measure(name, go)
            results.append(r)
            print(f"   {r['makespan']:.0f} s, peak {r['peak'] / 1e9:.2f} GB, CPU {r['cpu']:.0f} s, "
                  f"cells: {', '.join(f'{t} {s:.0f} s' for t, s in r['cells'].items())}", flush=True)
        budget_cores, budget_gb = ways[0][1].budget
    finally:
        shutil.rmtree(root, ignore_errors=True)

    by = {r["name"]: r for r in results}
    f, seq, once = by["fabuild"], by["sequential"], by["all-at-once"]
    longest = max(seq["cells"].values())
    work = seq["cpu"] / cores
    bound = max(longest, work)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    print(f"{'WAY':<12} {'MAKESPAN':>9} {'PEAK MEMORY':>12} {'CPU':>8}")
    for r in results:
        print(f"{r['name']:<12} {r['makespan']:>8.0f}s {r['peak'] / 1e9:>10.2f}GB {r['cpu']:>7.0f}s")
    print(f"fabuild's budget: {budget_cores:g} cores, {budget_gb:.1f} GB; sequential MAX_JOBS={a.fixed_jobs}")
    print(f"lower bound max(longest cell {longest:.0f} s, CPU work / cores {work:.0f} s) = {bound:.0f} s")
    ratio = f["makespan"] / bound
    print(f"makespan fabuild / sequential:        {f['makespan'] / seq['makespan']:.2f}")
    print(f"makespan fabuild / all-at-once:       {f['makespan'] / once['makespan']:.2f}")
    print(f"peak memory fabuild / all-at-once:    {f['peak'] / max(once['peak'], 1):.2f}")
    print(f"peak memory fabuild / budget:         {f['peak'] / 1e9 / budget_gb:.2f} (target <= 1)")
    print(f"makespan fabuild / lower bound:       {ratio:.2f} (target <= 1.15)")
    return 0 if ratio <= 1.15 and f["peak"] / 1e9 <= budget_gb else 1


if __name__ == "__main__":
    sys.exit(main())
