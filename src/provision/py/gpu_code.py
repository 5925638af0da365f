"""fabuild's reading of the GPU code in a built wheel's compiled modules: the SASS (cubins) and
PTX each carries, as CUDA's cuobjdump lists them, for the check against the cell's archs
(app/gpu_code_step.h). A module with the wrong GPU code loads and imports fine, and fails only
on a GPU that its code does not cover.

Usage: python gpu_code.py SMOKE_DIR [CUOBJDUMP] (given to `python -c`). cuobjdump is the one
named, else the one triton ships beside torch (triton/backends/nvidia/bin), else PATH's. Prints

    fabuild-fact: gpu_code={"tool": ..., "modules": {"flash_attn_2_cuda.abi3.so": {"sass": ["sm_90"], "ptx": ["sm_90"]}}}

or, when there is no cuobjdump, {"unchecked": "why"}; always exits 0.
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

smoke = sys.argv[1]
named = sys.argv[2] if len(sys.argv) > 2 else ""


def find_cuobjdump():
    if named and os.access(named, os.X_OK):
        return named
    spec = importlib.util.find_spec("triton")
    if spec is not None and spec.submodule_search_locations:
        for root in spec.submodule_search_locations:
            path = os.path.join(root, "backends", "nvidia", "bin", "cuobjdump")
            if os.access(path, os.X_OK):
                return path
    return shutil.which("cuobjdump") or ""


def listed(tool, what, module):
    """The archs of `what` (elf or ptx) the module holds: "sm_90", "sm_90a"."""
    r = subprocess.run([tool, "--list-" + what, module], capture_output=True, text=True, timeout=600)
    suffix = "cubin" if what == "elf" else "ptx"
    return sorted(set(re.findall(r"\.(sm_\d+[a-z]?)\." + suffix + r"\s*$", r.stdout, re.M)))


tool = find_cuobjdump()
if not tool:
    result = {"unchecked": "no cuobjdump: not in the toolkit, beside triton, or on PATH"}
else:
    modules = {}
    for root, _, files in os.walk(smoke):
        for name in sorted(files):
            if not (name.endswith((".so", ".pyd")) or ".so." in name):
                continue
            path = os.path.join(root, name)
            sass, ptx = listed(tool, "elf", path), listed(tool, "ptx", path)
            if sass or ptx:
                modules[os.path.relpath(path, smoke)] = {"sass": sass, "ptx": ptx}
    result = {"tool": tool, "modules": modules}
print("fabuild-fact: gpu_code=" + json.dumps(result, separators=(",", ":")))
