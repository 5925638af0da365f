#!/usr/bin/env python3
"""Runs the jobs of a `fabuild MATRIX --ci-matrix github` plan here, as fresh CI runners would.

Usage: run-jobs.py [--parallel N] [--cores C] [--memory-gb M] [--remote nginx:DIR] [--no-timeouts]
                   FABUILD MATRIX JOBS_JSON WORKDIR [-- EXTRA FABUILD ARGS]

JOBS_JSON is what --ci-matrix github printed ({"include": [...]}). Exactly the jobs it lists run,
in the order of the nightly workflow (.github/workflows/nightly.yml, docs/ci.md):

  1. the compile-stage entries ("stage": "compile") and, when there are any, the rows built
     whole (build entries with no shares), which the workflow runs in that first stage beside
     them: up to --parallel at once (ci.max_parallel: GitHub's free plan runs 20), in order;
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

Runner-sized jobs: --cores C and --memory-gb M confine each job to C cores of its own (job slot
k of the N at once gets cores k*C..k*C+C-1) and M GB, the shape of a hosted runner (4 and 16),
by the first way the machine offers: systemd-run --scope (cgroup v2, where systemd runs the
machine), a cgroup v2 made here (cpuset and memory controllers; root, no systemd, as in a VM),
cgroups v1 made here (cpuset and memory; root), else taskset with the memory not limited; the
output's "jobs" line says which. fabuild inside sees the shape (its budget reads
the affinity and the cgroup's limit). --remote nginx:DIR starts Debian's nginx with WebDAV PUT on
127.0.0.1 serving DIR/data (tests/support/nginx_dav.sh's layout), for every job's
FABUILD_CACHE_REMOTE (its log: DIR/access.log), and stops it at the end; DIR may hold an
earlier run's objects.

Prints one line per job (stage, name, exit code, wall and CPU seconds, peak memory where a
cgroup measured it, the most disk its directory took) and the merge's output, and writes
WORKDIR/jobs.tsv (n, stage, name, exit code, seconds, directory, CPU seconds, peak MB, how it was
confined, its start in seconds from the run's, peak disk MB, "yes" when it was cancelled at its
timeout). A job runs at most its entry's `timeout` minutes, as GitHub's timeout-minutes holds
it: then it gets SIGTERM (and SIGKILL 30 s later) and counts as failed (--no-timeouts: none).
Exit status: 1 when a build job or the merge failed (or no build job left a part to merge), 2
for bad usage or an unreadable JSON, else 0 (failed compile jobs alone do not fail the run: the
finishing jobs' results decide).
"""
import argparse
import concurrent.futures
import json
import os
import queue
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

# What fabuild sets for the processes it starts, or what would pick a shard for every job: a
# fresh runner has none of them.
NOT_INHERITED_PREFIXES = ("FABUILD_CC_",)
NOT_INHERITED = {"FABUILD_CACHE_DIR", "FABUILD_OUT_DIR", "FABUILD_CELL_ID", "FABUILD_SHARD", "FABUILD_JOB_STARTED"}


def usage(message):
    print(f"run-jobs.py: {message}", file=sys.stderr)
    print("usage: run-jobs.py [--parallel N] [--cores C] [--memory-gb M] [--remote nginx:DIR] [--no-timeouts] FABUILD "
          "MATRIX JOBS_JSON WORKDIR [-- EXTRA FABUILD ARGS]", file=sys.stderr)
    sys.exit(2)


def job_env(cache_dir, remote):
    env = {k: v for k, v in os.environ.items()
           if k not in NOT_INHERITED and not k.startswith(NOT_INHERITED_PREFIXES)}
    env["FABUILD_CACHE_DIR"] = cache_dir
    if remote:
        env["FABUILD_CACHE_REMOTE"] = remote
    # The job's start, as the workflow's first step gives it: fabuild records each row's setup
    # (the time to its first compile) for the next plan.
    env["FABUILD_JOB_STARTED"] = str(int(time.time()))
    return env


def write(path, value):
    with open(path, "w") as f:
        f.write(value)


