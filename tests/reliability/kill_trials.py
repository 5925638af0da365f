#!/usr/bin/env python3
"""Kills a real fabuild build at random moments and checks what it promises (docs/reliability.md).

usage: kill_trials.py FABUILD [--trials N] [--signal KILL|INT|TERM|mixed] [--seed S]
                              [--rounds-per-reset R] [--json FILE]

Each trial starts `fabuild MATRIX -o WHEELHOUSE` on a wheelhouse that earlier trials left as they
were killed, waits a random time up to the length of a whole run, sends the signal and checks:

  - no partial or unverified wheel is in the wheelhouse: every .whl outside .staging/ opens as
    a zip whose RECORD hashes every member, whose METADATA names the file's project and version
    and whose WHEEL tags are the file's;
  - SHA256SUMS of every directory lists exactly its wheels with their digests, and every
    manifest entry names a wheel that is there with its digest, except for the cells whose
    filing journal (.filing/<cell>) says a filing was under way: those the next run finishes;
  - SIGINT/SIGTERM: fabuild exits 130/143 (or 0 when every cell had already finished), and
    no process of any cell is left; no staging directory is left;
  - SIGKILL: cell processes may outlive fabuild (nothing can stop that from the outside), and
    are counted; the next run must kill them before it starts a cell.

Every few trials (and at the end) a run is left to finish: it must exit 0 with every cell
filed, SHA256SUMS and the manifest exact, no journal, no staging directory and no process
of any earlier run alive. Then the wheelhouse starts over, some of the time with --force so
that a kill can land while a wheel replaces an older one of the same name.

The cells are `command:` cells (this script, `cell` mode) that write a real wheel into {out}
in pieces, with a background process they leave running, so that kills land mid-write,
mid-filing and mid-cleanup. Exit status 0 when every check held; the figures go to stdout
(and --json FILE).

Also a cell itself: kill_trials.py cell OUT TAG VERSION PIDS_DIR
"""

import argparse
import base64
import hashlib
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
import zipfile

SCRIPT = os.path.abspath(__file__)
LEFTOVER = "61.73"  # `sleep 61.73`: the background process each cell leaves, recognisable by its argv
PROJECT = "flash_attn"

MATRIX = """\
versions: ["2.8.3"]
torch: ["2.7", "2.8"]
cuda: ["12.6", "12.8"]
python: [cp310, cp311, cp312]
archs: "90"
provision: host
budget: {{cores: 4, memory_gb: 16, reserve_gb: 0}}
build: {{kill_grace: 2s}}
command: [{python}, {script}, cell, "{{out}}", "{{python}}", "{{version}}+{{label}}", {pids}]
"""
CELLS = 12  # 2 torch x 2 CUDA x 3 Python


# --- the cell ------------------------------------------------------------------------------

