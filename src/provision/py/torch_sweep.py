"""fabuild's check of a built wheel under one torch release (docs/stable-abi.md): does its
compiled module load with this torch, which ops does it register and with which schemas, do the
wheel's Python packages import, and, where a GPU is there, does its attention match torch's.

Usage: python torch_sweep.py SMOKE_DIR MODULE SERIES (given to `python -c`). SMOKE_DIR is the
unpacked wheel, MODULE its compiled module ("flash_attn_2_cuda"), SERIES the torch series this
environment stands for ("2.13"). Always exits 0 unless this interpreter cannot run at all: the
result is one line,

    fabuild-fact: torch_proof_2.13={"series": "2.13", "torch": "2.13.0+cu130", "ok": true, ...}

so that a release the wheel fails under is a finding, not the end of the cell. The load itself
runs in a child process: a module that crashes its interpreter is a failed proof too.
"""

import json
import os
import subprocess
import sys

smoke, module, series = sys.argv[1], sys.argv[2], sys.argv[3]

# Run in the child: the load, the ops it registers, the packages' import, the GPU check.
CHILD = r'''
import importlib, importlib.util, json, os, sys
smoke, module = sys.argv[1], sys.argv[2]
sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
import torch
out = {"torch": torch.__version__, "cuda": torch.version.cuda or ""}
before = set(torch._C._dispatch_get_all_op_names())
sys.path.insert(0, smoke)
spec = importlib.util.find_spec(module)
if spec is None:
    raise SystemExit("fabuild: the wheel has no module " + module)
try:
    importlib.import_module(module)
    out["load"] = "import"
except ImportError as e:
    # A stable-ABI module registers ops and defines no PyInit_ function: torch loads it.
    if "module export function" not in str(e) and "PyInit" not in str(e):
        raise
    torch.ops.load_library(spec.origin)
    out["load"] = "torch.ops.load_library"
ops = []
for name in sorted(set(torch._C._dispatch_get_all_op_names()) - before):
    try:
        ops += [str(s) for s in torch._C._jit_get_schemas_for_operator(name)]
    except Exception:
        ops.append(name)
out["ops"] = ops
imported = []
for entry in sorted(os.listdir(smoke)):
    if os.path.isfile(os.path.join(smoke, entry, "__init__.py")):
        importlib.import_module(entry)
        imported.append(entry)
out["packages"] = imported
out["gpu"] = ""
if torch.cuda.is_available():
    import math
    checks = skipped = 0
    worst = 0.0
    attention = None
    for name, fn in (("flash_attn", "flash_attn_func"), ("flash_attn_interface", "flash_attn_func"),
                     ("flash_attn_3", "flash_attn_func"), ("flash_example", "flash_example_func")):
        try:
            attention = getattr(importlib.import_module(name), fn)
            break
        except (ImportError, AttributeError):
            continue
    if attention is None:
        out["gpu"] = "no attention entry point to check"
    else:
        torch.manual_seed(0)
        for dtype in (torch.float16, torch.bfloat16):
            for d in (64, 128):
                for causal in (False, True):
                    q, k, v = (torch.randn(2, 257, 4, d, device="cuda", dtype=dtype) for _ in range(3))
                    try:
                        got = attention(q, k, v, causal=causal)
                    except RuntimeError as e:  # a profile that leaves the case out refuses it
                        if "support" not in str(e):
                            raise
                        skipped += 1
                        continue
                    got = got[0] if isinstance(got, (tuple, list)) else got
                    ref = torch.nn.functional.scaled_dot_product_attention(
                        q.transpose(1, 2).float(), k.transpose(1, 2).float(), v.transpose(1, 2).float(),
                        is_causal=causal).transpose(1, 2)
                    worst = max(worst, (got.float() - ref).abs().max().item())
                    checks += 1
        if not worst < 2e-2:
            raise SystemExit(f"fabuild: GPU check: {checks} cases, largest difference {worst:.3g} from torch's attention")
        out["gpu"] = (f"{checks} attention cases within {worst:.2g} of torch's"
                      + (f", {skipped} refused by the build's profile" if skipped else "")
                      + f" ({torch.cuda.get_device_name()})")
print("fabuild-child:" + json.dumps(out))
'''

result = {"series": series, "torch": "", "cuda": "", "ok": False, "detail": "", "gpu": "", "ops": []}
try:
    child = subprocess.run([sys.executable, "-c", CHILD, smoke, module], capture_output=True, text=True,
                           timeout=900)
    found = [line for line in child.stdout.splitlines() if line.startswith("fabuild-child:")]
    if child.returncode == 0 and found:
        got = json.loads(found[-1][len("fabuild-child:"):])
        result.update(torch=got["torch"], cuda=got["cuda"], ok=True, ops=got["ops"], gpu=got["gpu"])
        what = f"loads ({got['load']})"
        if got["ops"]:
            what += f", {len(got['ops'])} ops registered"
        if got["packages"]:
            what += ", imports " + ", ".join(got["packages"])
        result["detail"] = what
    else:
        # The loader's own words: the last lines of what the child said (an undefined symbol,
        # a torch it was not built against), or the signal that ended it.
        said = (child.stderr.strip().splitlines() or child.stdout.strip().splitlines() or [""])[-1]
        if child.returncode < 0:
            said = f"killed by signal {-child.returncode}" + (f": {said}" if said else "")
        result["detail"] = said[:600] or f"exit {child.returncode}"
        version = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__, torch.version.cuda)"],
                                 capture_output=True, text=True, timeout=300)
        result["torch"], _, result["cuda"] = version.stdout.strip().partition(" ")
except subprocess.TimeoutExpired:
    result["detail"] = "the check did not end within 15 minutes"
print("fabuild-fact: torch_proof_" + series + "=" + json.dumps(result, separators=(",", ":")))
sys.stdout.flush()
os._exit(0)
