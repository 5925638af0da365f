#!/usr/bin/env python3
"""The nightly workflow (.github/workflows/nightly.yml) without GitHub: it parses, its jobs are
wired as docs/ci.md says, every shell step is valid bash, every fabuild command and flag in it
exists (checked against that command's --help), every script it calls is there, and its plan
and build steps, run here on the example matrix, select exactly the cells of each job.

Usage: workflow_test.py FABUILD SOURCE_DIR
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
WORKFLOW = os.path.join(SRC, ".github/workflows/nightly.yml")
SETUP_ACTION = os.path.join(SRC, ".github/actions/setup-fabuild/action.yml")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def expressions_out(script):
    """A run: script with ${{ ... }} replaced, as the runner would before bash sees it."""
    return re.sub(r"\$\{\{[^}]*\}\}", "EXPR", script)


with open(WORKFLOW) as f:
    doc = yaml.safe_load(f)
triggers = doc.get("on", doc.get(True))  # YAML 1.1 reads the key `on` as true
jobs = doc["jobs"]

# Triggers and inputs.
check(bool(triggers.get("schedule")) and "cron" in triggers["schedule"][0], "a schedule with a cron line")
inputs = triggers["workflow_dispatch"]["inputs"]
for name in ("matrix", "fa", "torch", "cuda", "python", "platform", "only", "release", "publish"):
    check(name in inputs, f"workflow_dispatch input {name}")

# plan -> compile (the shares) -> build (matrices from the plan) -> verify (torch checks of
# stable-ABI wheels) and windows -> merge -> pages.
check(set(jobs) == {"plan", "compile", "build", "verify", "windows", "merge", "pages"},
      f"jobs are plan, compile, build, verify, windows, merge, pages: {sorted(jobs)}")
build, compile_ = jobs["build"], jobs["compile"]
check(set(build["needs"]) == {"plan", "compile"}, "build needs plan and compile")
check(compile_["needs"] == "plan" and compile_["if"] == "needs.plan.outputs.compile_jobs != '0'",
      "compile runs when the plan has compile shares")
check(build["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}", "build's matrix is the plan's output")
check(compile_["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.compile_matrix) }}",
      "compile's matrix is the plan's compile_matrix")
# build runs whatever became of compile (succeeded, failed in part, a share stopped at its
# timeout, skipped), never in a cancelled run.
check("needs.compile.result" not in build["if"], "build runs whatever compile's result")
check("!cancelled()" in build["if"], "build does not run in a cancelled run")
verify = jobs["verify"]
check(set(verify["needs"]) == {"plan", "build"}, "verify needs plan and build (the wheels it checks)")
check("!cancelled()" in verify["if"] and "needs.plan.outputs.verify_jobs != '0'" in verify["if"],
      "verify runs when the plan has torch checks, even when some builds failed")
check(verify["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.verify_matrix) }}",
      "verify's matrix is the plan's verify_matrix")
verify_runs = " ".join(st.get("run", "") for st in verify["steps"])
check("--verify-torch" not in verify_runs and "${args[@]}" in verify_runs,
      "verify runs the entry's args (its --only and --verify-torch)")
check("scripts/ci/fetch-published.sh" in verify_runs and
      any(st.get("uses", "").startswith("actions/download-artifact@") and st.get("if") == "matrix.needs_artifact != ''"
          for st in verify["steps"]),
      "verify takes the wheel from its build job's artifact, or the published one")
check("toolkit" not in verify_runs and "install-deps" not in verify_runs, "verify installs no toolkit")
check(any(st.get("with", {}).get("pattern") == "proof-*" for st in jobs["merge"]["steps"]),
      "merge takes the verify jobs' parts")
for name, job in (("build", build), ("compile", compile_), ("verify", verify)):
    check(job["strategy"].get("fail-fast") is False, f"{name}: one failed job does not cancel the others")
    check(job["runs-on"] == "${{ matrix.runner }}", f"{name} runs on each entry's runner")
    check(job["timeout-minutes"] == "${{ matrix.timeout }}", f"{name}'s timeout is each entry's")
# The remote cache's secrets reach the jobs that plan, compile and build, and no other.
for name, job in jobs.items():
    has = job.get("env", {}).get("FABUILD_CACHE_REMOTE") == "${{ secrets.FABUILD_CACHE_REMOTE }}"
    check(has == (name in ("plan", "compile", "build")), f"{name}: FABUILD_CACHE_REMOTE {'set' if has else 'unset'}")
check("FABUILD_CACHE_REMOTE" not in doc.get("env", {}), "the remote cache's secret is not workflow-wide")
check(any(st.get("with", {}).get("name") == "${{ matrix.artifact }}" for st in compile_["steps"]),
      "compile uploads its logs under the entry's artifact name")
check(set(jobs["merge"]["needs"]) == {"plan", "build", "verify", "windows"}, "merge needs plan, build, verify and windows")
# windows: the win_amd64 cells on a Windows runner (docs/windows.md), its wheelhouse merged with the rest.
win = jobs["windows"]
win_uses = [st.get("uses", "") for st in win["steps"]]
win_runs = " ".join(st.get("run", "") for st in win["steps"])
check(win["needs"] == "plan" and win["if"] == "needs.plan.outputs.windows != '0'", "windows runs when the plan has its cells")
check(win["runs-on"] == "windows-latest" and win["defaults"]["run"]["shell"] == "bash", "windows: a stock runner, bash steps")
check(any(u.startswith("Jimver/cuda-toolkit@") for u in win_uses), "windows installs CUDA with Jimver/cuda-toolkit")
check(any(u.startswith("actions/setup-python@") for u in win_uses), "windows installs Python with actions/setup-python")
check("cmake --preset windows-msvc" in win_runs and "VCPKG_INSTALLATION_ROOT" in win_runs, "windows builds fabuild with the MSVC preset and vcpkg")
check("$WINDOWS_MATRIX" in win_runs and "scripts/install-deps.sh" not in win_runs, "windows builds matrix/windows.yaml, no apt")
check(any(st.get("with", {}).get("name", "").startswith("wheelhouse-") for st in win["steps"]), "windows uploads a wheelhouse-* artifact")
# The object cache on Windows (fabuild-cc.exe in front of nvcc) kept between runs: restored before
# the cells build, saved after them even when one failed, at the path FABUILD_CACHE_DIR puts it.
win_build = next(st for st in win["steps"] if st.get("name") == "Build the cells")
cache_dir = win_build["env"]["FABUILD_CACHE_DIR"]
restore = [k for k, st in enumerate(win["steps"]) if st.get("uses", "").startswith("actions/cache/restore@")]
save = [k for k, st in enumerate(win["steps"]) if st.get("uses", "").startswith("actions/cache/save@")]
build_at = win["steps"].index(win_build)
check(len(restore) == 1 and len(save) == 1 and restore[0] < build_at < save[0]
      and win["steps"][save[0]].get("if") == "always()"
      and all(win["steps"][k]["with"]["path"] == cache_dir + "/objects" for k in restore + save)
      and win["steps"][restore[0]]["with"]["restore-keys"] in win["steps"][save[0]]["with"]["key"],
      "windows keeps its object cache between runs (actions/cache around the build, FABUILD_CACHE_DIR/objects)")
check("!cancelled()" in jobs["merge"]["if"], "merge runs when some build jobs failed")
check(jobs["pages"]["needs"] == "merge", "pages needs merge")
check(jobs["merge"]["permissions"] == {"contents": "write", "id-token": "write", "attestations": "write"},
      "only merge may write to the repository (releases) and attest")
check(jobs["plan"]["permissions"] == {"contents": "read", "pages": "read"},
      "plan reads the Pages address (the published manifest), and writes nothing")
check(doc["permissions"] == {"contents": "read"}, "the default token is read-only")

# The setup the jobs share: the local action .github/actions/setup-fabuild.
with open(SETUP_ACTION) as f:
    setup = yaml.safe_load(f)
setup_steps = setup["runs"]["steps"]
check(setup["runs"]["using"] == "composite", "setup-fabuild is a composite action")
steps = [(job, step) for job, j in jobs.items() for step in j["steps"]] + [("setup-fabuild", st) for st in setup_steps]
setup_runs = " ".join(st.get("run", "") for st in setup_steps)
check("scripts/install-deps.sh" in setup_runs and "--tests" not in setup_runs,
      "setup-fabuild installs the build dependencies only")
check("cmake --build build" in setup_runs, "setup-fabuild builds fabuild")
disk = next((st for st in setup_steps if "df -h" in st.get("run", "") and "rm -rf" in st.get("run", "")), None)
uv = next((st for st in setup_steps if st.get("uses", "").startswith("astral-sh/setup-uv@")), None)
check(disk is not None and setup_steps.index(disk) == 0, "setup-fabuild frees disk space first (a hosted runner has ~14 GB)")
check(uv is not None, "setup-fabuild installs uv")
for st in (disk, uv):
    check(st is not None and st.get("if") == "inputs.builds == 'true'", "disk space and uv: for jobs that build cells")
for name in ("plan", "compile", "build", "verify", "merge"):
    uses = [st for st in jobs[name]["steps"] if st.get("uses") == "./.github/actions/setup-fabuild"]
    check(len(uses) == 1, f"{name} sets up fabuild with the local action")
    builds = uses[0].get("with", {}).get("builds", "true") if uses else None
    # verify builds no wheel, but makes a torch environment: uv and the disk space too.
    check(builds == ("true" if name in ("compile", "build", "verify") else "false"), f"{name}: builds {builds}")
    # A compile or build job notes its start first (fabuild records its setup from it), then checks out.
    first = 1 if name in ("compile", "build") else 0
    check(jobs[name]["steps"][first].get("uses", "").startswith("actions/checkout@"), f"{name} checks out first")
    if first:
        check('FABUILD_JOB_STARTED=$(date +%s)' in jobs[name]["steps"][0].get("run", "") and
              "GITHUB_ENV" in jobs[name]["steps"][0].get("run", ""), f"{name} notes its start as its first step")
    # The plan job's fabuild, taken by the jobs on its runner image; built where there is none.
    prebuilt = uses[0].get("with", {}).get("prebuilt", "") if uses else ""
    check((prebuilt == "") == (name == "plan"), f"{name}: prebuilt {prebuilt!r}")
plan_upload = [st for st in jobs["plan"]["steps"] if st.get("uses", "").startswith("actions/upload-artifact@")]
check(len(plan_upload) == 1 and plan_upload[0]["with"]["name"] == "fabuild-ubuntu-latest" and
      jobs["plan"]["runs-on"] == "ubuntu-latest", "plan shares its fabuild as fabuild-ubuntu-latest")
take = next((st for st in setup_steps if st.get("uses", "").startswith("actions/download-artifact@")), None)
check(take is not None and take.get("continue-on-error") is True and take.get("if") == "inputs.prebuilt != ''",
      "setup-fabuild takes the prebuilt fabuild when named, and a missing one is no failure")
check("tar -xf" in setup_runs and "build/fabuild --version" in setup_runs,
      "setup-fabuild unpacks and runs the prebuilt fabuild before it builds its own")
for name in ("compile", "build", "verify"):
    runs = " ".join(st.get("run", "") for st in jobs[name]["steps"])
    check("scripts/ci/install-pythons.sh" in runs, f"{name} installs its host cells' Pythons")
check("uv python install" in open(os.path.join(SRC, "scripts/ci/install-pythons.sh")).read(),
      "install-pythons.sh installs them with uv")
for job, step in steps:
    if step.get("uses", "").startswith("./"):
        check(os.path.isfile(os.path.join(SRC, step["uses"], "action.yml")), f"{job}: {step['uses']} exists")
    elif "uses" in step:
        # A major version, or a release where the action publishes no major tag (Jimver/cuda-toolkit).
        check(re.search(r"@v\d+(\.\d+\.\d+)?$", step["uses"]) is not None, f"{job}: {step['uses']} is pinned to a version")

# Every entry key a job reads exists in what --ci-matrix github prints.
entry = json.loads(subprocess.run([FABUILD, os.path.join(SRC, "matrix/example.yaml"), "--ci-matrix", "github"],
                                  check=True, capture_output=True, text=True).stdout)["include"][0]
used = set(re.findall(r"matrix\.([a-z_]+)", yaml.safe_dump(build)))
check(used <= set(entry), f"build reads matrix keys that entries lack: {sorted(used - set(entry))}")
used = set(re.findall(r"matrix\.([a-z_]+)", yaml.safe_dump(verify)))
check(used <= set(entry), f"verify reads matrix keys that entries lack: {sorted(used - set(entry))}")
used = set(re.findall(r"matrix\.([a-z_]+)", yaml.safe_dump(compile_)))
check(used <= {"name", "runner", "timeout", "args", "artifact"}, f"compile reads keys a share's entry lacks: {sorted(used)}")

# Shell steps: bash syntax, scripts present, fabuild commands and flags in their --help.
helps = {}


def help_of(sub):
    if sub not in helps:
        args = [FABUILD] + ([sub] if sub else []) + ["--help"]
        r = subprocess.run(args, capture_output=True, text=True)
        check(r.returncode == 0, f"{' '.join(args)} exits 0")
        helps[sub] = r.stdout
    return helps[sub]


def check_fabuild_commands(script, where):
    """Every `build/fabuild ...` in a shell script: the command exists and takes each flag."""
    found = 0
    for line in script.splitlines():
        for m in re.finditer(r"(?:build/fabuild|/fabuild\.exe)\s+([^|;)>]*)", line):
            words = shlex.split(m.group(1).replace("${filters[@]}", ""))
            sub = words[0] if words and words[0] in ("merge", "index") else ""
            text = help_of(sub)
            found += 1
            for w in words:
                if w.startswith("-"):
                    flag = w.split("=")[0]
                    check(re.search(r"(^|[\s,])" + re.escape(flag) + r"\b", text) is not None,
                          f"{where}: fabuild {sub} {flag} is in fabuild {sub} --help")
    return found


commands = 0
for job, step in steps:
    if "run" not in step:
        continue
    script = expressions_out(step["run"])
    r = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
    check(r.returncode == 0, f"{job}/{step.get('name')}: bash -n: {r.stderr.strip()}")
    for path in re.findall(r"(?:^|[\s.(])((?:scripts)/[\w./-]+)", script):
        full = os.path.join(SRC, path)
        check(os.path.isfile(full), f"{job}: {path} exists")
        sourced = re.search(r"(^|\s)\.\s+" + re.escape(path), script) is not None
        check(sourced or os.access(full, os.X_OK), f"{job}: {path} is executable")
    commands += check_fabuild_commands(script, job)
check(commands >= 6, f"the workflow runs fabuild ({commands} commands found)")
print(f"workflow: {commands} fabuild commands checked against --help")

# The GitLab and Buildkite pipelines in docs/ci.md: YAML that parses, fabuild commands that exist.
doc_commands = 0
blocks = re.findall(r"```yaml\n(.*?)```", open(os.path.join(SRC, "docs/ci.md")).read(), re.S)
for block in blocks:
    pipeline = yaml.safe_load(block)
    check(isinstance(pipeline, dict), "a docs/ci.md YAML block is a mapping")
    text = yaml.safe_dump(pipeline)
    for command in re.findall(r"build/fabuild[^\n']*", text):
        doc_commands += check_fabuild_commands(command, "docs/ci.md")
check(doc_commands >= 4, f"docs/ci.md's pipelines run fabuild ({doc_commands} commands found)")
print(f"docs/ci.md: {len(blocks)} YAML blocks, {doc_commands} fabuild commands checked against --help")


def run_step(job, name, env, fabuild):
    """Runs a step's script in the source tree as the runner would, with `fabuild` for build/fabuild."""
    step = next(s for s in jobs[job]["steps"] if s.get("name") == name)
    script = step["run"].replace("build/fabuild", shlex.quote(fabuild))
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("FILTER_", "CI_NODE", "BUILDKITE"))}
    full_env.update(env)
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=SRC, env=full_env,
                          capture_output=True, text=True)


