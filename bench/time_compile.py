#!/usr/bin/env python3
"""Timing compiler wrapper, how bench/data/fa2.8.3-sm90-units-h100.tsv was measured.

Runs the real compiler with the same arguments, then appends one line to $TIMEWRAP_TSV: unit
(the source's basename), wall_s, cpu_s (user + sys of every reaped descendant: nvcc, cudafe++,
cicc, ptxas, gcc), user_s, sys_s, peak_rss_mb (ru_maxrss of RUSAGE_CHILDREN: the largest single
descendant, MiB), start time, exit status, wrapper name. Only commands with -c and a source are
logged. Copy it twice, as nvcc-timed (runs $TIMEWRAP_NVCC, default /usr/local/cuda/bin/nvcc) and
as g++-timed (runs $TIMEWRAP_CXX, default g++), and build with
PYTORCH_NVCC=/path/nvcc-timed CXX=/path/g++-timed (torch's extension builder honours both).
"""
import os
import resource
import subprocess
import sys
import time

SRC_EXT = (".cu", ".cpp", ".cc", ".cxx", ".c")


def main():
    me = os.path.basename(sys.argv[0])
    if "nvcc" in me:
        real = os.environ.get("TIMEWRAP_NVCC", "/usr/local/cuda/bin/nvcc")
    else:
        real = os.environ.get("TIMEWRAP_CXX", "g++")
    args = sys.argv[1:]
    t0 = time.time()
    m0 = time.monotonic()
    rc = subprocess.call([real] + args)
    wall = time.monotonic() - m0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    srcs = [a for a in args if a.endswith(SRC_EXT) and not a.startswith("-")]
    if "-c" in args and srcs:
        tsv = os.environ.get("TIMEWRAP_TSV", "/tmp/units.tsv")
        line = "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t%.0f\t%d\t%s\n" % (
            os.path.basename(srcs[-1]), wall, ru.ru_utime + ru.ru_stime, ru.ru_utime,
            ru.ru_stime, ru.ru_maxrss / 1024.0, t0, rc, me)
        fd = os.open(tsv, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    sys.exit(rc)


if __name__ == "__main__":
    main()