def b64(digest):
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def cell(out, tag, version, pids):
    version = version.lower()  # as setuptools normalises the label
    with open(os.path.join(pids, str(os.getpid())), "w") as f:
        f.write("cell\n")
    bg = subprocess.Popen(["sleep", LEFTOVER])
    with open(os.path.join(pids, str(bg.pid)), "w") as f:
        f.write("leftover\n")
    time.sleep(random.uniform(0, 0.3))
    dist_info = f"{PROJECT}-{version}.dist-info"
    payload = os.urandom(random.randint(256, 1024) * 1024)  # new bytes every build: --force changes the digest
    members = {
        f"{PROJECT}/__init__.py": f'BUILT_FOR = "{tag}"\n'.encode(),
        f"{PROJECT}_2_cuda.{tag}-x86_64-linux-gnu.so": payload,
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: flash-attn\nVersion: {version}\n".encode(),
        f"{dist_info}/WHEEL": f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}-{tag}-linux_x86_64\n".encode(),
    }
    record = "".join(f"{n},sha256={b64(hashlib.sha256(d).digest())},{len(d)}\n" for n, d in members.items())
    members[f"{dist_info}/RECORD"] = (record + f"{dist_info}/RECORD,,\n").encode()
    path = os.path.join(out, f"{PROJECT}-{version}-{tag}-{tag}-linux_x86_64.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:  # written in pieces: a kill leaves half a zip
        for name, data in members.items():
            with z.open(name, "w") as f:
                for at in range(0, len(data), 65536):
                    f.write(data[at:at + 65536])
                    time.sleep(0.002)
    print("wrote", path, flush=True)


# --- checks --------------------------------------------------------------------------------

def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def wheel_problem(path):
    """Why the wheel at `path` is not whole and consistent, or None."""
    name = os.path.basename(path)
    m = re.fullmatch(r"([^-]+)-([^-]+)-([^-]+)-([^-]+)-([^-]+)\.whl", name)
    if not m:
        return "not a wheel file name"
    dist, version, py, abi, plat = m.groups()
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            info = f"{dist}-{version}.dist-info"
            record = z.read(f"{info}/RECORD").decode()
            listed = {}
            for line in record.splitlines():
                p, h, _ = line.rsplit(",", 2)
                listed[p] = h
            for n in names:
                if n == f"{info}/RECORD":
                    continue
                if n not in listed:
                    return f"{n} not in RECORD"
                if listed[n] != "sha256=" + b64(hashlib.sha256(z.read(n)).digest()):
                    return f"{n} does not match RECORD"
            meta = dict(line.split(": ", 1) for line in z.read(f"{info}/METADATA").decode().split("\n\n")[0].splitlines()
                        if ": " in line)
            same_name = re.sub(r"[-_.]+", "-", meta.get("Name", "")).lower() == re.sub(r"[-_.]+", "-", dist).lower()
            if not same_name or meta.get("Version", "").lower() != version.lower():
                return "METADATA disagrees with the file name"
            if f"Tag: {py}-{abi}-{plat}\n" not in z.read(f"{info}/WHEEL").decode():
                return "WHEEL tags disagree with the file name"
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as e:
        return f"unreadable: {e}"
    return None


def pending(house):
    try:
        return set(os.listdir(os.path.join(house, ".filing")))
    except FileNotFoundError:
        return set()


def check_wheelhouse(house, strict):
    """Problems with the wheelhouse as the promises define them; `strict`: no journal allowed."""
    problems = []
    journal = pending(house)
    if strict and journal:
        problems.append(f"filing journal left: {sorted(journal)}")
    try:
        manifest = json.load(open(os.path.join(house, "manifest.json")))["cells"]
    except FileNotFoundError:
        manifest = {}
    journalled_wheels = set()
    for cell_id in journal:
        try:
            entry = json.load(open(os.path.join(house, ".filing", cell_id, "manifest.json")))["cells"][cell_id]
            journalled_wheels.add(entry["wheel"])
        except (FileNotFoundError, KeyError, ValueError):
            pass  # a journal not yet written whole: its wheel was not moved
    for root, dirs, files in os.walk(house):
        rel = os.path.relpath(root, house)
        if rel.split(os.sep)[0] in (".staging", ".filing", "logs"):
            continue
        wheels = {f for f in files if f.endswith(".whl") and not f.startswith(".")}
        for w in sorted(wheels):
            why = wheel_problem(os.path.join(root, w))
            if why:
                problems.append(f"bad wheel {rel}/{w}: {why}")
        if not wheels and "SHA256SUMS" not in files:
            continue
        listed = {}
        if "SHA256SUMS" in files:
            for line in open(os.path.join(root, "SHA256SUMS")):
                digest, _, name = line.rstrip("\n").partition("  ")
                listed[name] = digest
        for w in wheels | set(listed):
            wrel = os.path.normpath(os.path.join(rel, w))
            if wrel in journalled_wheels:
                continue
            if w not in wheels:
                problems.append(f"SHA256SUMS in {rel} lists {w}, which is not there")
            elif w not in listed:
                problems.append(f"{wrel} is not in its SHA256SUMS")
            elif listed[w] != sha256_file(os.path.join(root, w)):
                problems.append(f"SHA256SUMS has the wrong digest for {wrel}")
    for cell_id, entry in manifest.items():
        if cell_id in journal:
            continue
        path = os.path.join(house, entry["wheel"])
        if not os.path.exists(path):
            problems.append(f"manifest entry {cell_id} names {entry['wheel']}, which is not there")
        elif sha256_file(path) != entry["sha256"]:
            problems.append(f"manifest entry {cell_id} has the wrong digest for {entry['wheel']}")
    return problems


def self_test(house, failures):
    """The checks must bite: each way of breaking a finished wheelhouse is reported."""
    wheels = sorted(os.path.join(r, f) for r, _, fs in os.walk(house) for f in fs if f.endswith(".whl")
                    and ".staging" not in r)
    sums = os.path.join(os.path.dirname(wheels[0]), "SHA256SUMS")
    manifest = os.path.join(house, "manifest.json")
    saved = {p: open(p, "rb").read() for p in (wheels[0], sums, manifest)}

    def truncate():
        with open(wheels[0], "r+b") as f:
            f.truncate(len(saved[wheels[0]]) // 2)

    def unlist():
        with open(sums, "w") as f:
            f.writelines(line for line in saved[sums].decode().splitlines(True) if os.path.basename(wheels[0]) not in line)

    def stale_digest():
        with open(sums, "w") as f:
            f.write(saved[sums].decode().replace(sha256_file(wheels[0]), "0" * 64))

    def drop_wheel():
        os.rename(wheels[0], wheels[0] + ".gone")

    for name, breaks in [("a truncated wheel", truncate), ("a wheel missing from SHA256SUMS", unlist),
                         ("a wrong digest in SHA256SUMS", stale_digest), ("a manifest entry without its wheel", drop_wheel)]:
        breaks()
        if not check_wheelhouse(house, strict=True):
            failures.append(f"self-test: the checks did not notice {name}")
        if os.path.exists(wheels[0] + ".gone"):
            os.rename(wheels[0] + ".gone", wheels[0])
        for path, data in saved.items():
            with open(path, "wb") as f:
                f.write(data)
    if check_wheelhouse(house, strict=True):
        failures.append("self-test: the restored wheelhouse does not check clean")


def alive_cell_processes(pids_dir):
    """Recorded cell processes (and the leftovers they started) that still run."""
    alive = []
    for name in os.listdir(pids_dir):
        pid = int(name)
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        ours = SCRIPT.encode() in argv or LEFTOVER.encode() in argv
        if ours and state != "Z":
            alive.append(pid)
    return alive


def filed_count(house):
    try:
        return len(json.load(open(os.path.join(house, "manifest.json")))["cells"])
    except FileNotFoundError:
        return 0


# --- trials --------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fabuild")
    ap.add_argument("--trials", type=int, default=int(os.environ.get("FABUILD_KILL_TRIALS", "24")))
    ap.add_argument("--signal", default="mixed", choices=["KILL", "INT", "TERM", "mixed"])
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--rounds-per-reset", type=int, default=4)
    ap.add_argument("--json")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="fabuild-kill-trials-")
    pids = os.path.join(work, "pids")
    os.makedirs(pids)
    house = os.path.join(work, "wheelhouse")
    matrix = os.path.join(work, "matrix.yaml")
    with open(matrix, "w") as f:
        f.write(MATRIX.format(python=sys.executable, script=SCRIPT, pids=pids))

    figures = {"seed": args.seed, "trials": 0, "by_signal": {}, "kills_inside_a_filing": 0,
               "orphans_after_sigkill": 0, "orphans_killed_by_next_run": 0, "staging_dirs_recovered": 0,
               "filings_finished_by_next_run": 0,
               "completing_runs": 0, "failures": []}
    failures = figures["failures"]

    def run_fabuild(extra=()):
        return subprocess.Popen([args.fabuild, matrix, "-o", house, *extra], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)

    def note_recovery(out):
        m = re.search(r"killed (\d+) leftover cell process", out)
        figures["orphans_killed_by_next_run"] += int(m.group(1)) if m else 0
        m = re.search(r"removed (\d+) staging director", out)
        figures["staging_dirs_recovered"] += int(m.group(1)) if m else 0
        m = re.search(r"finished filing (.*)", out)
        figures["filings_finished_by_next_run"] += len(m.group(1).split(", ")) if m else 0

    def complete_run(label):
        """A run left to finish must complete the matrix exactly."""
        before = alive_cell_processes(pids)
        p = run_fabuild()
        out, _ = p.communicate(timeout=300)
        figures["completing_runs"] += 1
        note_recovery(out)
        if p.returncode != 0:
            failures.append(f"{label}: the completing run exited {p.returncode}:\n{out}")
        if filed_count(house) != CELLS:
            failures.append(f"{label}: {filed_count(house)} of {CELLS} cells filed after a completing run")
        for problem in check_wheelhouse(house, strict=True):
            failures.append(f"{label}: after the completing run: {problem}")
        if os.path.exists(os.path.join(house, ".staging")):
            failures.append(f"{label}: .staging left after a completing run")
        survivors = [pid for pid in before if pid in alive_cell_processes(pids)]
        if survivors:
            failures.append(f"{label}: processes of a killed run survived the next run: {survivors}")

    # How long a whole run takes, to spread the kills over it.
    start = time.monotonic()
    complete_run("first run")
    full = max(0.5, time.monotonic() - start)
    self_test(house, failures)
    shutil.rmtree(house)

    for trial in range(1, args.trials + 1):
        name = args.signal if args.signal != "mixed" else rng.choice(["KILL", "KILL", "INT", "TERM"])
        sig = getattr(signal, "SIG" + name)
        force = rng.random() < 0.3 and filed_count(house) > 0
        delay = rng.uniform(0, full * 1.1)
        earlier = set(os.listdir(pids))  # a SIGKILLed run's orphans, for the next completing run
        p = run_fabuild(["--force"] if force else [])
        time.sleep(delay)
        p.send_signal(sig)
        try:
            out, _ = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            failures.append(f"trial {trial} (SIG{name} at {delay:.2f}s): fabuild did not exit within 60 s")
        figures["trials"] += 1
        note_recovery(out)
        figures["by_signal"][name] = figures["by_signal"].get(name, 0) + 1
        label = f"trial {trial} (SIG{name} at {delay:.2f}s{', --force' if force else ''})"
        if pending(house):
            figures["kills_inside_a_filing"] += 1
        for problem in check_wheelhouse(house, strict=(name != "KILL")):
            failures.append(f"{label}: {problem}")
        if name == "KILL":
            figures["orphans_after_sigkill"] += len(alive_cell_processes(pids))
        else:
            code = p.returncode
            expected = {"INT": (130, -signal.SIGINT), "TERM": (143, -signal.SIGTERM)}[name]
            # 0: every cell was done and the run was publishing when the signal came; a signal
            # before fabuild set its handlers kills it as the signal does (the shell's 128+N).
            if code not in expected and code != 0:
                failures.append(f"{label}: exit {code}, expected {expected[0]}:\n{out[-2000:]}")
            time.sleep(0.2)
            left = [pid for pid in alive_cell_processes(pids) if str(pid) not in earlier]
            if left:
                failures.append(f"{label}: cell processes survived fabuild: {left}")
            if os.path.exists(os.path.join(house, ".staging")) and code != -sig:
                failures.append(f"{label}: a staging directory was left: {os.listdir(os.path.join(house, '.staging'))}")
        if trial % args.rounds_per_reset == 0 or trial == args.trials:
            complete_run(label + ", then a completing run")
            if rng.random() < 0.5:
                shutil.rmtree(house)

    figures["failures"] = failures[:50]
    figures["failure_count"] = len(failures)
    print(json.dumps(figures, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) >= 6 and sys.argv[1] == "cell":
        cell(*sys.argv[2:6])
    else:
        sys.exit(main())