def plan_and_build_select_every_cell_once(matrix, filters, expect_jobs, shards):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "github_output")
        env = dict(filters, MATRIX=matrix, GITHUB_OUTPUT=out)
        r = run_step("plan", "Plan the jobs", env, FABUILD)
        check(r.returncode == 0, f"the plan step runs: {r.stderr}")
        if r.returncode != 0:
            return
        outputs = dict(line.split("=", 1) for line in open(out).read().splitlines())
        check(outputs.get("windows", "").isdigit(), f"the plan counts the windows job's cells: {outputs.get('windows')}")
        planned = json.loads(outputs["matrix"])
        check(outputs["jobs"] == str(expect_jobs) and len(planned["include"]) == expect_jobs,
              f"{expect_jobs} jobs planned: {outputs['jobs']}")
        check(all(bool(e["shard"]) == shards for e in planned["include"]), f"shard entries: {shards}")
        # The build step with a fabuild that lists what it would build.
        shim = os.path.join(tmp, "fabuild")
        with open(shim, "w") as f:
            f.write(f"#!/bin/sh\nexec {shlex.quote(FABUILD)} \"$@\" --list --format json\n")
        os.chmod(shim, 0o755)
        built = []
        for e in planned["include"]:
            r = run_step("build", "Build the cells", dict(env, ONLY=e["only"], SHARD=e["shard"], ARGS=e["args"]), shim)
            check(r.returncode == 0, f"the build step runs for {e['name']}: {r.stderr}")
            ids = [c["id"] for c in json.loads(r.stdout)]
            check(len(ids) == e["cells"], f"{e['name']} builds {e['cells']} cells: {ids}")
            built += ids
        listed = subprocess.run([FABUILD, matrix, "--list", "--format", "json"]
                                + [a for k, v in filters.items() for a in ("--" + k[len("FILTER_"):].lower(), v)],
                                check=True, capture_output=True, text=True).stdout
        expected = sorted(c["id"] for c in json.loads(listed))
        check(sorted(built) == expected, f"the jobs build every selected cell once: {sorted(built)} vs {expected}")


