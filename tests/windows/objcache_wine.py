#!/usr/bin/env python3
"""fabuild-cc.exe, the object cache's nvcc wrapper on Windows, under Wine.

usage: objcache_wine.py FABUILD_CC_EXE NVCC_STANDIN_EXE

NVCC_STANDIN_EXE (tests/windows/nvcc_standin.cpp) is copied in as nvcc.exe (a CUDA toolkit's
bin) and as cl.exe (two MSVC toolsets). Two cells of one row, cp311 and cp312, each with its
own staging directory and virtualenv (torch's headers at ...\\Lib\\site-packages\\torch\\include,
identical content), compile their kernels as torch's build.ninja does on Windows: fabuild-cc.exe
(PYTORCH_NVCC) in front of nvcc.exe, cl.exe found on PATH, -Xcompiler /MD..., a depfile from
--generate-dependencies-with-compile. Checked:

  - the first tag's kernels miss and are stored; the second tag's all hit, their objects byte
    for byte the first's, their depfiles naming the second tag's own headers;
  - a header that changed, a changed flag, another MSVC toolset (cl.exe) and another CUDA
    toolkit (nvcc.exe) miss; a kernel that fails to compile stores nothing and fails again;
  - a response file (@file) reads as the command it holds; what is not a compile (--version)
    runs as it is.
Prints the tally of each phase and the time of each tag's compiles. Exit status 0 when every
check held.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

FABUILD_CC, STANDIN = (os.path.abspath(p) for p in sys.argv[1:3])
KERNELS = 8
failures = []


def win(path):
    return "Z:" + os.path.abspath(path).replace("/", "\\")


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else f"\n     {detail}"), flush=True)
    if not ok:
        failures.append(what)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class Box:
    def __init__(self, root):
        self.root = root
        self.cache = os.path.join(root, "cache")
        self.cuda = os.path.join(root, "CUDA", "v12.8")
        self.vs = {v: os.path.join(root, "VS", "MSVC", v, "bin", "Hostx64", "x64") for v in ("14.44", "14.38")}
        for v, d in self.vs.items():
            os.makedirs(d)
            shutil.copy(STANDIN, os.path.join(d, "cl.exe"))
            write(os.path.join(d, "cl.version"), "19.44.35207\n" if v == "14.44" else "19.38.33130\n")
        for cuda in (self.cuda, os.path.join(root, "CUDA", "v12.9")):
            os.makedirs(os.path.join(cuda, "bin"))
            shutil.copy(STANDIN, os.path.join(cuda, "bin", "nvcc.exe"))
        write(os.path.join(root, "CUDA", "v12.9", "bin", "nvcc.version"), "12.9\n")
        self.sdk = os.path.join(root, "Windows Kits", "10", "include", "ucrt")
        write(os.path.join(self.sdk, "stdio.h"), "#pragma once\nint printf(const char*, ...);\n")
        self.toolset = "14.44"

    def cell(self, tag):
        """A cell's staging directory and virtualenv, their files alike in every cell."""
        stage = os.path.join(self.root, "wh", ".staging", f"fa2.8.3-torch2.8-cu128-{tag}-win_amd64", "src")
        venv = os.path.join(self.root, "fc", "venvs", f"{tag}-torch2.8-cu128")
        torch_inc = os.path.join(venv, "Lib", "site-packages", "torch", "include")
        write(os.path.join(torch_inc, "torch", "extension.h"), "#pragma once\n#include <stdio.h>\n#define TORCH 1\n")
        write(os.path.join(torch_inc, "ATen", "Tensor.h"), "#pragma once\nstruct Tensor {};\n")
        for k in range(KERNELS):
            write(os.path.join(stage, "csrc", "src", f"flash_fwd_k{k}.cu"),
                  f'#include "flash.h"\n#include <torch/extension.h>\n#include <ATen/Tensor.h>\n'
                  f"__global__ void k{k}() {{}}\n")
        write(os.path.join(stage, "csrc", "src", "flash.h"), "#pragma once\nstruct Flash_fwd_params {};\n")
        return {"tag": tag, "stage": stage, "venv": venv, "torch_inc": torch_inc,
                "build": os.path.join(stage, "build", f"temp.win-amd64-cpython-{tag[2:]}", "Release")}

    def argv(self, cell, k, extra=()):
        """torch's cuda_compile rule on Windows for kernel k, after $nvcc_from_env."""
        py = cell["tag"][2:]
        obj = os.path.join(cell["build"], "csrc", "src", f"flash_fwd_k{k}.obj")
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        return [win(os.path.join(self.cuda, "bin", "nvcc.exe")),
                "--generate-dependencies-with-compile", "--dependency-output", win(obj + ".d"),
                "--use-local-env", "-Xcompiler", "/MD", "-Xcompiler", "/wd4819", "-Xcompiler", "/EHsc",
                "-I" + win(os.path.join(cell["stage"], "csrc")),
                "-I" + win(os.path.join(cell["stage"], "csrc", "src")),
                "-I" + win(cell["torch_inc"]),
                "-I" + win(os.path.join(cell["torch_inc"], "torch", "csrc", "api", "include")),
                "-I" + win(os.path.join(self.cuda, "include")),
                "-I" + win(os.path.join(self.root, "Python" + py, "include")),
                "-c", win(os.path.join(cell["stage"], "csrc", "src", f"flash_fwd_k{k}.cu")),
                "-o", win(obj),
                "-D__CUDA_NO_HALF_OPERATORS__", "-O3", "-std=c++17", "--use_fast_math",
                "-gencode", "arch=compute_80,code=sm_80", "--threads", "2", *extra], obj

    def run(self, argv, tally, cwd):
        # Wine's own variables and what runs it, never the caller's POSIX paths (XDG_CACHE_HOME).
        env = {k: v for k, v in os.environ.items()
               if k in ("PATH", "HOME", "USER", "LANG", "TMPDIR", "DISPLAY", "XDG_RUNTIME_DIR") or k.startswith("WINE")}
        env.update({"FABUILD_CC_DIR": win(self.cache), "FABUILD_CC_TALLY": win(tally),
                    "WINEPATH": win(self.vs[self.toolset]), "INCLUDE": win(self.sdk)})
        return subprocess.run(["wine", FABUILD_CC, *argv], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=120)


