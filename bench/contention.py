#!/usr/bin/env python3
"""How much more CPU time one compile takes as the machine gets busier.

Runs N copies of the same command at once, for each N of --levels, and prints per level: how busy
the machine's processors were meanwhile (/proc/stat, every processor, as fabuild-cc records it for
each compile: objcache/spawn.h's host_busy), each copy's CPU and wall time (wait4's rusage: the
command and its children), and the CPU time over the first level's. This is what
costs/contention.h's curve is fitted to (docs/performance.md, "A loaded machine's compiles").

  contention.py [--levels 1,4,8,12,16] [--repeat R] -- COMMAND ARGS...

Each copy runs in its own directory (./contention.<level>.<copy>/, its working directory), and
"{i}" in an argument is replaced by the copy's number. Prints a TSV: level, busy, median CPU s,
median wall s, CPU over level 1's.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time


def host_cpu():
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:9]]
    return sum(fields) - fields[3] - fields[4], sum(fields)  # busy (all but idle, iowait), total


def run_level(level, command, repeat):
    cpus, walls, busies = [], [], []
    for r in range(repeat):
        procs = []
        before = host_cpu()
        started = time.monotonic()
        for i in range(level):
            cwd = f"contention.{level}.{r}.{i}"
            os.makedirs(cwd, exist_ok=True)
            args = [a.replace("{i}", str(i)) for a in command]
            procs.append(subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        pending = {p.pid: p for p in procs}
        while pending:
            pid, status, usage = os.wait4(-1, 0)
            if pid not in pending:
                continue
            p = pending.pop(pid)
            if os.waitstatus_to_exitcode(status) != 0:
                sys.exit(f"contention.py: a copy failed: {p.stderr.read().decode(errors='replace')[-2000:]}")
            cpus.append(usage.ru_utime + usage.ru_stime)
            walls.append(time.monotonic() - started)
        after = host_cpu()
        busies.append((after[0] - before[0]) / max(1, after[1] - before[1]))
    return statistics.median(busies), statistics.median(cpus), statistics.median(walls)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--levels", default="1,4,8,12,16")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        ap.error("no command")
    print(f"# {os.cpu_count()} processors; command: {' '.join(command)}")
    print("level\tbusy\tcpu_s\twall_s\tcpu_over_first")
    first = None
    for level in [int(v) for v in a.levels.split(",")]:
        busy, cpu, wall = run_level(level, command, a.repeat)
        first = first or cpu
        print(f"{level}\t{busy:.3f}\t{cpu:.1f}\t{wall:.1f}\t{cpu / first:.3f}", flush=True)


if __name__ == "__main__":
    main()