def plan_splits_the_stages():
    """The plan step with a fabuild whose --ci-matrix gives two shares of a row and its finishing job."""
    entries = [{"name": f"r share {k}/2", "stage": "compile", "args": f"--only a,b --compile-share {k}/2",
                "artifact": f"logs-r-share-{k}-of-2", "runner": "ubuntu-latest", "timeout": 300, "shares": 2}
               for k in (1, 2)]
    entries.append({"name": "r", "stage": "build", "only": "a,b", "shard": "", "args": "--only a,b",
                    "artifact": "wheelhouse-r", "runner": "ubuntu-latest", "timeout": 120, "shares": 2})
    # A row built whole: it needs nothing of the shares, so it runs in the first stage beside them.
    entries.append({"name": "w", "stage": "build", "only": "c", "shard": "", "args": "--only c",
                    "artifact": "wheelhouse-w", "runner": "ubuntu-latest", "timeout": 200, "shares": 0})
    # A torch check of a stable-ABI wheel: after the builds, in a matrix of its own.
    entries.append({"name": "c torch 2.13", "stage": "verify", "only": "c", "shard": "",
                    "args": "--only c --verify-torch 2.13", "artifact": "proof-c-torch2.13",
                    "needs_artifact": "wheelhouse-w", "torch": "2.13", "runner": "ubuntu-latest", "timeout": 30,
                    "shares": 0})
    with tempfile.TemporaryDirectory() as tmp:
        shim = os.path.join(tmp, "fabuild")
        with open(shim, "w") as f:
            f.write("#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = --ci-matrix ] && { cat %s; exit 0; }; done\nexec %s \"$@\"\n"
                    % (shlex.quote(os.path.join(tmp, "plan.json")), shlex.quote(FABUILD)))
        os.chmod(shim, 0o755)
        with open(os.path.join(tmp, "plan.json"), "w") as f:
            json.dump({"include": entries}, f)
        out = os.path.join(tmp, "github_output")
        r = run_step("plan", "Plan the jobs", {"MATRIX": os.path.join(SRC, "matrix/example.yaml"), "GITHUB_OUTPUT": out}, shim)
        check(r.returncode == 0, f"the plan step splits a two-stage plan: {r.stderr}")
        if r.returncode != 0:
            return
        outputs = dict(line.split("=", 1) for line in open(out).read().splitlines())
        check(outputs["compile_jobs"] == "3" and outputs["jobs"] == "1" and outputs["verify_jobs"] == "1",
              f"2 shares and a whole row, then 1 finishing job, then 1 torch check: {outputs}")
        check(json.loads(outputs["compile_matrix"])["include"] == entries[:2] + entries[3:4],
              "compile_matrix holds the shares and the row built whole")
        check(json.loads(outputs["matrix"])["include"] == entries[2:3], "matrix holds the finishing job")
        check(json.loads(outputs["verify_matrix"])["include"] == entries[4:], "verify_matrix holds the torch check")
        # Without shares, one stage of builds: every build entry in the build matrix.
        with open(os.path.join(tmp, "plan.json"), "w") as f:
            json.dump({"include": entries[3:]}, f)
        os.remove(out)
        r = run_step("plan", "Plan the jobs", {"MATRIX": os.path.join(SRC, "matrix/example.yaml"), "GITHUB_OUTPUT": out}, shim)
        outputs = dict(line.split("=", 1) for line in open(out).read().splitlines()) if r.returncode == 0 else {}
        check(outputs.get("compile_jobs") == "0" and json.loads(outputs.get("matrix", "{}")).get("include") == entries[3:4]
              and outputs.get("verify_jobs") == "1",
              f"a plan without shares is one stage of builds, then the checks: {outputs or r.stderr}")


