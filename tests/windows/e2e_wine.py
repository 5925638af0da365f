#!/usr/bin/env python3
"""fabuild.exe end to end under Wine, on command: cells (docs/matrix.md).

usage: e2e_wine.py FABUILD_EXE HELPER_EXE

The cells run tests/windows/helper.cpp (HELPER_EXE), which writes a real win_amd64 wheel or
stands in for a build that hangs, leaves a child behind or ignores Ctrl-Break. Checked, each
through fabuild.exe as a user runs it (WINEPREFIX, WINEDEBUG from scripts/windows-test.sh):

  - the example matrix and a win_amd64 matrix plan (--dry-run); matrix/windows.yaml plans with the
    Visual Studio environment that tests/windows/vcvarsall.bat (a stand-in) sets, captured by
    Wine's cmd.exe, then served from the cache; a failing vcvarsall.bat is a clear error;
  - a matrix under a path with non-ASCII characters builds;
  - a matrix builds: every wheel filed under wheelhouse\\fa...\\torch...\\cu...\\ whole (its
    RECORD, METADATA, WHEEL tags, SHA256SUMS and the manifest agree), exit 0; a second run
    files them again over the first run's;
  - a cell that leaves a child behind succeeds, and the child is gone (the Job Object);
  - a cell past its timeout fails as timed out, its child gone with it;
  - Ctrl-C (GenerateConsoleCtrlEvent on fabuild's console, by the helper): exit 130, the running
    cell and its child gone, no other cell started;
  - a second fabuild on a wheelhouse in use exits 4 naming the first;
  - atomic filing: fabuild killed at random moments (SIGKILL to the Wine process, so Windows'
    TerminateProcess) never leaves a partial or unlisted wheel, and the next run completes.
Exit status 0 when every check held.
"""

import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability"))
from kill_trials import check_wheelhouse, wheel_problem  # noqa: E402  (the same promises as on Linux)

FABUILD, HELPER = (os.path.abspath(p) for p in sys.argv[1:3])
SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
failures = []


def win(path):
    """The Windows name of a Linux path: Wine's drive Z: is the root."""
    return "Z:" + os.path.abspath(path).replace("/", "\\")


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else f"\n     {detail}"), flush=True)
    if not ok:
        failures.append(what)


# What the Windows programs see of this machine's environment: Wine's own variables and what runs
# it, never the caller's POSIX paths (an XDG_CACHE_HOME of /tmp/x, a FABUILD_CACHE_DIR), which a
# Windows program cannot use; each test adds what it means to set.
KEEP = ("PATH", "HOME", "USER", "LANG", "TMPDIR", "DISPLAY", "XDG_RUNTIME_DIR")


def hermetic(extra=None):
    env = {k: v for k, v in os.environ.items() if k in KEEP or k.startswith("WINE")}
    env.update(extra or {})
    return env


