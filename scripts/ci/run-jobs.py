#!/usr/bin/env python3
"""Runs the jobs of a `fabuild MATRIX --ci-matrix github` plan here, as fresh CI runners would.

Usage: run-jobs.py FABUILD MATRIX JOBS_JSON WORKDIR [-- EXTRA FABUILD ARGS]

JOBS_JSON is what --ci-matrix github printed ({"include": [...]}). Exactly the jobs it lists run,
in the order of the nightly workflow (.github/workflows/nightly.yml, docs/ci.md):

  1. the compile-stage entries ("stage": "compile"), one after another -- CI runs them at once,
     on as many runners; here they take turns, for a 2-core box has no room for more -- and,
     when there are any, the rows built whole (build entries with no shares), which the
     workflow runs in that first stage beside them;
  2. the other build entries ("stage": "build", or none from a fabuild that plans no shares):
     the finishing jobs, which `needs:` the first stage; a failed compile job is reported, and,
     as in the workflow, the build jobs still run (a finishing job compiles what a share did not
     send);
  3. `fabuild merge <every build job's part> -o WORKDIR/merged` (the compile jobs' parts hold
     logs only, and the workflow's merge takes the build jobs' artifacts only).

Each job runs in WORKDIR/jobs/<n>/ (n: 1, 2, ... in the order they run) as `FABUILD MATRIX
<its args> EXTRA -o part`, its args being the entry's `args` string (quoted for a POSIX shell,
split here with shlex), its output in out.log. What is a runner's own is the job's own: its
fabuild cache (FABUILD_CACHE_DIR=<job>/cache, the variable src/util/cache_root.cpp reads), and
so its local object cache, Python environments, recorded unit costs and torch checks, all of
which live under it; and its wheelhouse, <job>/part. What CI shares between runners is shared:
the remote object cache (FABUILD_CACHE_REMOTE and FABUILD_CACHE_REMOTE_TOKEN, inherited from
the caller, as the workflow passes its secrets), uv's and pip's download caches (UV_CACHE_DIR,
PIP_CACHE_DIR and the rest of the caller's environment, as a CI cache or an image would carry
them) and the CUDA toolkit installed on the host. FABUILD_JOB_STARTED is the time the job
starts, as the workflow's first step sets it. Variables that fabuild sets for its own
children (FABUILD_CC_*, FABUILD_OUT_DIR, FABUILD_CELL_ID) and FABUILD_SHARD are not passed on:
a fresh runner has none. One thing differs from CI: there every runner checks out and builds
at the same paths, here every job has paths of its own, so an object that records its paths
(api.cpp's, built with -g) is never shared between jobs here, as it may be on CI.

Prints one line per job (stage, name, exit code, seconds) and the merge's output, and writes
WORKDIR/jobs.tsv (n, stage, name, exit code, seconds, directory). Exit status: 1 when a build
job or the merge failed (or no build job left a part to merge), 2 for bad usage or an
unreadable JSON, else 0 (failed compile jobs alone do not fail the run: the finishing jobs'
results decide).
"""
import json
import os
import shlex
import subprocess
import sys
import time

# What fabuild sets for the processes it starts, or what would pick a shard for every job: a
# fresh runner has none of them.
NOT_INHERITED_PREFIXES = ("FABUILD_CC_",)
NOT_INHERITED = {"FABUILD_CACHE_DIR", "FABUILD_OUT_DIR", "FABUILD_CELL_ID", "FABUILD_SHARD", "FABUILD_JOB_STARTED"}


def usage(message):
    print(f"run-jobs.py: {message}", file=sys.stderr)
    print("usage: run-jobs.py FABUILD MATRIX JOBS_JSON WORKDIR [-- EXTRA FABUILD ARGS]", file=sys.stderr)
    sys.exit(2)


def job_env(cache_dir):
    env = {k: v for k, v in os.environ.items()
           if k not in NOT_INHERITED and not k.startswith(NOT_INHERITED_PREFIXES)}
    env["FABUILD_CACHE_DIR"] = cache_dir
    # The job's start, as the workflow's first step gives it: fabuild records each row's setup
    # (the time to its first compile) for the next plan.
    env["FABUILD_JOB_STARTED"] = str(int(time.time()))
    return env