def joiner(groups):
    """What the child runs before exec: it, and all it starts, join `groups`."""
    def join():
        for d in groups:
            write(os.path.join(d, "cgroup.procs"), str(os.getpid()))
    return join


def remover(groups, peak_file):
    """What runs once the job has ended: its peak memory in MB from `peak_file` (None if
    unreadable), then `groups` removed (its last processes may still be leaving)."""
    def cleanup():
        peak = None
        try:
            with open(peak_file) as f:
                peak = int(f.read()) / 1024**2
        except (OSError, ValueError):
            pass
        for d in groups:
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except OSError:
                    time.sleep(0.1)
        return peak
    return cleanup


class Confinement:
    """A runner's shape for each job: its own cores and a memory limit, by the first way this
    machine offers (`how` says which):
      - "systemd": systemd-run --scope -p AllowedCPUs=... -p MemoryMax=... (cgroup v2, where
        systemd runs the machine);
      - "cgroup v2": a cgroup of the job's own with the cpuset and memory controllers, made here
        under the v2 hierarchy (a root shell on a machine with no systemd, as in a VM or a
        container with cgroup v2 mounted), which also gives the job's peak memory (memory.peak);
      - "cgroup v1": a cpuset and a memory cgroup of the job's own, made here (a root shell on a
        host with the v1 hierarchies mounted, as in many containers), which also give the job's
        peak memory (memory.max_usage_in_bytes);
      - "taskset": the cores only; the memory is not limited (said in the output).
    Slot k of the N jobs at once gets cores k*C .. k*C+C-1 (modulo the machine's)."""

    V1 = "/sys/fs/cgroup"
    V2 = "/sys/fs/cgroup"

    @classmethod
    def v2_usable(cls):
        """The v2 hierarchy offers cpuset and memory to cgroups made under its root, and we may."""
        try:
            with open(os.path.join(cls.V2, "cgroup.controllers")) as f:
                controllers = f.read().split()
        except OSError:
            return False
        return {"cpuset", "memory"} <= set(controllers) and os.access(os.path.join(cls.V2, "cgroup.subtree_control"), os.W_OK)

    def __init__(self, cores, memory_gb):
        self.cores, self.memory_gb = cores, memory_gb
        self.cpus = sorted(os.sched_getaffinity(0))
        if cores is None and memory_gb is None:
            self.how = "none"
        elif os.path.isdir("/run/systemd/system") and shutil.which("systemd-run"):
            self.how = "systemd"
        elif self.v2_usable():
            self.how = "cgroup v2"
        elif os.access(os.path.join(self.V1, "cpuset"), os.W_OK) and os.access(os.path.join(self.V1, "memory"), os.W_OK):
            self.how = "cgroup v1"
        else:
            self.how = "taskset"

    def cpu_list(self, slot):
        n = self.cores or len(self.cpus)
        return [self.cpus[(slot * n + i) % len(self.cpus)] for i in range(n)]

    def describe(self):
        if self.how == "none":
            return "not confined"
        memory = f"{self.memory_gb:g} GB" if self.memory_gb else "the machine's memory"
        unlimited = " (memory not limited: no cgroup here)" if self.how == "taskset" and self.memory_gb else ""
        return f"{self.cores or len(self.cpus)} cores and {memory} a job, by {self.how}{unlimited}"

    def start(self, argv, slot, name):
        """(argv, preexec_fn, cleanup() -> peak MB or None) for one job in `slot`."""
        cpus = ",".join(map(str, self.cpu_list(slot)))
        if self.how == "systemd":
            props = [f"-p", f"AllowedCPUs={cpus}"]
            if self.memory_gb:
                props += ["-p", f"MemoryMax={int(self.memory_gb * 1024**3)}"]
            return ["systemd-run", "--scope", "--quiet", *props, *argv], None, lambda: None
        if self.how == "cgroup v2":  # one group with both controllers
            write(os.path.join(self.V2, "cgroup.subtree_control"), "+cpuset +memory")
            group = os.path.join(self.V2, name)
            os.makedirs(group, exist_ok=True)
            write(os.path.join(group, "cpuset.cpus"), cpus)
            if self.memory_gb:
                write(os.path.join(group, "memory.max"), str(int(self.memory_gb * 1024**3)))
            return argv, joiner([group]), remover([group], os.path.join(group, "memory.peak"))
        if self.how == "cgroup v1":  # a group in each hierarchy
            cpuset = os.path.join(self.V1, "cpuset", name)
            memory = os.path.join(self.V1, "memory", name)
            for d in (cpuset, memory):
                os.makedirs(d, exist_ok=True)
            with open(os.path.join(self.V1, "cpuset", "cpuset.mems")) as f:
                write(os.path.join(cpuset, "cpuset.mems"), f.read().strip())
            write(os.path.join(cpuset, "cpuset.cpus"), cpus)
            if self.memory_gb:
                write(os.path.join(memory, "memory.limit_in_bytes"), str(int(self.memory_gb * 1024**3)))
            return argv, joiner([cpuset, memory]), remover([cpuset, memory],
                                                           os.path.join(memory, "memory.max_usage_in_bytes"))
        if self.how == "taskset":
            return ["taskset", "-c", cpus, *argv], None, lambda: None
        return argv, None, lambda: None


