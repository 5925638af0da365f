"""fabuild's reading of what a package's build compiles: its setup.py run as the build runs it
(same directory, environment and interpreter), up to its call of setup(), which is caught: the
sources of every extension module it would build. The cell's units, progress, ETA and compile
shares come from this list, not from the .cu files a source tree happens to hold (FlashAttention
2.8.3's sdist holds 129 outside cutlass; its build compiles 73).

Usage: python build_sources.py OUT_JSON (given to `python -c`, in setup.py's directory).
Writes {"sources": [absolute paths...]} or {"error": "why"} to OUT_JSON and exits 0 either way:
a setup.py that cannot be read this way is the build's to report, and fabuild then counts the
tree's files. setup.py's own output is kept out of the cell's log (the build prints it again).
"""

import json
import os
import runpy
import sys

out = sys.argv[1]


class _Caught(BaseException):
    """Raised by the stand-in setup(): nothing after it in setup.py runs."""


captured = {}


def _setup(*args, **kwargs):
    captured.update(kwargs)
    raise _Caught()


result = {}
try:
    import setuptools

    setuptools.setup = _setup
    try:  # Python < 3.12, or a setup.py that still imports distutils
        import distutils.core

        distutils.core.setup = _setup
    except ImportError:
        pass
    sys.argv = ["setup.py", "bdist_wheel"]
    sys.path.insert(0, os.getcwd())
    # Its output and its subprocesses' (git, nvcc -V) go nowhere: the build prints them again.
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        runpy.run_path("setup.py", run_name="__main__")
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
    result["error"] = "setup.py did not call setup()"
except _Caught:
    sources = []
    for ext in captured.get("ext_modules") or []:
        for source in getattr(ext, "sources", []) or []:
            path = os.path.normpath(os.path.abspath(str(source)))
            if path not in sources:
                sources.append(path)
    result = {"sources": sources}
except BaseException as e:  # noqa: BLE001  whatever setup.py raises (SystemExit too) is the build's to report
    result["error"] = f"{type(e).__name__}: {e}"[:400]

with open(out, "w", encoding="utf-8") as f:
    json.dump(result, f)
print("fabuild: build sources:", len(result.get("sources", [])), result.get("error", ""))