def outcomes(tally):
    if not os.path.exists(tally):
        return []
    with open(tally) as f:
        return [line.split("\t") for line in f.read().splitlines()]


def summary(lines):
    counts = {}
    for line in lines:
        counts[line[0]] = counts.get(line[0], 0) + 1
    return ", ".join(f"{n} {o}" for o, n in sorted(counts.items())) or "nothing"


def results_stored(box):
    found = 0
    for _, _, files in os.walk(os.path.join(box.cache, "results")):
        found += len(files)
    return found


def compile_tag(box, cell, tally, extra=(), kernels=range(KERNELS)):
    started = time.monotonic()
    codes = []
    for k in kernels:
        argv, _ = box.argv(cell, k, extra)
        r = box.run(argv, tally, cell["build"])
        codes.append((r.returncode, r.stderr[-500:]))
    return time.monotonic() - started, codes


def main():
    with tempfile.TemporaryDirectory(prefix="objcache-wine-") as root:
        box = Box(root)
        a, b = box.cell("cp311"), box.cell("cp312")
        for c in (a, b):
            os.makedirs(c["build"], exist_ok=True)

        tally_a = os.path.join(root, "tally-cp311")
        took_a, codes = compile_tag(box, a, tally_a)
        lines = outcomes(tally_a)
        print(f"     cp311: {summary(lines)} in {took_a:.1f}s", flush=True)
        check(f"the first tag's {KERNELS} kernels compile through fabuild-cc.exe and are stored",
              all(c == 0 for c, _ in codes) and [l[0] for l in lines] == ["miss"] * KERNELS,
              f"{codes[:2]}\n{lines[:2]}")
        check("each compile's line says how busy the machine was (GetSystemTimes), 0 to 100 %",
              all(len(l) >= 11 and 0 <= int(l[10]) <= 100 for l in lines), f"{lines[:2]}")

        tally_b = os.path.join(root, "tally-cp312")
        took_b, codes = compile_tag(box, b, tally_b)
        lines = outcomes(tally_b)
        print(f"     cp312: {summary(lines)} in {took_b:.1f}s", flush=True)
        check(f"the second tag's {KERNELS} kernel compiles all hit",
              all(c == 0 for c, _ in codes) and [l[0] for l in lines] == ["hit"] * KERNELS,
              f"{codes[:2]}\n{lines[:3]}")
        obj_a, obj_b = box.argv(a, 0)[1], box.argv(b, 0)[1]
        same = os.path.exists(obj_b) and open(obj_a, "rb").read() == open(obj_b, "rb").read()
        check("a hit's object is the first tag's byte for byte", same)
        dep_b = open(obj_b + ".d").read() if os.path.exists(obj_b + ".d") else ""
        check("a hit's depfile names the second tag's own headers",
              "cp312-torch2.8-cu128/Lib/site-packages/torch/include/ATen/Tensor.h" in dep_b and "cp311" not in dep_b,
              dep_b[:800])

        def one(cell, what, expect, extra=(), k=0):
            tally = os.path.join(root, "tally-" + what.replace(" ", "-"))
            _, codes = compile_tag(box, cell, tally, extra, [k])
            lines = outcomes(tally)
            got = [l[0] for l in lines]
            check(f"{what}: {expect}", got == [expect], f"{got} {[l[3] for l in lines]} {codes}")
            return lines, codes

        write(os.path.join(b["torch_inc"], "ATen", "Tensor.h"), "#pragma once\nstruct Tensor { int changed; };\n")
        lines, _ = one(b, "a header changed in the second tag's environment", "miss")
        check("the miss says which header changed", lines and "Tensor.h changed" in lines[0][3], str(lines))
        one(b, "the same compile again", "hit")
        one(a, "a changed flag (sm_90)", "miss", ("-gencode", "arch=compute_90,code=sm_90"))
        box.toolset = "14.38"
        one(a, "another MSVC toolset (cl.exe 19.38)", "miss", k=1)
        box.toolset = "14.44"
        one(a, "back on MSVC 19.44", "hit", k=1)
        box.cuda = os.path.join(root, "CUDA", "v12.9")
        one(a, "another CUDA toolkit (nvcc 12.9)", "miss", k=2)
        box.cuda = os.path.join(root, "CUDA", "v12.8")
        one(a, "back on CUDA 12.8", "hit", k=2)

        write(os.path.join(a["stage"], "csrc", "src", "flash_fwd_k3.cu"), '#include "flash.h"\n#error broken kernel\n')
        before = results_stored(box)
        lines, codes = one(a, "a kernel that fails to compile", "miss", k=3)
        check("its exit code and message are nvcc's, and nothing is stored",
              codes and codes[0][0] == 2 and "broken kernel" in codes[0][1] and results_stored(box) == before,
              f"{codes} results {before} -> {results_stored(box)}")
        one(a, "the failed kernel compiled again", "miss", k=3)

        argv, _ = box.argv(a, 4)
        rsp = os.path.join(a["build"], "k4.rsp")
        with open(rsp, "w") as f:
            f.write("\r\n".join('"' + x + '"' if " " in x else x for x in argv[1:]) + "\r\n")
        tally = os.path.join(root, "tally-rsp")
        r = box.run([argv[0], "@" + win(rsp)], tally, a["build"])
        got = [l[0] for l in outcomes(tally)]
        check("a response file reads as the command it holds (a hit)", r.returncode == 0 and got == ["hit"],
              f"{r.returncode} {outcomes(tally)} {r.stderr[-500:]}")
        r = box.run([argv[0], "--version"], os.path.join(root, "tally-version"), b["build"])
        check("--version runs nvcc as it is", r.returncode == 0 and "release 12.8" in r.stdout, r.stdout + r.stderr)

    print(f"objcache_wine: {len(failures)} failed" if failures else "objcache_wine: all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