plan_splits_the_stages()

# One job per row (its Python tags together), filtered as a workflow_dispatch would.
plan_and_build_select_every_cell_once(os.path.join(SRC, "matrix/example.yaml"), {"FILTER_PYTHON": "cp311,cp312"}, 1, False)
# Two rows (torch 2.11 and 2.13): a job each, or, with fewer ci.max_entries than rows, shards
# of whole rows with the filters repeated in each job.
with tempfile.TemporaryDirectory() as tmp:
    text = open(os.path.join(SRC, "matrix/example.yaml")).read()
    text = text.replace("source: {path: ../examples/flash_example}", f"source: {{path: {SRC}/examples/flash_example}}")
    text = text.replace('torch: ["2.11"]', 'torch: ["2.11", "2.13"]')
    rows = os.path.join(tmp, "rows.yaml")
    with open(rows, "w") as f:
        f.write(text)
    plan_and_build_select_every_cell_once(rows, {}, 2, False)
    for entries, filters, jobs_expected in ((1, {}, 1), (1, {"FILTER_PYTHON": "cp31*", "FILTER_ONLY": "*-cp31[23]-*"}, 1)):
        grouped = os.path.join(tmp, f"grouped{entries}.yaml")
        with open(grouped, "w") as f:
            f.write(text + f"ci: {{max_entries: {entries}}}\n")
        plan_and_build_select_every_cell_once(grouped, filters, jobs_expected, True)


