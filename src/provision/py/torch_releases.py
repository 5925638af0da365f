"""fabuild's questions to a torch index: which torch versions it has for one platform and Python,
and of which build each one's wheel is (src/provision/torch_releases.h asks, and keeps the builds).

Usage (given to `python -c`): torch_releases.py list REQUEST, or torch_releases.py builds REQUEST,
with REQUEST one JSON document:
  {"python_version": "3.12", "abi": "cp313t" (free-threaded only), "platforms": ["manylinux_2_28_x86_64", ...],
   "sources": [{"tag": "cu130", "args": ["--index-url", URL], "versions": ["2.11.0", ...]}],
   "jobs": 4, "timeout": 120}
A source is one index as pip's own arguments name it ([]: the index pip is configured with);
`versions` are those whose build `builds` asks for. pip is this interpreter's (`python -m pip`).

list prints {"sources": [{"tag": "cu130", "versions": ["2.11.0+cu130", ...]}]}: what
`pip index versions torch` has wheels of for that platform and Python, spelled as pip lists them
(pre-releases left out, as pip leaves them out); [] when pip finds none and reports no trouble
reaching the index.
builds prints {"sources": [{"tag": "cu130", "builds": {"2.11.0": "13.0", "2.10.0": "cpu"}}]}: the
local label says it (+cu130: "13.0"; +cpu, +rocm6.4, +xpu: that word), else the wheel's metadata
does, read with `pip install --dry-run --report` (which reads the metadata alone where the index
serves it, PEP 658, or pip's fast-deps can read it from the wheel in place): a pinned CUDA runtime
(nvidia-cuda-runtime-cu12==12.8.90: "12.8", nvidia-cuda-runtime==13.0.96: "13.0") or toolkit
(cuda-toolkit[...]==13.2.*: "13.2"); pytorch-triton-rocm: "rocm"; none of them: "cpu".

Each pip run is stopped after `timeout` seconds, and at most `jobs` run at once. On success one
JSON line on stdout; else pip's own message on stderr, and exit 1.
"""

import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

# pip's warnings when it could not reach an index: "No matching distribution" then means nothing.
UNREACHABLE = re.compile(r"Retrying \(|connection error|Could not fetch URL|NewConnectionError|SSLError|"
                         r"ProxyError|Max retries exceeded|HTTP error|\b40[13] Client Error", re.I)
RUNTIME_PIN = re.compile(r"^(nvidia-cuda-runtime(?:-cu\d+)?|cuda-toolkit)\s*(?:\[[^\]]*\])?\s*\(?\s*==\s*(\d+)\.(\d+)")


class PipFailed(Exception):
    pass


def pip(what, args, timeout):
    # --no-input: a password prompt would wait for a terminal that is not there.
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise PipFailed(f"{what} did not finish in {timeout} s") from None


def failure(what, r):
    lines = (r.stdout + r.stderr).strip().splitlines()
    return PipFailed(f"{what} failed (exit {r.returncode}):\n" + "\n".join(lines[-15:]))


def selection(request):
    """Which wheels count: binary ones for that CPython and its ABI, on the platform's tags."""
    args = ["--only-binary=:all:", "--implementation", "cp", "--python-version", request["python_version"]]
    if request.get("abi"):
        args += ["--abi", request["abi"]]
    for tag in request["platforms"]:
        args += ["--platform", tag]
    return args


def listing(source, request):
    what = "pip index versions torch"
    r = pip(what, ["index", "versions", "torch", *selection(request), *source["args"]], request["timeout"])
    found = re.search(r"^Available versions: (.*)$", r.stdout, re.M)
    if r.returncode == 0 and found:
        return {"tag": source["tag"], "versions": [v.strip() for v in found.group(1).split(",") if v.strip()]}
    output = r.stdout + r.stderr
    if "No matching distribution found" in output and not UNREACHABLE.search(output):
        return {"tag": source["tag"], "versions": []}
    raise failure(what, r)


def from_label(version):
    label = version.partition("+")[2].lower()
    if not label:
        return None
    cuda = re.fullmatch(r"cu(\d+)(\d)", label)  # cu130: 13.0, cu92: 9.2
    return f"{int(cuda.group(1))}.{cuda.group(2)}" if cuda else re.split(r"[.\d]", label)[0] or label


def from_metadata(metadata):
    for requirement in metadata.get("requires_dist") or []:
        name = re.match(r"[A-Za-z0-9._-]+", requirement)
        normal = re.sub(r"[-_.]+", "-", name.group(0)).lower() + requirement[name.end():] if name else requirement
        pin = RUNTIME_PIN.match(normal)
        if pin:
            return f"{pin.group(2)}.{pin.group(3)}"
        if normal.startswith("pytorch-triton-rocm"):
            return "rocm"
    return "cpu"


def build_of(source, version, request):
    labelled = from_label(version)
    if labelled:
        return labelled
    with tempfile.TemporaryDirectory(prefix="fabuild-torch-") as tmp:
        report = os.path.join(tmp, "report.json")
        what = f"pip install --dry-run torch=={version}"
        args = ["install", "--dry-run", "--ignore-installed", "--no-deps", "--quiet", "--report", report,
                *selection(request), "--target", os.path.join(tmp, "target"), *source["args"], f"torch=={version}"]
        # Where an index serves no separate metadata (PEP 658), pip downloads the whole wheel
        # (0.5-1 GB) to read it, unless fast-deps reads just its METADATA with range requests;
        # a pip that no longer has the feature says so, and is asked without it.
        r = pip(what, ["--use-feature=fast-deps", *args], request["timeout"])
        if r.returncode != 0 and re.search(r"--use-feature: invalid choice: 'fast-deps'", r.stderr):
            r = pip(what, args, request["timeout"])
        if r.returncode != 0:
            raise failure(what, r)
        with open(report, encoding="utf-8") as f:
            installs = json.load(f).get("install") or []
    if not installs:
        raise PipFailed(f"{what} resolved nothing")
    metadata = installs[0].get("metadata") or {}
    return from_label(metadata.get("version", "")) or from_metadata(metadata)


def main():
    mode, request = sys.argv[1], json.loads(sys.argv[2])
    sources = request["sources"]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, request.get("jobs", 4))) as pool:
        if mode == "list":
            asked = [(s, None, pool.submit(listing, s, request)) for s in sources]
        else:
            asked = [(s, v, pool.submit(build_of, s, v, request)) for s in sources for v in s["versions"]]
        try:
            answers = [(s, v, f.result()) for s, v, f in asked]
        except PipFailed:
            for _, _, f in asked:  # the first failure is the answer: the queries not yet started are not run
                f.cancel()
            raise
    if mode == "list":
        result = [answer for _, _, answer in answers]
    else:
        result = [{"tag": s["tag"], "builds": {v: b for t, v, b in answers if t is s}} for s in sources]
    print(json.dumps({"sources": result}))


if __name__ == "__main__":
    try:
        main()
    except PipFailed as e:
        print(f"fabuild: {e}", file=sys.stderr)
        sys.exit(1)
