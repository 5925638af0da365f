"""fabuild's import smoke test of a built wheel: its module imported, from the unpacked wheel,
with the real torch, as a user's `import` would. A module that cannot load (an undefined symbol,
a torch it was not built against) fails the cell before it is filed.

Usage: python import_check.py SMOKE_DIR MODULE (given to `python -c`). Prints
"fabuild: imported PATH" and exits 0, or Python's own error and exits 1.

fabuild starts it beside the compile (Step::starts_with in engine/runner.h) with FABUILD_GO set:
torch, the slow part (seconds), is imported while the wheel is still being built, and the wheel's
module once the file FABUILD_GO names exists, which fabuild creates after the wheel is verified
and unpacked. Without FABUILD_GO it goes straight on.
"""

import importlib
import os
import sys
import time

smoke, module = sys.argv[1], sys.argv[2]
# Only the unpacked wheel provides the module: not the working directory.
sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]

import torch  # noqa: E402,F401  what the module loads first; seconds

go = os.environ.get("FABUILD_GO")
if go:
    # The cell's staging directory goes when the cell ends: then there is nothing to wait for.
    while not os.path.exists(go):
        if not os.path.isdir(os.path.dirname(go)):
            sys.exit("fabuild: the cell ended before its wheel was ready")
        time.sleep(0.02)
sys.path.insert(0, smoke)
try:
    loaded = importlib.import_module(module)
    print("fabuild: imported", loaded.__file__)
except ImportError as e:
    # A module built against torch's stable ABI registers its ops with torch and has no
    # PyInit_ function (FlashAttention 2's stable port): it is loaded the way its package does.
    if "module export function" not in str(e) and "PyInit" not in str(e):
        raise
    import importlib.util

    origin = importlib.util.find_spec(module).origin
    torch.ops.load_library(origin)
    print("fabuild: loaded", origin, "(torch.ops.load_library: a module with no Python init function)")