def run_logged(argv, cwd, env, log_path):
    """Runs argv with stdout and stderr into log_path; returns (exit code, seconds)."""
    start = time.monotonic()
    with open(log_path, "wb") as log:
        try:
            code = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                  stderr=subprocess.STDOUT, check=False).returncode
        except OSError as e:  # the binary missing or not executable: the job fails, as on CI
            log.write(f"run-jobs.py: cannot run {argv[0]}: {e}\n".encode())
            code = 127
    return code, time.monotonic() - start


def main(argv):
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    else:
        extra = []
    if len(argv) != 4:
        usage("expected FABUILD MATRIX JOBS_JSON WORKDIR")
    fabuild, matrix, jobs_json, workdir = (os.path.abspath(a) for a in argv)
    try:
        with open(jobs_json, encoding="utf-8") as f:
            entries = json.load(f)["include"]
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise ValueError('"include" is not a list of objects')
    except (OSError, ValueError, KeyError, TypeError) as e:
        usage(f"{jobs_json}: not a --ci-matrix github plan: {e}")

    compile_jobs = [e for e in entries if e.get("stage") == "compile"]
    build_jobs = [e for e in entries if e.get("stage") != "compile"]
    if compile_jobs:  # the rows built whole run in the first stage, beside the shares
        build_jobs = ([e for e in build_jobs if not e.get("shares")] +
                      [e for e in build_jobs if e.get("shares")])
    os.makedirs(os.path.join(workdir, "jobs"), exist_ok=True)
    rows = []
    build_parts = []
    failed_builds = 0
    for n, entry in enumerate(compile_jobs + build_jobs, start=1):
        stage = "compile" if entry.get("stage") == "compile" else "build"
        name = str(entry.get("name", f"job {n}"))
        job = os.path.join(workdir, "jobs", str(n))
        os.makedirs(job, exist_ok=True)
        args = shlex.split(str(entry.get("args", "")))
        part = os.path.join(job, "part")
        code, seconds = run_logged([fabuild, matrix, *args, *extra, "-o", part], job,
                                   job_env(os.path.join(job, "cache")), os.path.join(job, "out.log"))
        print(f"{stage:<8} {name}: exit {code}, {seconds:.1f} s ({job})", flush=True)
        rows.append((str(n), stage, name, str(code), f"{seconds:.1f}", job))
        if stage == "build":
            build_parts.append(part)
            failed_builds += code != 0

    status = 1 if failed_builds else 0
    # The merge job: every build job's part that is there, whatever its outcome (the workflow
    # uploads it `if: always()`).
    parts = [p for p in build_parts if os.path.isdir(p)]
    if not build_parts:
        print("no build jobs: nothing to merge")
    elif not parts:
        print("merge    no build job left a part: nothing to merge", flush=True)
        rows.append(("merge", "merge", "0 parts", "1", "0.0", ""))
        status = 1
    else:
        merged = os.path.join(workdir, "merged")
        log = os.path.join(workdir, "merge.log")
        code, seconds = run_logged([fabuild, "merge", *parts, "-o", merged], workdir, job_env(
            os.path.join(workdir, "merge-cache")), log)
        with open(log, encoding="utf-8", errors="replace") as f:
            sys.stdout.write(f.read())
        print(f"{'merge':<8} {len(parts)} parts -> {merged}: exit {code}, {seconds:.1f} s", flush=True)
        rows.append(("merge", "merge", f"{len(parts)} parts", str(code), f"{seconds:.1f}", merged))
        status = status or (1 if code != 0 else 0)
    with open(os.path.join(workdir, "jobs.tsv"), "w", encoding="utf-8") as f:
        f.write("n\tstage\tname\texit\tseconds\tdir\n")
        for row in rows:
            f.write("\t".join(c.replace("\t", " ") for c in row) + "\n")
    if failed_builds:
        print(f"run-jobs.py: {failed_builds} of {len(build_jobs)} build jobs failed", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