def disk_mb(path):
    """The disk space under path now, in MB (du: what the files take), or None."""
    try:
        out = subprocess.run(["du", "-s", "--block-size=1M", path], capture_output=True, text=True, timeout=120)
        return int(out.stdout.split()[0])
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return None


def run_logged(argv, cwd, env, log_path, confinement=None, slot=0, name="job", timeout_s=None):
    """Runs argv with stdout and stderr into log_path; returns (exit code, wall s, CPU s, peak MB,
    peak disk MB, timed out). CPU is the job's processes' user and system time (wait4: all of them,
    as each waits for its own); the peak, its cgroup's (None without one); the disk, the largest
    that cwd (the job's directory: its caches, build trees and wheelhouse) took, sampled every 5 s
    and at the end. Past `timeout_s` the job is cancelled as GitHub cancels one at its
    timeout-minutes: SIGTERM (fabuild stops its cells and exits 143), SIGKILL 30 s later."""
    start = time.monotonic()
    timed_out = threading.Event()
    argv, preexec, cleanup = confinement.start(argv, slot, name) if confinement else (argv, None, lambda: None)
    cpu = 0.0
    disk = [None]
    done = threading.Event()

    def sample_disk():
        while True:
            mb = disk_mb(cwd)
            if mb is not None and (disk[0] is None or mb > disk[0]):
                disk[0] = mb
            if done.wait(5):
                return
    sampler = threading.Thread(target=sample_disk, daemon=True)
    sampler.start()
    with open(log_path, "wb") as log:
        try:
            child = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, preexec_fn=preexec)

            def cancel():
                timed_out.set()
                log.write(f"run-jobs.py: cancelled at the job's timeout ({timeout_s / 60:g} min)\n".encode())
                log.flush()
                child.send_signal(signal.SIGTERM)
                if not done.wait(30):
                    child.kill()
            timer = threading.Timer(timeout_s, cancel) if timeout_s else None
            if timer:
                timer.daemon = True
                timer.start()
            _, status, usage = os.wait4(child.pid, 0)
            if timer:
                timer.cancel()
            child.returncode = os.waitstatus_to_exitcode(status)
            code = child.returncode
            cpu = usage.ru_utime + usage.ru_stime
        except OSError as e:  # the binary missing or not executable: the job fails, as on CI
            log.write(f"run-jobs.py: cannot run {argv[0]}: {e}\n".encode())
            code = 127
    seconds = time.monotonic() - start
    done.set()
    sampler.join()
    peak = cleanup()
    return code, seconds, cpu, peak, disk[0], timed_out.is_set()