# The merge job attests every published wheel and its build record (docs/security.md).
merge_steps = jobs["merge"]["steps"]
attest = next((st for st in merge_steps if str(st.get("uses", "")).startswith("actions/attest-build-provenance@")), None)
check(attest is not None and "*.whl" in attest["with"]["subject-path"] and ".build.json" in attest["with"]["subject-path"],
      "the merge job attests the wheels and their build records")
check(jobs["merge"]["permissions"].get("id-token") == "write" and jobs["merge"]["permissions"].get("attestations") == "write",
      "the merge job may sign attestations")
names = [st.get("name", st.get("uses", "")) for st in merge_steps]
publish = "Upload the wheels, their build records and SHA256SUMS to the release"
check(attest is not None and names.index(attest["name"]) < names.index(publish),
      "the wheels are attested before they are published")
# What it uploads beside the wheels: what the attestation covers, and the sums that check them
# (scripts/ci/publish-release.sh; tests/ci/publish_release_test.sh runs it against a stand-in for gh).
publish_step = merge_steps[names.index(publish)]
check("scripts/ci/publish-release.sh" in publish_step["run"], "the release step runs publish-release.sh")
publisher = open(os.path.join(SRC, "scripts/ci/publish-release.sh")).read()
check(".build.json" in publisher and "SHA256SUMS" in publisher,
      "publish-release.sh uploads each wheel's build record and a SHA256SUMS beside the wheels")
