#!/usr/bin/env python3
"""The release of FlashAttention 2.8.3 on GitHub-hosted runners, simulated from measured units.

Replays the per-unit compile costs measured on the GPU machine (bench/data/, one arch) through
job plans for the 56-cell publish matrix (matrix/publish-shaped.yaml: 14 rows of 4 Python tags)
and prints, for each, the jobs, the longest job, the jobs over the cap, the runner-hours and the
wall-clock at 20 and at 60 concurrent jobs:

  per-cell  one job per cell (upstream's way, fabuild --split-rows): every job compiles every
            kernel of its cell
  per-row   one job per row: the row's later Python tags take the kernels from the job's local
            object cache
  shares    fabuild's compile shares: a row whose one job would pass 0.8 of the cap is K compile
            jobs (its kernel units split by LPT on their cost) and one finishing job that needs
            them; on fixed slots (a first build) and under the memory gate (a recorded row)

One model, two users: every figure of a plan (a row's time on the runner, the share rule and
split, the memory gate's schedule, fixed slots, the share balancer, the job graph) comes from
fabuild itself, `fabuild model` (src/costs/model_json.h), JSON in and out, the code that
`fabuild MATRIX --ci-matrix github` plans with. What the simulator adds: the runner (the
measured units turned into a row's record at its archs and NVCC_THREADS, its memory), the queue
of runners that the job graph goes through (arrival, FIFO, `needs:`), the setup each job pays,
and the comparisons.

The runner model (every figure an assumption, printed under "assumed:"): 4 vCPUs, 16 GB; four
archs per cell, a kernel's CPU time at four archs = 4 x its sm_90 measurement; nvcc --threads
NVCC_THREADS runs that many of a kernel's archs at once, so a kernel takes 4 x cpu_s /
NVCC_THREADS on the runner and holds NVCC_THREADS x its measured peak RSS; fixed slots: a job
compiles min(vCPUs // NVCC_THREADS, floor(memory / the largest kernel's peak)) units at once; a
runner vCPU is as fast as one core of the machine that measured; aarch64 runners as fast as
x86-64 ones. A later tag of a row (its kernels from the cache) compiles flash_api.cpp (one CPU,
no archs) and does the cell's other steps (fabuild's kTagStepsS: 37 s), 72 s measured.

Usage: bench/release_sim.py [--units TSV] [--cap-min 360] [--setup-min 15] [--jobs JSON]
                            [--nvcc-threads 2] [--runner-cpus 4] [--runner-mem-gb 16]
                            [--archs 4] [--stable-series 6] [--verify-min 10] [--self-test]
                            [--fabuild PATH]
--jobs takes what `fabuild matrix/publish-shaped.yaml --ci-matrix github` prints: the rows and
their tags come from its "build" entries, each row's share count from its "compile" entries
("<row> share K/N"); without it the rows are built from the matrix's shape. --fabuild (else
$FABUILD, else build/fabuild beside bench/, else fabuild on PATH) is the fabuild asked.

Exit 0 when both targets hold: runner-hours(shares) <= 0.3 x per-cell and wall@20(shares) <=
0.25 x per-cell; 1 when either is missed; 2 on bad input.
"""

import argparse
import csv
import heapq
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_UNITS = HERE / "data" / "fa2.8.3-sm90-units-h100.tsv"
DEFAULT_ORDER = HERE / "data" / "fa2.8.3-setup-order.txt"
FILL = 0.8                 # fabuild's kShareFill (costs/ci_estimate.h), for the header line
TARGET_HOURS = 0.30        # runner-hours(shares) / runner-hours(per-cell)
TARGET_WALL = 0.25         # wall@20(shares) / wall@20(per-cell)
CONCURRENCY = (20, 60)     # GitHub's free plan; a paid one
GB_PER_MIB = 1.048576e-3   # ru_maxrss MiB -> GB (10^9 bytes), the unit of a runner's "16 GB"
GIB_PER_GB = 1e9 / 2**30   # the simulator's GB in fabuild's (a record's MiB / 1024)


# ---------------------------------------------------------------------------------------------
# fabuild, asked

FABUILD = None  # the binary (main sets it: find_fabuild)