def start_nginx(data):
    """Debian's nginx with WebDAV PUT on 127.0.0.1, serving `data` (tests/support/nginx_dav.sh's
    configuration): the remote object cache every job shares. Returns (process, URL)."""
    os.makedirs(os.path.join(data, "tmp"), exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    conf = os.path.join(data, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""daemon off; master_process off; worker_processes 1;
pid {data}/nginx.pid; error_log {data}/error.log;
events {{ worker_connections 256; }}
http {{
  access_log {data}/access.log;
  client_body_temp_path {data}/tmp; proxy_temp_path {data}/tmp; fastcgi_temp_path {data}/tmp;
  uwsgi_temp_path {data}/tmp; scgi_temp_path {data}/tmp;
  client_max_body_size 0;
  server {{ listen 127.0.0.1:{port};
    location / {{ root {data}/data; dav_methods PUT; create_full_put_path on; dav_access user:rw; }} }}
}}
""")
    os.makedirs(os.path.join(data, "data"), exist_ok=True)
    nginx = subprocess.Popen(["nginx", "-p", data, "-c", conf], stdin=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return nginx, f"http://127.0.0.1:{port}/cache"
        except OSError:
            time.sleep(0.05)
    nginx.kill()
    raise SystemExit(f"run-jobs.py: nginx did not answer on 127.0.0.1:{port}; see {data}/error.log")


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="run-jobs.py", description="Runs the jobs of a --ci-matrix github plan here, as CI runners would.")
    parser.add_argument("--parallel", type=int, default=1, help="jobs at once (ci.max_parallel); default 1")
    parser.add_argument("--cores", type=int, help="each job's cores (a hosted runner: 4)")
    parser.add_argument("--memory-gb", type=float, help="each job's memory limit (a hosted runner: 16)")
    parser.add_argument("--no-timeouts", dest="timeouts", action="store_false",
                        help="let every job run to its end (default: cancel a job at its entry's timeout, in minutes, "
                             "as GitHub does at timeout-minutes)")
    parser.add_argument("--remote", help="nginx:DIR: start nginx on 127.0.0.1 serving DIR as the jobs' remote cache")
    parser.add_argument("fabuild")
    parser.add_argument("matrix")
    parser.add_argument("jobs_json")
    parser.add_argument("workdir")
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    else:
        extra = []
    try:
        args = parser.parse_args(argv)
    except SystemExit:
        usage("bad arguments")
    if args.parallel < 1 or (args.cores is not None and args.cores < 1) or (args.memory_gb is not None and args.memory_gb <= 0):
        usage("--parallel and --cores take a whole number from 1, --memory-gb a size above 0")
    if args.remote is not None and not args.remote.startswith("nginx:"):
        usage(f"--remote {args.remote}: expected nginx:DIR")
    return args, extra


def main(argv):
    args, extra = parse_args(argv)
    fabuild, matrix, jobs_json, workdir = (os.path.abspath(a) for a in (args.fabuild, args.matrix, args.jobs_json, args.workdir))
    try:
        with open(jobs_json, encoding="utf-8") as f:
            entries = json.load(f)["include"]
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise ValueError('"include" is not a list of objects')
    except (OSError, ValueError, KeyError, TypeError) as e:
        usage(f"{jobs_json}: not a --ci-matrix github plan: {e}")

    compile_jobs = [e for e in entries if e.get("stage") == "compile"]
    build_jobs = [e for e in entries if e.get("stage") != "compile"]
    first = compile_jobs
    if compile_jobs:  # the rows built whole run in the first stage, beside the shares
        first = compile_jobs + [e for e in build_jobs if not e.get("shares")]
        build_jobs = [e for e in build_jobs if e.get("shares")]
    os.makedirs(os.path.join(workdir, "jobs"), exist_ok=True)
    confinement = Confinement(args.cores, args.memory_gb)
    nginx, remote = (None, "")
    if args.remote:
        served = os.path.abspath(args.remote[len("nginx:"):])
        nginx, remote = start_nginx(served)
        print(f"remote   nginx {remote} (serving {served}/data)", flush=True)
    print(f"jobs     {len(first) + len(build_jobs)}, {args.parallel} at once, {confinement.describe()}", flush=True)
    order = first + build_jobs
    numbered = {id(e): n for n, e in enumerate(order, start=1)}
    rows = []
    build_parts = []
    failed_builds = 0
    lock = threading.Lock()
    run_started = time.monotonic()
    slots = queue.Queue()
    for k in range(args.parallel):
        slots.put(k)

    def run_one(entry):
        nonlocal failed_builds
        n = numbered[id(entry)]
        stage = "compile" if entry.get("stage") == "compile" else "build"
        name = str(entry.get("name", f"job {n}"))
        job = os.path.join(workdir, "jobs", str(n))
        os.makedirs(job, exist_ok=True)
        part = os.path.join(job, "part")
        slot = slots.get()
        try:
            began = time.monotonic() - run_started
            minutes = entry.get("timeout") if args.timeouts else None
            code, seconds, cpu, peak, disk, timed_out = run_logged(
                [fabuild, matrix, *shlex.split(str(entry.get("args", ""))), *extra, "-o", part], job,
                job_env(os.path.join(job, "cache"), remote), os.path.join(job, "out.log"), confinement, slot,
                f"fabuild-job-{os.getpid()}-{n}", 60 * float(minutes) if minutes else None)
        finally:
            slots.put(slot)
        peak_text = f", peak {peak:.0f} MB" if peak is not None else ""
        disk_text = f", disk {disk} MB" if disk is not None else ""
        cancelled = f" (cancelled at its {minutes}-minute timeout)" if timed_out else ""
        with lock:
            print(f"{stage:<8} {name}: exit {code}{cancelled}, {seconds:.1f} s, {cpu:.1f} s CPU{peak_text}{disk_text} "
                  f"({job})", flush=True)
            rows.append((str(n), stage, name, str(code), f"{seconds:.1f}", job, f"{cpu:.1f}",
                         f"{peak:.0f}" if peak is not None else "", confinement.how, f"{began:.1f}",
                         str(disk) if disk is not None else "", "yes" if timed_out else ""))
            if stage == "build":
                build_parts.append(part)
                failed_builds += code != 0

    try:
        for stage_jobs in (first, build_jobs):  # the second stage `needs:` the first
            with concurrent.futures.ThreadPoolExecutor(max_workers=args.parallel) as pool:
                list(pool.map(run_one, stage_jobs))
        rows.sort(key=lambda r: int(r[0]))
        build_parts.sort(key=lambda p: int(os.path.basename(os.path.dirname(p))))

        status = 1 if failed_builds else 0
        # The merge job: every build job's part that is there, whatever its outcome (the workflow
        # uploads it `if: always()`).
        parts = [p for p in build_parts if os.path.isdir(p)]
        if not build_parts:
            print("no build jobs: nothing to merge")
        elif not parts:
            print("merge    no build job left a part: nothing to merge", flush=True)
            rows.append(("merge", "merge", "0 parts", "1", "0.0", "", "", "", "", "", "", ""))
            status = 1
        else:
            merged = os.path.join(workdir, "merged")
            log = os.path.join(workdir, "merge.log")
            began = time.monotonic() - run_started
            code, seconds, cpu, _, _, _ = run_logged([fabuild, "merge", *parts, "-o", merged], workdir,
                                                  job_env(os.path.join(workdir, "merge-cache"), remote), log)
            with open(log, encoding="utf-8", errors="replace") as f:
                sys.stdout.write(f.read())
            print(f"{'merge':<8} {len(parts)} parts -> {merged}: exit {code}, {seconds:.1f} s", flush=True)
            rows.append(("merge", "merge", f"{len(parts)} parts", str(code), f"{seconds:.1f}", merged, f"{cpu:.1f}", "",
                         "", f"{began:.1f}", "", ""))
            status = status or (1 if code != 0 else 0)
    finally:
        if nginx:
            nginx.terminate()
            nginx.wait()
    with open(os.path.join(workdir, "jobs.tsv"), "w", encoding="utf-8") as f:
        f.write("n\tstage\tname\texit\tseconds\tdir\tcpu_seconds\tpeak_mb\tconfined_by\tstart_s\tdisk_peak_mb\t"
                "timed_out\n")
        for row in rows:
            f.write("\t".join(c.replace("\t", " ") for c in row) + "\n")
    if failed_builds:
        print(f"run-jobs.py: {failed_builds} of {len(build_jobs) + len(first) - len(compile_jobs)} build jobs failed",
              file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