for job in ("compile", "build"):
    env = jobs[job].get("env", {})
    check("secrets.FABUILD_CACHE_SIGNING_KEY" in env.get("FABUILD_CACHE_SIGNING_KEY", ""), f"{job} signs its row indexes")
    check("vars.FABUILD_CACHE_VERIFY_KEYS" in env.get("FABUILD_CACHE_VERIFY_KEYS", ""), f"{job} verifies row indexes")

# The pull-request workflow: no secret, and a plan that says the remote is read-only there.
PR = os.path.join(SRC, ".github/workflows/pull-request.yml")
pr_text = open(PR).read()
pr = yaml.safe_load(pr_text)
pr_on = pr.get("on", pr.get(True))
check(set(pr_on) == {"pull_request"}, f"pull-request.yml runs on pull requests only: {pr_on}")
pr_expressions = "".join(re.findall(r"\$\{\{[^}]*\}\}", pr_text))
check("secrets." not in pr_expressions, "pull-request.yml uses no secret")
check(pr.get("permissions") == {"contents": "read"}, f"pull-request.yml reads the repository only: {pr.get('permissions')}")
pr_steps = pr["jobs"]["example"]["steps"]


def run_pr_step(name, env):
    step = next(st for st in pr_steps if st.get("name") == name)
    script = step["run"].replace("build/fabuild", shlex.quote(FABUILD))
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FABUILD_CACHE", "GITLAB", "BUILDKITE"))}
    full_env.update(env)
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=SRC, env=full_env,
                          capture_output=True, text=True)