def find_fabuild(given=None):
    """--fabuild, else $FABUILD, else the build tree beside bench/, else fabuild on PATH."""
    for cand in (given, os.environ.get("FABUILD"), str(HERE.parent / "build" / "fabuild"), shutil.which("fabuild")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    raise ValueError("no fabuild to ask: build it (ninja -C build) or give --fabuild PATH")


def ask(requests):
    """`fabuild model` on a list of requests (src/costs/model_json.h): its answers, in order."""
    global FABUILD
    if FABUILD is None:
        FABUILD = find_fabuild()
    p = subprocess.run([FABUILD, "model"], input=json.dumps(requests), capture_output=True, text=True)
    if p.returncode != 0:
        raise ValueError("%s model: %s" % (FABUILD, p.stderr.strip() or "exit %d" % p.returncode))
    return json.loads(p.stdout)


# ---------------------------------------------------------------------------------------------
# Units

class Unit:
    __slots__ = ("name", "cpu_s", "peak_mb", "kernel")

    def __init__(self, name, cpu_s, peak_mb):
        self.name = name
        self.cpu_s = cpu_s
        self.peak_mb = peak_mb
        self.kernel = name.endswith(".cu")


def read_tsv(path):
    """The rows of a TSV with a header line, as dicts; blank and '#' lines skipped."""
    with open(path, newline="") as f:
        return list(csv.DictReader([line for line in f if line.strip() and not line.startswith("#")], delimiter="\t"))


def setup_order(path):
    """{unit file name: its place} in setup.py's order (data/fa2.8.3-setup-order.txt)."""
    with open(path) as f:
        names = [os.path.basename(line.strip()) for line in f if line.strip() and not line.startswith("#")]
    return {n: i for i, n in enumerate(names)}


def load_units(path):
    """The measured units: `unit`, `cpu_s`, `peak_rss_mb` columns of a TSV; '#' lines skipped."""
    rows = read_tsv(path)
    if not rows or not {"unit", "cpu_s", "peak_rss_mb"} <= set(rows[0]):
        raise ValueError("%s: needs a header with unit, cpu_s, peak_rss_mb" % path)
    units = {}
    for r in rows:
        if r["unit"] in units:
            raise ValueError("%s: unit %s twice" % (path, r["unit"]))
        units[r["unit"]] = Unit(r["unit"], float(r["cpu_s"]), float(r["peak_rss_mb"]))
    return sorted(units.values(), key=lambda u: u.name)


class Runner:
    """What a unit costs on a hosted runner (every figure an assumption), and the runner as fabuild
    is told of it: the measured units as a row's record, the runner's shape."""

    def __init__(self, cpus, mem_gb, nvcc_threads, archs, gate_mem_gb=None, order=None):
        self.cpus, self.mem_gb, self.nvcc_threads, self.archs = cpus, mem_gb, nvcc_threads, archs
        # The memory gate: the memory its compiles are packed into (fabuild's grant: the
        # runner's available memory less its reserve), and the order they reach it in (None:
        # longest first; else {unit: rank}, ninja's order from setup.py).
        self.gate_mem_gb = mem_gb if gate_mem_gb is None else gate_mem_gb
        self.order = order

    def threads(self, u):
        return min(self.nvcc_threads, self.archs) if u.kernel else 1

    def seconds(self, u):
        """Runner wall of one unit: its CPU work at `archs` archs over the threads it uses."""
        if not u.kernel:
            return u.cpu_s
        return self.archs * u.cpu_s / self.threads(u)

    def peak_gb(self, u):
        return self.threads(u) * u.peak_mb * GB_PER_MIB

    def record(self, units):
        """`units` as a row's record that fabuild reads (costs/row_costs.h): a kernel's CPU at the
        runner's archs, its peak as measured (MiB, one stage: threads 1); `built`, the kernels in
        the order ninja hands them out (setup.py's, else longest first)."""
        kernels = [u for u in units if u.kernel]
        if self.order is not None:
            built = sorted(kernels, key=lambda u: (self.order.get(u.name, len(self.order)), u.name))
        else:
            built = sorted(kernels, key=lambda u: (-u.cpu_s, u.name))
        return {"version": 1, "recorded": "bench/release_sim.py",
                "units": {u.name: {"cpu_s": self.archs * u.cpu_s if u.kernel else u.cpu_s,
                                   "peak_mb": u.peak_mb, "threads": 1} for u in units},
                "built": [u.name for u in built]}

    def shape(self, gated):
        """The runner as `fabuild model` takes it: memory in its GiB; with `gated`, the grant."""
        threads = min(self.nvcc_threads, self.archs)
        shape = {"cores": self.cpus, "memory_gb": self.mem_gb * GIB_PER_GB, "nvcc_threads": threads}
        if gated:
            shape["gate"] = {"cores": self.cpus, "memory_gb": self.gate_mem_gb * GIB_PER_GB, "nvcc_threads": threads}
        return shape

    def fixed_request(self, units, guessed=False):
        """A `schedule` request: `units` longest first on fabuild's fixed slots (the cores over
        NVCC_THREADS, or as many of the largest kernel as the memory holds), which it answers too.
        `guessed`: a row with no record (a first night): fabuild sizes the slots by the memory it
        guesses a compile takes, in its budget (the runner's available memory less the reserve)."""
        ordered = sorted(units, key=lambda u: (-self.seconds(u), u.name))
        kernels = [u for u in units if u.kernel] or units
        request = {"op": "schedule", "seconds": [self.seconds(u) for u in ordered], "cores": self.cpus,
                   "memory_gb": self.mem_gb * GIB_PER_GB, "nvcc_threads": self.nvcc_threads}
        if guessed:
            request.update(guessed=True, memory_gb=self.gate_mem_gb * GIB_PER_GB)
        else:
            request["largest_mb"] = max(self.threads(u) * u.peak_mb for u in kernels)
        return request

    def gate_request(self, units):
        """A `gate` request that asks fabuild for the grant's slots and MAX_JOBS on this runner."""
        smallest = min(self.threads(u) * u.peak_mb for u in units if u.kernel)
        return {"op": "gate", "units": [], "budget_mb": self.gate_mem_gb * GIB_PER_GB * 1024,
                "cores": self.cpus, "smallest_mb": smallest, "nvcc_threads": min(self.nvcc_threads, self.archs)}


# ---------------------------------------------------------------------------------------------
# The queue of runners: what the simulator adds to fabuild's job graph

def simulate_queue(jobs, limit):
    """Jobs [(name, minutes, [names it needs])] in plan order; at most `limit` at once. A job is
    queued once every job it needs has ended; queued jobs start FIFO in plan order. Returns
    (wall-clock, {name: (start, end)})."""
    index = {name: i for i, (name, _, _) in enumerate(jobs)}
    waiting = {i: set(index[d] for d in needs) for i, (_, _, needs) in enumerate(jobs)}
    dependents = {i: [] for i in range(len(jobs))}
    for i, deps in waiting.items():
        for d in deps:
            dependents[d].append(i)
    ready = [i for i, deps in waiting.items() if not deps]
    heapq.heapify(ready)
    running = []               # (end, i)
    times = {}
    t = 0.0
    while ready or running:
        while ready and len(running) < limit:
            i = heapq.heappop(ready)
            times[jobs[i][0]] = (t, t + jobs[i][1])
            heapq.heappush(running, (t + jobs[i][1], i))
        t, i = heapq.heappop(running)
        done = [i]
        while running and running[0][0] == t:
            done.append(heapq.heappop(running)[1])
        for j in done:
            for k in dependents[j]:
                waiting[k].discard(j)
                if not waiting[k]:
                    heapq.heappush(ready, k)
    if len(times) != len(jobs):
        raise ValueError("job graph has a cycle or an unknown need")
    return max((e for _, e in times.values()), default=0.0), times

# ---------------------------------------------------------------------------------------------
# The matrix

def rows_from_shape():
    """matrix/publish-shaped.yaml's rows: torch 2.6-2.10 x CUDA 12.9.1/13.0.1 x cp310-cp313 x
    x86_64/aarch64 x ABI, less its excludes. [(row name, tags)]."""
    rows = []
    for torch in ("2.6", "2.7", "2.8", "2.9", "2.10"):
        for cuda in ("12.9.1", "13.0.1"):
            for platform in ("linux_x86_64", "linux_aarch64"):
                for abi in ("FALSE", "TRUE"):
                    if torch in ("2.6", "2.7", "2.8") and cuda == "13.0.1":
                        continue
                    if torch == "2.6" and platform == "linux_aarch64":
                        continue
                    if torch != "2.6" and abi == "FALSE":
                        continue
                    tags = ["cp310", "cp311", "cp312", "cp313"]
                    rows.append(("torch%s-cu%s-%s-cxx11abi%s" % (torch, cuda, platform, abi),
                                 len(tags)))
    cells = sum(t for _, t in rows)
    assert (len(rows), cells) == (14, 56), (len(rows), cells)
    return rows


SHARE_RE = re.compile(r"^(.*) share (\d+)/(\d+)$")


def rows_from_jobs(path):
    """Rows and share counts from `--ci-matrix github` JSON: ([(row, tags)], {row: K}).
    Tolerant: entries without a stage are builds; a compile entry's row is its name before
    " share K/N", K from the name, "share" or "shares"."""
    with open(path) as f:
        text = f.read()
    start = text.find("{")
    data = json.loads(text[start:]) if start >= 0 else {}
    include = data.get("include", []) if isinstance(data, dict) else []
    rows, shares = [], {}
    for e in include:
        name = str(e.get("name", ""))
        if e.get("stage") == "compile":
            m = SHARE_RE.match(name)
            row = m.group(1) if m else name
            n = int(m.group(3)) if m else 0
            spec = str(e.get("share") or "")
            if "/" in spec:
                n = int(spec.split("/")[1])
            n = n or int(e.get("shares") or 0)
            shares[row] = max(shares.get(row, 0), n)
        else:
            if int(e.get("rows", 1) or 1) != 1:
                raise ValueError("%s: entry %r groups %s rows; give a plan of one job per row"
                                 % (path, name, e.get("rows")))
            rows.append((name, int(e.get("cells", 1))))
            if int(e.get("shares") or 0) > 1:
                shares[name] = max(shares.get(name, 0), int(e["shares"]))
    names = {r for r, _ in rows}
    for r in shares:
        if r not in names:
            raise ValueError("%s: compile entries for %r, which has no build entry" % (path, r))
    return rows, shares




# ---------------------------------------------------------------------------------------------
# The plans, from fabuild: [(job name, minutes, [needs])]

def plan_request(runner, units, rows, setup, cap, gated, shares=None, balance=False):
    """A `plan` request: `rows` [(name, tags)] of `units` on `runner` (under the memory gate when
    `gated`); `shares` {row: K} as given (else fabuild's share rule); with `balance`, fabuild's
    balance_shares for 20 runners."""
    req = {"op": "plan", "record": runner.record(units), "runner": runner.shape(gated),
           "rows": [{"name": r, "tags": t} for r, t in rows], "setup_s": 60.0 * setup,
           "max_timeout_s": 60.0 * cap, "max_parallel": CONCURRENCY[0], "runners": list(CONCURRENCY),
           "balance": balance}
    if shares is not None:
        req["shares"] = shares
    return req


def graph_jobs(answer):
    """fabuild's job graph as the queue takes it: [(name, minutes, [needs])], compile jobs first."""
    return [(j["name"], j["seconds"] / 60.0, list(j["needs"])) for j in answer["jobs"]]


def share_counts(answer):
    """{row: K}, 1 for a row built in one job."""
    return {r["name"]: max(1, r["shares"]) for r in answer["rows"]}


def plan_per_cell(answer):
    """One job per cell: each cell as its row's first (setup, every kernel, its own steps)."""
    return [("%s #%d" % (r["name"], t + 1), (r["setup_s"] + r["first_s"]) / 60.0, [])
            for r in answer["rows"] for t in range(r["tags"])]


def plan_per_row(answer):
    """One job per row: fabuild's whole-row time (its first cell, then each later tag)."""
    return [(r["name"], r["whole_s"] / 60.0, []) for r in answer["rows"]]


def summarize(jobs, cap):
    minutes = [m for _, m, _ in jobs]
    walls = {n: simulate_queue(jobs, n)[0] for n in CONCURRENCY}
    return {"jobs": len(jobs), "longest": max(minutes), "over": sum(m > cap for m in minutes),
            "hours": sum(minutes) / 60.0, "walls": walls}


def hm(minutes):
    return "%d h %02d min" % divmod(int(round(minutes)), 60)


def counts(ks):
    return ", ".join("%d x %d" % (sum(1 for v in ks.values() if v == k), k) for k in sorted(set(ks.values())))


STABLE_SHAPE = [("cu%s-%s" % (cuda, platform), 4) for cuda in ("12.9", "13.0")
                for platform in ("linux_x86_64", "linux_aarch64")]


def stable_requests(units, runner, gate_runner, cap, setup, series):
    """fabuild's plans for the stable-ABI comparison (stable_compare): per series on fixed slots
    (one job per cell from it), per series gated and balanced, the stable builds gated and balanced."""
    per_series_rows = [("torch%d-%s" % (t, row), tags) for t in range(series) for row, tags in STABLE_SHAPE]
    stable_rows = [("stable-" + row, 1) for row, _ in STABLE_SHAPE]
    return [plan_request(runner, units, per_series_rows, setup, cap, False),
            plan_request(gate_runner, units, per_series_rows, setup, cap, True, balance=True),
            plan_request(gate_runner, units, stable_rows, setup, cap, True, balance=True)]


def stable_compare(answers, cap, series, verify_min):
    """A release of upstream's shape (CUDA 12.9 and 13.0 x linux x86_64 and aarch64 x cp310-cp313)
    for `series` torch series: per series, every series a row of 4 Python tags (fabuild's gated
    plan; and upstream's one job per cell); against the stable ABI (docs/stable-abi.md), one abi3
    cell per CUDA x platform built against the oldest series (compile shares as needed) and a
    verify job per other series of its window, after the build stage as the nightly's `verify`
    job needs it. `answers`: fabuild's to stable_requests. {label: summary}."""
    fixed, per_series, stable = answers
    jobs = graph_jobs(stable)
    builds = [name for name, _, _ in jobs]
    for r in stable["rows"]:
        for t in range(1, series):
            jobs.append(("%s torch +%d" % (r["name"], t), verify_min, builds))
    return {"per-cell": summarize(plan_per_cell(fixed), cap), "per-series": summarize(graph_jobs(per_series), cap),
            "stable": summarize(jobs, cap), "stable_ks": share_counts(stable)}


# ---------------------------------------------------------------------------------------------

def self_test():
    """The queue (the simulator's own) on hand-made cases; fabuild's split, fixed slots and gate
    on hand-made cases and its balancer on the measured units; and the simulator against fabuild:
    the queue replaying fabuild's job graph must end when fabuild says it does."""
    ok = True

    def check(what, got, want):
        nonlocal ok
        good = got == want if not isinstance(want, float) else abs(got - want) < 1e-6 * max(1.0, abs(want))
        print("%-52s %s (%r%s)" % (what, "ok" if good else "FAILED", got,
                                   "" if good else ", want %r" % (want,)))
        ok &= good

    jobs = [("A", 10.0, []), ("B", 10.0, []), ("C", 5.0, []), ("D", 1.0, ["A", "B"])]
    check("queue limit 2 (D needs A,B)", simulate_queue(jobs, 2)[0], 15.0)
    check("queue limit 1", simulate_queue(jobs, 1)[0], 26.0)
    check("queue limit 1: D after C (FIFO)", simulate_queue(jobs, 1)[1]["D"], (25.0, 26.0))
    jobs = [("A", 10.0, []), ("D", 1.0, ["A"]), ("B", 3.0, [])]
    check("a job not ready does not block the queue", simulate_queue(jobs, 2)[1]["B"], (0.0, 3.0))
    check("...and starts when its need ends", simulate_queue(jobs, 2)[0], 11.0)
    check("56 cells in 14 rows", sum(t for _, t in rows_from_shape()), 56)
    r = Runner(4, 16, 2, 4)
    u = Unit("k.cu", 100.0, 6000.0)
    check("kernel on runner: 4 archs / 2 threads", r.seconds(u), 200.0)
    check("C++ unit: one thread, no archs", r.seconds(Unit("a.cpp", 30.0, 1000.0)), 30.0)

    def gate(items, slots, mem_gb, window):
        return {"op": "gate", "units": [{"seconds": d, "mb": 1000 * m, "priority": p}
                                        for d, m, p in (it if len(it) > 2 else (it[0], it[1], it[0]) for it in items)],
                "slots": slots, "budget_mb": 1000 * mem_gb, "window": window}

    units = load_units(str(DEFAULT_UNITS))
    with open(DEFAULT_ORDER) as f:
        names = [os.path.basename(line.strip()) for line in f if line.strip() and not line.startswith("#")]
    gate_runner = Runner(4, 16, 1, 4, 13.0, {n: i for i, n in enumerate(names)})
    requests = [
        # LPT: 5 4 3 3 2 into 2 -> a:5 b:4, c(3)->b(7), d(3)->a(8), e(2)->b(9)
        {"op": "split", "costs": {"a.cu": 5, "b.cu": 4, "c.cu": 3, "d.cu": 3, "e.cu": 2}, "shares": 2},
        # ties by name: three of 1 into 2 -> x to share 1, y to share 2, z to share 1
        {"op": "split", "costs": {"z.cu": 1, "y.cu": 1, "x.cu": 1}, "shares": 2},
        {"op": "schedule", "seconds": [5, 4, 3], "slots": 2},
        {"op": "schedule", "seconds": [5, 4, 3], "slots": 1},
        # the gate: 2 slots, 10 GB: (5 s, 6 GB) and (4 s, 6 GB) cannot run together; (3 s, 3 GB)
        # goes beside the first (backfill), the 4 s one after it
        gate([(5, 6.0), (4, 6.0), (3, 3.0)], 2, 10.0, 8),
        gate([(5, 12.0)], 2, 10.0, 8),
        gate([(5, 3.0), (4, 3.0)], 2, 10.0, 8),
        # longest first among those ninja handed out: the 10 s unit, last in ninja's order, starts
        # at once with a window of 3, not behind the others with a window of 1
        gate([(1, 1.0), (1, 1.0), (10, 1.0)], 2, 10.0, 3),
        gate([(1, 1.0), (1, 1.0), (10, 1.0)], 2, 10.0, 1),
        # backfill: 3 slots, 10 GB, (5, 6) runs; (4, 6) waits for it while both (3, 3) go beside
        gate([(5, 6.0), (4, 6.0), (3, 3.0), (3, 3.0)], 3, 10.0, 4),
        r.fixed_request([u]),
        # The balancer on the measured units (bench/data) at the matrix's 30-minute setup, as
        # CiShares.ThePublishMatrixWithMeasuredRecordsIsTimedByTheGate pins fabuild's: ten rows at 2
        # shares and four at 5 fill two waves of 20 runners.
        plan_request(gate_runner, units, rows_from_shape(), 30, 360, True, balance=True),
        gate_runner.gate_request(units),
    ] + stable_requests(units, Runner(4, 16, 2, 4), gate_runner, 360, 30, 6) + [
        # a first night: no record, so 5 GB guessed per compile (fabuild's kDefaultGbPerThread):
        # 12 GB hold 2 of them on 4 cores
        Runner(4, 16, 1, 1, 12.0 / GIB_PER_GB).fixed_request([Unit("a.cu", 5, 100), Unit("b.cu", 4, 100),
                                                             Unit("c.cu", 3, 100)], guessed=True),
    ]
    answers = ask(requests)
    check("fabuild: lpt split of 5,4,3,3,2 into 2", answers[0]["shares"], [["a.cu", "d.cu"], ["b.cu", "c.cu", "e.cu"]])
    check("fabuild: lpt ties by name, then lower share", answers[1]["shares"], [["x.cu", "z.cu"], ["y.cu"]])
    check("fabuild: fixed slots 5,4,3 on 2", answers[2]["seconds"], 7.0)
    check("fabuild: fixed slots 5,4,3 on 1", answers[3]["seconds"], 12.0)
    check("fabuild gate: 6+6 GB over 10 GB one after another", answers[4]["seconds"], 9.0)
    check("fabuild gate: a unit over the memory alone still runs", answers[5]["seconds"], 5.0)
    check("fabuild gate: 3+3 GB share the slots", answers[6]["seconds"], 5.0)
    check("fabuild gate: longest waiting first", answers[7]["seconds"], 10.0)
    check("fabuild gate: a window of 1 is ninja's order", answers[8]["seconds"], 12.0)
    check("fabuild gate: shorter units that fit go first", answers[9]["seconds"], 9.0)
    fixed = answers[10]
    check("fabuild slots: 2 by CPU, 1 by memory (2 x 6.3 GB)", (fixed["slots"], fixed["by_cores"], fixed["by_memory"]),
          (1, 2, 1))
    check("fabuild fixed slots: the kernel alone", fixed["seconds"], 200.0)
    gated = answers[11]
    check("fabuild balance: measured rows at 30 min setup", counts(share_counts(gated)), "10 x 2, 4 x 5")
    check("fabuild gate on the runner: 3 slots, MAX_JOBS 12", (answers[12]["slots"], answers[12]["window"]), (3, 12))
    # The simulator against fabuild: its queue replays fabuild's job graph; with every row split
    # (a first stage of share jobs, the finishing jobs needing all of it) the FIFO queue is
    # fabuild's graph_seconds, and the jobs' minutes are its runner time.
    jobs = graph_jobs(gated)
    for n in CONCURRENCY:
        check("queue @%d = fabuild's graph_seconds (min)" % n, simulate_queue(jobs, n)[0], gated["graph_s"][str(n)] / 60)
    check("runner-hours = fabuild's runner_seconds", sum(m for _, m, _ in jobs) / 60, gated["runner_s"] / 3600)
    stage = sorted(name for name, _, _ in jobs if " share " in name)
    check("every finishing job needs the compile stage",
          all(sorted(needs) == stage for name, _, needs in jobs if name.endswith(" finish")), True)
    # The stable-ABI release: a build per CUDA x platform (its shares), then 5 verify jobs each;
    # the queue on its graph (verify jobs after every build) against fabuild's replay in stages.
    cmp = stable_compare(answers[13:16], 360, 6, 10.0)
    stable = answers[15]
    verify = [{"name": "%s torch +%d" % (r["name"], t), "seconds": 600.0, "stage": "verify"}
              for r in stable["rows"] for t in range(1, 6)]
    replay = ask([{"op": "graph", "jobs": stable["jobs"] + verify, "runners": list(CONCURRENCY)}])[0]
    for n in CONCURRENCY:
        check("stable: queue @%d = fabuild's replay of its graph" % n, cmp["stable"]["walls"][n], replay["graph_s"][str(n)] / 60)
    ks = cmp["stable_ks"]
    check("stable: 4 builds, their shares, 4 x 5 verify jobs", cmp["stable"]["jobs"],
          4 + sum(k for k in ks.values() if k > 1) + 20)
    check("stable: fewer runner-hours than per series", cmp["stable"]["hours"] < cmp["per-series"]["hours"], True)
    first_night = answers[16]
    check("fabuild first night: slots by the guessed 5 GB a compile", (first_night["slots"], first_night["seconds"]),
          (2, 7.0))
    print("self-test:", "passed" if ok else "FAILED")
    return 0 if ok else 1


def replay_row(units_path, jobs_path, runner, h100):
    """The simulator against a measured row (data/fa2.8.3-row-h200x2-*.tsv): each compile share's
    units, as the share recorded them, run through the model the plan uses (fixed slots sized by
    the largest kernel's peak, longest first, plus the share's recorded setup), its makespan beside
    the job's measured wall. Twice: from the CPU the units took in that run, and from the default
    table's (another machine's) CPU for the same units, as a first plan would have it."""
    rows, jobs = read_tsv(units_path), read_tsv(jobs_path)
    table = {u.name: u for u in h100}
    # A share none of whose units was recorded before ran a first night's plan: its slots are
    # what fabuild guesses, not what the units' peaks would allow.
    guessed = bool(rows) and all(r.get("recorded_before") == "no" for r in rows)
    print("replay: %s against %s; runner %d cores, %.0f GB, NVCC_THREADS=%d%s" % (
        units_path, jobs_path, runner.cpus, runner.mem_gb, runner.nvcc_threads,
        "; no unit recorded before: slots as fabuild guesses them in %.1f GB" % runner.gate_mem_gb if guessed else ""))
    print("  share  units  slots  measured  model(this run's CPU)  model(%s's CPU)" % os.path.basename(str(DEFAULT_UNITS)))
    errors, shares, requests = [], [], []
    for job in jobs:
        mine = [Unit(r["unit"], float(r["cpu_s"]), float(r["peak_rss_mb"])) for r in rows if r["share"] == job["share"]]
        other = [table[u.name] for u in mine if u.name in table] if mine else []
        shares.append((job, mine, len(other) == len(mine)))
        if mine and job["exit"] == "0":
            requests += [runner.fixed_request(mine, guessed), runner.fixed_request(other or mine, guessed)]
    answers = iter(ask(requests))
    for job, mine, complete in shares:
        if not job["share"].isdigit():  # the finishing job: no share of the kernels
            print("  %5s  %5s  %5s  %7ss  (links, verifies and files; not modelled here)" % (
                job["share"], job["units"], "", job["wall_s"]))
            continue
        if not mine or job["exit"] != "0":
            print("  %5s  %5s  %5s  %8s  (no record: the share did not finish)" % (job["share"], job["units"], "", job["wall_s"]))
            continue
        setup = float(job["setup_s"])
        fixed = next(answers)
        model = setup + fixed["seconds"]
        model_other = setup + next(answers)["seconds"] if complete else float("nan")
        measured = float(job["wall_s"])
        errors.append(model / measured - 1)
        print("  %5s  %5d  %5d  %7.0fs  %8.0fs (%+.0f%%)  %8.0fs (%+.0f%%)" % (
            job["share"], len(mine), fixed["slots"], measured, model, 100 * (model / measured - 1),
            model_other, 100 * (model_other / measured - 1)))
    if errors:
        print("replay: model within %+.0f%% .. %+.0f%% of the measured shares" % (100 * min(errors), 100 * max(errors)))
    return 0


def replay_gated_row(units_path, jobs_path, record_path, order_path, cores, grant_gb, unrecorded_first=False):
    """The memory gate's model against a measured gated row (data/fa2.8.3-row-gated-h200x2-*.tsv):
    each share's units as it compiled them (their measured wall), handed out in setup.py's order
    to the gate as the share's own ran it: the record it split and gated by (`record_path`, the
    one on the remote before the run), each unit's need its recorded peak and its priority its
    recorded CPU seconds, a unit the record lacks needing the largest recorded peak and going
    last (with `unrecorded_first`, first: what the gate would gain by starting them as the longest);
    slots from the smallest recorded kernel in `grant_gb` (fabuild's budget in the job), MAX_JOBS
    kGateWindow times that (fabuild's `gate` answers both); plus the share's recorded setup. What the schedule misses when every
    duration is right."""
    rows, jobs = read_tsv(units_path), read_tsv(jobs_path)
    with open(record_path) as f:
        record = {os.path.basename(k): v for k, v in json.load(f)["units"].items() if k.endswith(".cu")}
    rank = setup_order(order_path)
    # fabuild's gate counts in MiB: its grant is the budget's GB x 1024 (engine/launch.cpp).
    largest = max(v["peak_mb"] for v in record.values())
    unrecorded = math.ceil(max(v["cpu_s"] for v in record.values())) + 1 if unrecorded_first else 0
    grant = {"op": "gate", "units": [], "budget_mb": grant_gb * 1024, "cores": cores,
             "smallest_mb": min(v["peak_mb"] for v in record.values())}
    shares, requests = [], [grant]
    for job in jobs:
        mine = sorted((r for r in rows if r["share"] == job["share"]), key=lambda r: (rank.get(r["unit"], len(rank)), r["unit"]))
        if not mine or job["exit"] != "0" or not job["share"].isdigit():
            continue
        units = [{"seconds": float(r["wall_s"]), "mb": record[r["unit"]]["peak_mb"] if r["unit"] in record else largest,
                  "priority": math.ceil(record[r["unit"]]["cpu_s"]) if r["unit"] in record else unrecorded} for r in mine]
        shares.append((job, mine))
        requests.append(dict(grant, units=units))
    answers = ask(requests)
    print("replay (gated): %s against %s; the gate's record %s; %d cores, %.1f GB granted: %d slots, MAX_JOBS %d" % (
        units_path, jobs_path, os.path.basename(record_path), cores, grant_gb, answers[0]["slots"], answers[0]["window"]))
    print("  share  units  not recorded  measured  model")
    errors, ends = [], []
    for (job, mine), answer in zip(shares, answers[1:]):
        model = float(job["setup_s"]) + answer["seconds"]
        measured = float(job["wall_s"])
        errors.append(model / measured - 1)
        ends.append((model, measured))
        print("  %5s  %5d  %12d  %7.0fs  %5.0fs (%+.0f%%)" % (job["share"], len(mine), sum(1 for r in mine if r["unit"] not in record),
                                                          measured, model, 100 * (model / measured - 1)))
    if errors:
        model, measured = max(e[0] for e in ends), max(e[1] for e in ends)
        print("replay: shares %+.0f%% .. %+.0f%%; the compile stage (the longest share) %.0f s against %.0f s measured (%+.0f%%)" % (
            100 * min(errors), 100 * max(errors), model, measured, 100 * (model / measured - 1)))
    return 0


def replay_plan(plan_path, jobs_path):
    """fabuild's own plan against a measured row: each job's `expected_s` from `fabuild MATRIX
    --ci-matrix github` (the share jobs' gated schedules, the finishing job) beside its measured
    wall, and the job graph's end (fabuild's replay of it in stages: the longest share, then the
    finishing job) beside the run's, replayed alike from the measured walls."""
    with open(plan_path) as f:
        plan = json.load(f)["include"]
    jobs = {j["share"]: j for j in read_tsv(jobs_path)}
    print("replay (plan): %s against %s" % (plan_path, jobs_path))
    print("  job                 expected  timeout  measured")
    first, finish = [], []
    for entry in plan:
        m = re.search(r" share (\d+)/\d+$", entry["name"])
        key = m.group(1) if m else "finish"
        job = jobs.get(key)
        if job is None or job["exit"] != "0":
            continue
        # A plan of a fabuild that wrote no expected_s: its timeout was its expected time.
        expected, measured = float(entry.get("expected_s", 60 * entry["timeout"])), float(job["wall_s"])
        (first if m else finish).append((expected, measured))
        print("  %-18s  %7.0fs  %5d min  %7.0fs (%+.0f%%)" % ("share " + key if m else "finishing job", expected,
                                                          entry["timeout"], measured, 100 * (expected / measured - 1)))
    if first and finish:
        def graph(k):  # the finished jobs, timed by their expected (k = 0) or measured (1) seconds
            stage = ["share %d" % i for i in range(len(first))]
            jobs = [{"name": n, "seconds": e[k], "stage": "compile", "needs": []} for n, e in zip(stage, first)]
            jobs += [{"name": "finish %d" % i, "seconds": e[k], "stage": "build", "needs": stage} for i, e in enumerate(finish)]
            return {"op": "graph", "jobs": jobs, "runners": [len(jobs)]}
        expected, measured = (a["graph_s"][str(len(first) + len(finish))] for a in ask([graph(0), graph(1)]))
        print("replay: the job graph ends at %.0f s, planned %.0f s (%+.0f%%)" % (measured, expected, 100 * (expected / measured - 1)))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replay-row", nargs=2, metavar=("UNITS_TSV", "JOBS_TSV"),
                    help="compare the share model with a measured row (data/fa2.8.3-row-h200x2-units.tsv "
                         "and -jobs.tsv); --runner-cpus, --runner-mem-gb, --nvcc-threads and --archs as measured")
    ap.add_argument("--record", help="with --replay-row: the record the row's shares split and gated by "
                                     "(data/fa2.8.3-row-h200x2-record.json): the gated replay")
    ap.add_argument("--unrecorded-first", action="store_true",
                    help="with --replay-row and --record: the kernels the record lacks start first at the gate "
                         "(fabuild starts them last)")
    ap.add_argument("--replay-plan", nargs=2, metavar=("PLAN_JSON", "JOBS_TSV"),
                    help="fabuild's plan (--ci-matrix github, its expected_s) against a measured row's jobs")
    ap.add_argument("--units", default=str(DEFAULT_UNITS))
    ap.add_argument("--cap-min", type=float, default=360.0)
    ap.add_argument("--setup-min", type=float, default=15.0)
    ap.add_argument("--jobs", help="`fabuild MATRIX --ci-matrix github` output (optional)")
    ap.add_argument("--nvcc-threads", type=int, default=2,
                    help="upstream's NVCC_THREADS: one job per cell, one per row, fixed-slot shares")
    ap.add_argument("--gate-nvcc-threads", type=int, default=1,
                    help="NVCC_THREADS of fabuild's gated plan (publish-shaped.yaml's build.nvcc_threads)")
    ap.add_argument("--runner-cpus", type=int, default=4)
    ap.add_argument("--runner-mem-gb", type=float, default=16.0)
    ap.add_argument("--runner-available-gb", type=float, default=15.0,
                    help="MemAvailable on a fresh runner (assumed: its 16 GB less its own services)")
    ap.add_argument("--reserve-gb", type=float, default=2.0,
                    help="fabuild's reserve (publish-shaped.yaml's budget.reserve_gb)")
    ap.add_argument("--archs", type=int, default=4)
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--fabuild", help="the fabuild asked for the model (default: $FABUILD, build/fabuild, PATH)")
    ap.add_argument("--gate-mem-gb", type=float,
                    help="the memory the gate packs into (default: --runner-available-gb less "
                         "--reserve-gb, fabuild's budget on the runner)")
    ap.add_argument("--gate-order", choices=("longest", "setup"), default="setup",
                    help="the order ninja hands compiles to the gate: setup.py's (--setup-order), "
                         "as torch writes build.ninja, or longest first")
    ap.add_argument("--stable-series", type=int, default=6,
                    help="torch series of the stable-ABI comparison (2.10 to 2.15: 6)")
    ap.add_argument("--verify-min", type=float, default=10.0,
                    help="a verify job of a stable-ABI wheel: setup, one torch environment, the check")
    ap.add_argument("--setup-order", default=str(DEFAULT_ORDER),
                    help="the package's sources in setup.py's order, one a line")
    a = ap.parse_args()
    global FABUILD
    try:
        FABUILD = find_fabuild(a.fabuild)
    except ValueError as e:
        print("release_sim: %s" % e, file=sys.stderr)
        return 2
    if a.self_test:
        try:
            return self_test()
        except (OSError, ValueError) as e:
            print("release_sim: self-test: %s" % e, file=sys.stderr)
            return 1
    if a.replay_plan:
        try:
            return replay_plan(*a.replay_plan)
        except (OSError, ValueError, KeyError) as e:
            print("release_sim: %s" % e, file=sys.stderr)
            return 2
    if a.replay_row and a.record:
        try:
            return replay_gated_row(a.replay_row[0], a.replay_row[1], a.record, a.setup_order, a.runner_cpus,
                                    a.gate_mem_gb if a.gate_mem_gb is not None else a.runner_mem_gb - 4,
                                    a.unrecorded_first)
        except (OSError, ValueError, KeyError) as e:
            print("release_sim: %s" % e, file=sys.stderr)
            return 2
    if a.replay_row:
        try:
            return replay_row(a.replay_row[0], a.replay_row[1],
                              Runner(a.runner_cpus, a.runner_mem_gb, a.nvcc_threads, a.archs,
                                     a.runner_available_gb - a.reserve_gb), load_units(a.units))
        except (OSError, ValueError, KeyError) as e:
            print("release_sim: %s" % e, file=sys.stderr)
            return 2

    try:
        units = load_units(a.units)
        given = None
        if a.jobs:
            rows, given = rows_from_jobs(a.jobs)
            if not rows:
                raise ValueError("%s: no build entries" % a.jobs)
            source = "%s (%d rows, %d cells%s)" % (
                a.jobs, len(rows), sum(t for _, t in rows),
                ", share counts of the fixed-slot plan from its compile entries" if given else
                ", no compile entries: every row one job")
        else:
            rows = rows_from_shape()
            source = "matrix/publish-shaped.yaml's shape (14 rows, 56 cells)"
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as e:
        print("release_sim: %s" % e, file=sys.stderr)
        return 2

    order = None
    if a.gate_order == "setup":
        try:
            order = setup_order(a.setup_order)
        except OSError as e:
            print("release_sim: %s" % e, file=sys.stderr)
            return 2
    gate_mem = a.gate_mem_gb if a.gate_mem_gb is not None else a.runner_available_gb - a.reserve_gb
    runner = Runner(a.runner_cpus, a.runner_mem_gb, a.nvcc_threads, a.archs)
    kernels = [u for u in units if u.kernel]
    others = [u for u in units if not u.kernel]
    gate_runner = Runner(a.runner_cpus, a.runner_mem_gb, a.gate_nvcc_threads, a.archs, gate_mem, order)
    cap, setup = a.cap_min, a.setup_min
    try:
        answers = ask([plan_request(runner, units, rows, setup, cap, False, given),
                       plan_request(gate_runner, units, rows, setup, cap, True, balance=True),
                       gate_runner.gate_request(units), runner.fixed_request(kernels)]
                      + stable_requests(units, runner, gate_runner, cap, setup, a.stable_series))
    except (OSError, ValueError) as e:
        print("release_sim: %s" % e, file=sys.stderr)
        return 2
    fixed, gated_answer, grant, sized = answers[:4]
    slots, by_cpu, by_mem = sized["slots"], sized["by_cores"], sized["by_memory"]
    c = fixed["rows"][0]["kernel_s"] / 60.0
    cg = gated_answer["rows"][0]["kernel_s"] / 60.0
    ks, gks = share_counts(fixed), share_counts(gated_answer)

    per_cell = summarize(plan_per_cell(fixed), cap)
    per_row = summarize(plan_per_row(fixed), cap)
    shares = summarize(graph_jobs(fixed), cap)
    gated = summarize(graph_jobs(gated_answer), cap)

    cpu = sum(u.cpu_s for u in units)
    peaks = [u.peak_mb for u in kernels]
    shown = Path(a.units).resolve()
    try:
        shown = shown.relative_to(HERE.parent)
    except ValueError:
        pass
    print("units: %s" % shown)
    print("rows: %s" % source)
    print("measured: %d units at sm_90 (%d kernels, %d other), %.0f CPU-seconds, kernels"
          " %.0f-%.0f s and %.1f-%.1f GB peak RSS each" % (
              len(units), len(kernels), len(others), cpu, min(u.cpu_s for u in kernels),
              max(u.cpu_s for u in kernels), min(peaks) * GB_PER_MIB, max(peaks) * GB_PER_MIB))
    print("runner: %d vCPUs, %.0f GB; fixed slots: %d unit(s) at once (%d by CPU at"
          " NVCC_THREADS=%d, %d by memory: largest kernel %.1f GB x %d threads); C = %.0f min"
          " (%.1f CPU-hours)" % (
              a.runner_cpus, a.runner_mem_gb, slots, by_cpu, a.nvcc_threads, by_mem,
              max(peaks) * GB_PER_MIB, min(a.nvcc_threads, a.archs), c,
              (sum(a.archs * u.cpu_s for u in kernels) + sum(u.cpu_s for u in others)) / 3600))
    gslots = grant["slots"]
    print("memory gate: NVCC_THREADS=%d, %.1f GB (%.1f available less the %.1f GB reserve), %d slots,"
          " MAX_JOBS %d, compiles handed out %s; C = %.0f min" % (
              a.gate_nvcc_threads, gate_mem, a.runner_available_gb, a.reserve_gb, gslots,
              grant["window"], "in setup.py's order" if order is not None else "longest first", cg))
    print("shares: cap %.0f min, setup %.0f min, fill %.1f; fixed slots %s, memory gate %s" % (
        cap, setup, FILL, counts(ks), counts(gks)))
    print()
    print("| layout | jobs | longest job | over-cap jobs | runner-hours | wall-clock @20 |"
          " wall-clock @60 |")
    print("|---|---|---|---|---|---|---|")
    for label, s in (("one job per cell (upstream's way)", per_cell), ("one job per row", per_row),
                     ("compile shares, fixed slots (a row's first build, no record)", shares),
                     ("**compile shares, memory gate** (fabuild's plan for a recorded row)", gated)):
        print("| %s | %d | %s | %d | %.1f | %s | %s |" % (
            label, s["jobs"], hm(s["longest"]), s["over"], s["hours"],
            hm(s["walls"][20]), hm(s["walls"][60])))
    print()
    print("Over-cap jobs would be stopped by GitHub at %.0f min; the table times them as if"
          " uncapped." % cap)
    r_hours = gated["hours"] / per_cell["hours"]
    r_wall = gated["walls"][20] / per_cell["walls"][20]
    print()
    print("assumed:")
    for line in (
            "a kernel's CPU time at %d archs = %d x its sm_90 measurement (its host-side compile "
            "is counted %d times: an upper bound; measured at 4 archs: 2.9-4.0x)" % (
                a.archs, a.archs, a.archs),
            "NVCC_THREADS=N runs N of a kernel's archs at once, perfectly parallel: a kernel"
            " takes %d x cpu_s / N on the runner (measured: 1.7x faster at 2 threads, 2.9x at 4)"
            % a.archs,
            "fixed slots (fabuild's model of a first build): min(vCPUs // NVCC_THREADS, floor(memory / "
            "largest kernel's peak)) units at once, the kernels' CPU spread over the cores they use",
            "the gate's memory: a fresh runner's MemAvailable %.1f GB less fabuild's reserve; the "
            "gate admits by each unit's recorded peak, and the units' peaks are never all at once"
            % a.runner_available_gb,
            "a runner vCPU is as fast as one core of the measuring machine; aarch64 runners as "
            "fast as x86-64 ones",
            "setup %.0f min per job (ci.setup_time of the matrix); no queueing for runners beyond "
            "the concurrency limit; no failed or retried jobs" % setup,
            "a later tag (all kernels from the cache) takes on the runner what it took on the GPU "
            "machine, 1.2 min: flash_api.cpp on one core and the cell's steps (fabuild: its recorded "
            "CPU and 37 s); a finishing job's every tag likewise, and a row's first cell after its kernels",
            "share jobs keep the cap (fabuild's share rule and balancer); a share's kernels under the "
            "gate as its own gate runs them, on fixed slots an even part of the row's"):
        print("  - " + line)
    print("measured:")
    print("  - per-unit CPU seconds and peak RSS at sm_90 (%s)" % os.path.basename(a.units))
    print("  - a kernel at NVCC_THREADS=N holds N x its one-stage peak: 2.0x at 2 threads, 3.8-3.9x"
          " at 4 (two kernels at 4 archs, docs/performance.md, \"NVCC_THREADS and memory\")")
    print("  - 72 s: a second Python tag of a FlashAttention 2.8.3 row, all kernels from the cache "
          "(GPU machine, docs/performance.md)")
    print()
    print("| ratio | simulated | target |")
    print("|---|---|---|")
    print("| runner-hours: compile shares (memory gate) / one job per cell | **%.3f** | <= %.2f |"
          % (r_hours, TARGET_HOURS))
    print("| wall-clock @20: compile shares (memory gate) / one job per cell | **%.3f** | <= %.2f |"
          % (r_wall, TARGET_WALL))
    print("| (fixed slots: runner-hours, wall-clock @20) | %.3f, %.3f | |"
          % (shares["hours"] / per_cell["hours"], shares["walls"][20] / per_cell["walls"][20]))
    missed = []
    if r_hours > TARGET_HOURS:
        missed.append("runner-hours by %.3f (%.1f h over %.1f h)" % (
            r_hours - TARGET_HOURS, gated["hours"] - TARGET_HOURS * per_cell["hours"],
            TARGET_HOURS * per_cell["hours"]))
    if r_wall > TARGET_WALL:
        missed.append("wall@20 by %.3f (%s over %s)" % (
            r_wall - TARGET_WALL, hm(gated["walls"][20] - TARGET_WALL * per_cell["walls"][20]),
            hm(TARGET_WALL * per_cell["walls"][20])))
    floor_wall = gated["hours"] * 60.0 / 20
    print()
    print("bound: wall@20(memory gate) >= its runner-hours / 20 = %s = %.3f of per-cell's wall@20"
          " (%d jobs of one cell's length in %d waves)" % (
              hm(floor_wall), floor_wall / per_cell["walls"][20], per_cell["jobs"],
              math.ceil(per_cell["jobs"] / 20)))
    print()
    print("targets: " + ("met" if not missed else "missed: " + "; ".join(missed)))
    cmp = stable_compare(answers[4:7], cap, a.stable_series, a.verify_min)
    print()
    print("stable ABI against per series: torch 2.10 to 2.%d (%d series) x CUDA 12.9, 13.0 x x86_64, aarch64 x"
          " cp310-cp313 (16 cells a series, %d in all); the stable build's kernels taken as these measured ones"
          " (the dropout-free build compiles less), a verify job %.0f min" % (
              10 + a.stable_series - 1, a.stable_series, 16 * a.stable_series, a.verify_min))
    print()
    print("| release | jobs | runner-hours | wall-clock @20 | wall-clock @60 |")
    print("|---|---|---|---|---|")
    for label, key in (("per series, one job per cell (upstream's way)", "per-cell"),
                       ("per series, fabuild (rows, memory gate, compile shares)", "per-series"),
                       ("**stable ABI**: a build per CUDA x platform (%s shares) + verify jobs" % counts(cmp["stable_ks"]),
                        "stable")):
        sm = cmp[key]
        print("| %s | %d | %.1f | %s | %s |" % (label, sm["jobs"], sm["hours"], hm(sm["walls"][20]), hm(sm["walls"][60])))
    print()
    print("stable / per-series (fabuild): runner-hours %.3f, wall-clock @20 %.3f; / per-cell: %.3f, %.3f" % (
        cmp["stable"]["hours"] / cmp["per-series"]["hours"], cmp["stable"]["walls"][20] / cmp["per-series"]["walls"][20],
        cmp["stable"]["hours"] / cmp["per-cell"]["hours"], cmp["stable"]["walls"][20] / cmp["per-cell"]["walls"][20]))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