def wine(*args, cwd=None, timeout=300, env=None):
    try:
        return subprocess.run(["wine", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              env=env or hermetic())
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
        return subprocess.CompletedProcess(e.cmd, -1, f"timed out after {timeout}s\n{out}", "")


def fabuild(*args, cwd, timeout=300, cache=None, env=None):
    extra = dict(env or {})
    if cache:
        extra["FABUILD_CACHE_DIR"] = cache  # Wine passes it on: fabuild's own cache directory
    r = wine(FABUILD, *args, cwd=cwd, timeout=timeout, env=hermetic(extra))
    return r.returncode, r.stdout + r.stderr


def fake_visual_studio(d):
    """The stand-in vcvarsall.bat under d\VS, and d\toolchains\host.yaml naming it."""
    bat = os.path.join(d, "VS", "VC", "Auxiliary", "Build", "vcvarsall.bat")
    os.makedirs(os.path.dirname(bat))
    shutil.copy(os.path.join(SOURCE, "tests", "windows", "vcvarsall.bat"), bat)
    os.makedirs(os.path.join(d, "toolchains"))
    return bat


def write_host_yaml(d, bat, toolset=""):
    with open(os.path.join(d, "toolchains", "host.yaml"), "w") as f:
        f.write(f"msvc: {{vcvarsall: '{win(bat)}'{toolset}}}\n")


def alive(pid):
    return wine(HELPER, "alive", str(pid)).returncode == 0


def pids_in(path):
    try:
        return [int(x) for x in open(path).read().split()]
    except (FileNotFoundError, ValueError):
        return []


def wait_for(path, seconds):
    until = time.time() + seconds
    while time.time() < until:
        if pids_in(path):
            return True
        time.sleep(0.05)
    return False


def matrix(dir, command, pythons=("cp311", "cp312"), build="{kill_grace: 1s}"):
    path = os.path.join(dir, "m.yaml")
    quoted = ", ".join("'" + a.replace("'", "''") + "'" for a in command)
    with open(path, "w") as f:
        f.write(f"""versions: ["2.8.3"]
torch: ["2.8"]
cuda: ["12.8"]
python: [{", ".join(pythons)}]
platform: win_amd64
provision: host
cache: false
budget: {{cores: 2, memory_gb: 16, reserve_gb: 0, jobs: 1}}
build: {build}
command: [{quoted}]
""")
    return "m.yaml"


WHEEL = [win(HELPER), "wheel", "{out}", "{python}-{python}-{platform}", "{version}+{label}"]


def wheels(house):
    return sorted(os.path.relpath(os.path.join(r, f), house) for r, _, fs in os.walk(house) for f in fs
                  if f.endswith(".whl") and ".staging" not in r)


def test_plans(tmp):
    # The bundled example names no platform: on Windows its cells are win_amd64 ones, built in
    # the Visual Studio environment (the stand-in's, through FABUILD_TOOLCHAINS).
    d = tempfile.mkdtemp(dir=tmp)
    bat = fake_visual_studio(d)
    write_host_yaml(d, bat)
    code, out = fabuild(win(os.path.join(SOURCE, "matrix", "example.yaml")), "--dry-run", "-v", cwd=d,
                        cache=os.path.join(d, "cache"), env={"FABUILD_TOOLCHAINS": win(os.path.join(d, "toolchains"))})
    check("matrix\\example.yaml --dry-run plans 3 win_amd64 cells in the captured MSVC environment",
          code == 0 and "3 cells to build" in out and out.count("-win_amd64") >= 3 and "linux_x86_64" not in out
          and "VS 17.99.0, tools 14.99.12345 (captured now)" in out, f"exit {code}\n{out[-3000:]}")
    d = tempfile.mkdtemp(dir=tmp)
    code, out = fabuild(matrix(d, WHEEL), "--dry-run", cwd=d)
    check("a win_amd64 matrix plans", code == 0 and "win_amd64" in out, f"exit {code}\n{out[-2000:]}")


def test_build(tmp):
    d = tempfile.mkdtemp(dir=tmp)
    code, out = fabuild(matrix(d, WHEEL), "-o", "wh", cwd=d)
    house = os.path.join(d, "wh")
    found = wheels(house)
    check("a command: matrix builds and files its wheels", code == 0 and len(found) == 2, f"exit {code}, {found}\n{out[-3000:]}")
    check("the wheels are filed under fa...\\torch...\\cu...\\",
          all(w.startswith(os.path.join("fa2.8.3", "torch2.8", "cu128")) for w in found), str(found))
    problems = check_wheelhouse(house, strict=True)
    check("each wheel is whole, listed in SHA256SUMS and the manifest", not problems and found, str(problems))
    # Command cells build every time: this files each wheel over the one there (MoveFileExW).
    code, out = fabuild("m.yaml", "-o", "wh", cwd=d)
    problems = check_wheelhouse(house, strict=True)
    check("a second run files its wheels over the first run's", code == 0 and wheels(house) == found and not problems,
          f"exit {code}, {problems}\n{out[-2000:]}")


def test_msvc_capture(tmp):
    # The Visual Studio environment of matrix/windows.yaml's cell, from the stand-in vcvarsall.bat
    # (tests/windows/vcvarsall.bat) run by Wine's cmd.exe as fabuild runs the real one.
    d = tempfile.mkdtemp(dir=tmp, prefix="msvc (x86) ")
    bat = fake_visual_studio(d)
    with open(os.path.join(SOURCE, "matrix", "windows.yaml")) as f:  # without its patch file
        text = "".join(line for line in f if "patches" not in line)
    with open(os.path.join(d, "m.yaml"), "w") as f:
        f.write(text)
    cache = os.path.join(d, "cache")

    def plan(toolset=""):
        write_host_yaml(d, bat, toolset)
        return fabuild("m.yaml", "--dry-run", "-v", cwd=d, cache=cache)

    code, out = plan()
    check("win_amd64 plan: vcvarsall.bat captured by cmd.exe, its environment shown",
          code == 0 and "VS 17.99.0, tools 14.99.12345 (captured now)" in out and "+ INCLUDE=" in out
          and "~ PATH: 2 entries in front" in out, f"exit {code}\n{out[-3000:]}")
    code, out = plan()
    check("win_amd64 plan: the capture served from the cache the next time", code == 0 and "(cached in " in out,
          f"exit {code}\n{out[-3000:]}")
    check("win_amd64 plan: the object cache is on (fabuild-cc.exe stands in for nvcc)",
          code == 0 and "object cache: " in out and "object cache: off" not in out
          and "take its kernels from the cache" in out, f"exit {code}\n{out[-3000:]}")
    code, out = plan(', toolset: "14.0"')
    check("win_amd64 plan: a failing vcvarsall.bat is a clear error naming it",
          "capturing the MSVC environment failed" in out and "Toolset directory for version '14.0' was not found" in out,
          f"exit {code}\n{out[-3000:]}")


def test_unicode_paths(tmp):
    # The matrix's path reaches fabuild.exe as UTF-16 and must be read as such, not through the
    # ANSI code page.
    d = tempfile.mkdtemp(dir=tmp, prefix="matrix \u00fc\u20ac ")
    house = tempfile.mkdtemp(dir=tmp)
    code, out = fabuild(win(os.path.join(d, matrix(d, WHEEL, pythons=("cp312",)))), "-o", win(house), cwd=tmp)
    check("a matrix under a path with non-ASCII characters builds", code == 0 and len(wheels(house)) == 1,
          f"exit {code}\n{out[-2000:]}")


def test_leftover_child(tmp):
    d = tempfile.mkdtemp(dir=tmp)
    pid_file = os.path.join(d, "pids")
    code, out = fabuild(matrix(d, [win(HELPER), "leave-child", win(pid_file)], pythons=("cp312",)), "-o", "wh", cwd=d)
    pids = pids_in(pid_file)
    check("a cell that leaves a child behind succeeds", code == 0 and pids, f"exit {code}\n{out[-2000:]}")
    time.sleep(0.5)
    check("the child it left is gone with its Job Object", pids and not alive(pids[0]), f"pids {pids}")


def test_timeout(tmp):
    d = tempfile.mkdtemp(dir=tmp)
    pid_file = os.path.join(d, "pids")
    start = time.time()
    code, out = fabuild(matrix(d, [win(HELPER), "leave-child", win(pid_file), "600000"], pythons=("cp312",),
                               build="{timeout: 3s, kill_grace: 1s}"), "-o", "wh", cwd=d)
    took = time.time() - start
    pids = pids_in(pid_file)
    check("a cell past its timeout fails as timed out", code == 1 and "timed out after 3s" in out and took < 60,
          f"exit {code} after {took:.0f}s\n{out[-2000:]}")
    check("its process and the child it started are gone", pids and not any(alive(p) for p in pids), f"pids {pids}")


def test_ctrl_c(tmp):
    d = tempfile.mkdtemp(dir=tmp)
    pid_file = os.path.join(d, "pids")
    m = matrix(d, [win(HELPER), "leave-child", win(pid_file), "600000"], build="{kill_grace: 2s}")
    start = time.time()
    r = wine(HELPER, "ctrl-c", win(pid_file), "--", win(FABUILD), m, "-o", "wh", cwd=d, timeout=120)
    took = time.time() - start
    out = r.stdout + r.stderr
    pids = pids_in(pid_file)
    check("Ctrl-C: fabuild exits 130", r.returncode == 130 and "sent Ctrl-C" in out, f"exit {r.returncode} after {took:.0f}s\n{out[-3000:]}")
    check("Ctrl-C: the running cell's job is terminated", pids and not any(alive(p) for p in pids), f"pids {pids}")
    check("Ctrl-C: no other cell started", "cp312" not in "".join(os.listdir(os.path.join(d, "wh", "logs"))),
          str(os.listdir(os.path.join(d, "wh", "logs"))))


def test_locked_wheelhouse(tmp):
    d = tempfile.mkdtemp(dir=tmp)
    pid_file = os.path.join(d, "pids")
    first = subprocess.Popen(["wine", FABUILD, matrix(d, [win(HELPER), "leave-child", win(pid_file), "600000"],
                                                       pythons=("cp312",), build="{timeout: 20s, kill_grace: 1s}"),
                              "-o", "wh"], cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    started = wait_for(pid_file, 60)
    code, out = fabuild("m.yaml", "-o", "wh", cwd=d)
    check("a second fabuild on a wheelhouse in use exits 4 naming the first",
          started and code == 4 and "another fabuild is building into this wheelhouse: pid" in out,
          f"exit {code}\n{out[-2000:]}")
    first.kill()
    first.wait()


def test_atomic_filing(tmp, trials=5):
    d = tempfile.mkdtemp(dir=tmp)
    # Wheels big enough that hashing, verifying and filing them takes a while.
    m = matrix(d, WHEEL + ["24"], pythons=("cp310", "cp311", "cp312", "cp313"))
    house = os.path.join(d, "wh")
    start = time.time()
    code, out = fabuild(m, "-o", "wh", cwd=d, timeout=600)
    whole_run = time.time() - start
    check("atomic filing: a whole run of 4 big wheels", code == 0, f"exit {code}\n{out[-2000:]}")
    rng = random.Random(19)
    problems = []
    landed = 0
    for trial in range(trials):
        p = subprocess.Popen(["wine", FABUILD, m, "-o", "wh", "--force"], cwd=d, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.1, whole_run))
        landed += p.poll() is None
        p.kill()  # SIGKILL to the Wine process: Windows sees TerminateProcess
        p.wait()
        problems += [f"trial {trial}: {x}" for x in check_wheelhouse(house, strict=False)]
    code, out = fabuild(m, "-o", "wh", cwd=d, timeout=600)
    problems += [f"after the last run: {x}" for x in check_wheelhouse(house, strict=True)]
    found = wheels(house)
    check(f"atomic filing: {landed} of {trials} kills landed mid-run; none left a partial or unlisted wheel",
          landed > 0 and not problems, "\n     ".join(problems) or "no kill landed while fabuild ran")
    check("atomic filing: the run after them completes every cell",
          code == 0 and len(found) == 4 and not any(wheel_problem(os.path.join(house, w)) for w in found),
          f"exit {code}, {found}\n{out[-2000:]}")


def main():
    # Wine's own services (started with the first program of a fresh server) inherit that
    # program's output pipes and outlive it: started here with nowhere to write, they keep no
    # test's pipe open; the server stays up meanwhile, so they are not started again.
    subprocess.run(["wineserver", "--persistent=120"])  # 2 when one is up already: that one serves
    subprocess.run(["wine", "cmd", "/c", "exit"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory(prefix="fabuild-wine-") as tmp:
        for test in (test_plans, test_msvc_capture, test_build, test_unicode_paths, test_leftover_child, test_timeout, test_ctrl_c, test_locked_wheelhouse,
                     test_atomic_filing):
            start = time.time()
            test(tmp)
            print(f"     ({test.__name__}: {time.time() - start:.1f}s)", flush=True)
    print(f"e2e_wine: {len(failures)} failed" if failures else "e2e_wine: all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