remote = {"FABUILD_CACHE_REMOTE": "http://127.0.0.1:9/cache", "GITHUB_ACTIONS": "true"}
r = run_pr_step("Plan the example", dict(remote, GITHUB_EVENT_NAME="pull_request"))
check(r.returncode == 0 and "remote cache read-only: untrusted, a pull_request run on GitHub Actions" in r.stdout,
      f"a pull request's plan says the remote is read-only: {r.stdout[-600:]}{r.stderr[-300:]}")
check(" and sent after" not in r.stdout, "a pull request's plan does not send")
# The same step on a schedule would write: what the check above tells apart.
r = run_pr_step("Plan the example", dict(remote, GITHUB_EVENT_NAME="schedule"))
check(r.returncode == 0 and "remote cache writes: trusted, a schedule run on GitHub Actions" in r.stdout,
      f"a scheduled run's plan says it writes: {r.stdout[-400:]}")
print("pull-request.yml: no secret; its plan is read-only as a pull request's, writes as a schedule's")

# Pages is deployed whole: the merge job takes the published wheelhouse first, so that wheels no
# job touched tonight stay published, and runs on a night with only torch checks too.
merge_names = [st.get("name", "") for st in jobs["merge"]["steps"]]
take = next((st for st in jobs["merge"]["steps"] if "--all wheelhouse" in str(st.get("run", ""))), None)
check(take is not None and "scripts/ci/fetch-published.sh" in take["run"] and
      merge_names.index(take["name"]) < merge_names.index("Merge them"),
      "the merge job takes the published wheelhouse before merging the parts")
check("verify_jobs" in jobs["merge"]["if"] and "compile_jobs" in jobs["merge"]["if"],
      f"the merge job runs on a night with only torch checks: {jobs['merge']['if']}")

if failures:
    print(f"workflow: {len(failures)} failed")
    sys.exit(1)
print("workflow: ok")
