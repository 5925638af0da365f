#!/usr/bin/env python3
"""`fabuild --ci-matrix gitlab` and `--ci-matrix buildkite` without GitLab or Buildkite: on a
row split into compile shares and on a matrix sharded over jobs, the pipeline parses as YAML,
every job it waits for is in it, every shell line is valid bash and calls only scripts the
repository has, and each job's fabuild command, run here, selects exactly its cells: the build
jobs together every cell once.

Usage: pipelines_test.py FABUILD SOURCE_DIR
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

import yaml

FABUILD, SRC = sys.argv[1], sys.argv[2]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def fabuild(args, env=None):
    r = subprocess.run([FABUILD] + args, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"fabuild {' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r.stdout


def listed(matrix, args):
    """The ids the job's own arguments select, as `--list` gives them."""
    return [c["id"] for c in json.loads(fabuild([matrix] + args + ["--list", "--format", "json", "--allow-empty"]))]


def job_lines(provider, doc):
    """(name, needs, lines) of each job; the merge job's name is "merge"."""
    if provider == "gitlab":
        for name, job in doc.items():
            if name == "stages":
                continue
            yield name, [n["job"] for n in job.get("needs", [])], job["script"]
    else:
        for step in doc["steps"]:
            yield step["key"], step.get("depends_on", []), step["command"].split("\n")


def check_pipeline(provider, matrix, args, env, want_shares):
    out = fabuild([matrix] + args + ["--ci-matrix", provider], env)
    doc = yaml.safe_load(out)  # JSON is YAML: what GitLab's trigger and buildkite-agent read
    check(doc == json.loads(out), f"{provider}: the same document as YAML and as JSON")
    names = {name for name, _, _ in job_lines(provider, doc)}
    cells = []
    shares = 0
    for name, needs, lines in job_lines(provider, doc):
        for n in needs:
            check(n in names, f"{provider}: {name} needs {n}, which is not a job")
        if provider == "gitlab":
            check(doc[name]["stage"] in doc["stages"], f"{provider}: {name}'s stage is one of the stages")
            if name != "merge":  # a CI cache of the objects only where no remote is shared
                remote = bool((env or {}).get("FABUILD_CACHE_REMOTE"))
                check(("cache" in doc[name]) != remote, f"{provider}: {name} keeps a CI cache: {'cache' in doc[name]}")
        for line in lines:
            r = subprocess.run(["bash", "-n", "-c", line], capture_output=True, text=True)
            check(r.returncode == 0, f"{provider}: {name}: not valid bash: {line}: {r.stderr}")
            for script in re.findall(r"\bscripts/[\w./-]+", line):
                check(os.path.isfile(os.path.join(SRC, script)), f"{provider}: {name} calls {script}, which is missing")
        run = [l for l in lines if l.startswith("build/fabuild ")]
        check(len(run) == 1, f"{provider}: {name} runs fabuild once: {run}")
        words = shlex.split(run[0])[1:]
        if words[0] == "merge":
            check(words == ["merge", "parts/*", "-o", "wheelhouse"], f"{provider}: the merge takes every part: {words}")
            continue
        check(words[0] == os.path.relpath(matrix) and words[-2] == "-o", f"{provider}: {name}: {words}")
        job_args = words[1:-2]
        if "--compile-share" in job_args:
            shares += 1
            continue
        ids = listed(matrix, [a for a in job_args if a != "--allow-empty"])
        check(len(ids) > 0, f"{provider}: {name} selects no cell")
        cells += ids
    check(shares == want_shares, f"{provider}: {shares} compile shares, want {want_shares}")
    return cells


with tempfile.TemporaryDirectory(prefix="fabuild-pipelines.") as work:
    os.chdir(work)
    # A row in three compile shares (a remote makes shares possible; the plan does not reach it).
    with open(os.path.join(SRC, "matrix/example.yaml")) as f:
        example = f.read().replace("../examples/", os.path.join(SRC, "examples") + "/")
    with open("shares.yaml", "w") as f:
        f.write(example + "ci: {compile_shares: 3}\n")
    env = dict(os.environ, FABUILD_CACHE_REMOTE="http://127.0.0.1:9/cache", FABUILD_CACHE_DIR=os.path.join(work, "c"))
    want = listed("shares.yaml", ["--python", "cp311,cp312"])
    for provider in ("gitlab", "buildkite"):
        got = check_pipeline(provider, "shares.yaml", ["--python", "cp311,cp312"], env, 3)
        check(sorted(got) == sorted(want), f"{provider}: the finishing job builds the row: {got}")
    # Command cells over more jobs than ci.max_entries: shards, each selecting its own.
    with open("shards.yaml", "w") as f:
        f.write('versions: ["2.8.0", "2.8.1", "2.8.2"]\ntorch: ["2.8"]\ncuda: ["12.8"]\n'
                'python: [cp311, cp312]\narchs: "80"\ncommand: ["true"]\nci: {max_entries: 2}\n')
    want = listed("shards.yaml", [])
    for provider in ("gitlab", "buildkite"):
        got = check_pipeline(provider, "shards.yaml", ["--split-rows"], None, 0)
        check(sorted(got) == sorted(want) and len(got) == 6, f"{provider}: the shards build every cell once: {got}")

if failures:
    sys.exit(f"{len(failures)} failure(s)")
print("pipelines: ok")
