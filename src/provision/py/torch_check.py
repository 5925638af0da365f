# The torch check of a cell (fabuild, src/provision/python_env.cpp), run as `python -c` before
# the cell's build: imports torch and compares it with the cell. argv[1] the torch series,
# argv[2] the CUDA (or rocmX.Y) build, argv[3] the ABI: TRUE or FALSE (torch's must be the
# cell's), FORCE:<variable> (the package forces the C++11 ABI on through <variable>, so any torch
# serves) or ANY. It reports torch's version as the fact torch_version, for the manifest;
# argv[4], when given and not "-", is a file to write that version to as well; argv[5], when
# given, a stamp file. Importing torch takes 1-2 s, paid by every cell before its build: a stamp
# records a passed check with what identifies the torch it checked (the interpreter, torch's
# directory and its files' size, mtime and inode), and while those are the same the check is not
# repeated. A torch installed over it changes them. Exit 3 when torch is not the cell's.
import sys, os, json, importlib.util
want_series, want_gpu, want_abi = sys.argv[1:4]
seen = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] != "-" else None
stamp = sys.argv[5] if len(sys.argv) > 5 else None
def identity():
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        return None
    d = os.path.dirname(spec.origin)
    names = ["__init__.py", "version.py", os.path.join("lib", "libtorch_cpu.so"), os.path.join("lib", "libtorch_python.so")]
    if os.name == "nt":  # Windows' torch keeps them as DLLs
        names[2:] = [os.path.join("lib", "torch_cpu.dll"), os.path.join("lib", "torch_python.dll")]
    names += sorted(n for n in os.listdir(d) if n.startswith("_C.") or n.startswith("_C-"))
    files = []
    for n in names:
        try:
            st = os.stat(os.path.join(d, n))
            files.append([n, st.st_size, st.st_mtime_ns, st.st_ino])
        except OSError:
            files.append([n, None])
    return [sys.executable, sys.version, d, files, want_series, want_gpu, want_abi]
key = identity() if stamp else None
if key is not None:
    try:
        with open(stamp) as f:
            kept = json.load(f)
        if kept.get("key") == key:
            if seen:
                with open(seen, "w") as f:
                    f.write(kept["version"])
            print(kept["line"] + " (checked before; torch unchanged since)")
            print("fabuild-fact: torch_version=" + kept["version"])
            sys.exit(0)
    except (OSError, ValueError, KeyError, AttributeError):
        pass
import torch
if seen:
    with open(seen, "w") as f:
        f.write(torch.__version__)
rocm = want_gpu.startswith("rocm")
kind, have = ("ROCm", torch.version.hip) if rocm else ("CUDA", torch.version.cuda)
want = want_gpu[4:] if rocm else want_gpu
version = torch.__version__.split("+")[0]
series = ".".join(version.split(".")[:2])
gpu = ".".join((have or "none").split(".")[:2])
abi = str(bool(torch._C._GLIBCXX_USE_CXX11_ABI)).upper()
line = f"fabuild: torch {torch.__version__} ({kind} {have}, cxx11abi {abi}) from {torch.__file__}"
print(line)
print("fabuild-fact: torch_version=" + torch.__version__)
problems = []
if series != want_series:
    problems.append(f"torch {version} is not the {want_series} series")
if gpu != ".".join(want.split(".")[:2]):
    index = ("rocm" + want) if rocm else ("cu" + want.replace(".", ""))
    problems.append(f"torch {torch.__version__} is a {kind} {gpu} build, the cell needs {kind} {want} ({index}): point torch_index at an index that has that build")
forced = want_abi.startswith("FORCE:")
if forced:
    # The package's setup.py forces the C++11 ABI on (FLASH_ATTENTION_FORCE_CXX11_ABI=TRUE):
    # either torch serves; what the build compiles with is the forced one.
    force_env = want_abi[len("FORCE:"):]
    if abi != "TRUE":
        print(f"fabuild: torch's ABI is cxx11abi {abi}; this build forces cxx11abi TRUE ({force_env}=TRUE)")
elif want_abi != "ANY" and abi != want_abi:
    hint = " (a package can force the C++11 ABI on, never off: build cxx11abiFALSE against a cxx11abi FALSE torch)" if abi == "TRUE" else ""
    problems.append(f"torch's ABI is cxx11abi {abi}, the cell builds cxx11abi{want_abi}{hint}")
for p in problems:
    print("fabuild: " + p, file=sys.stderr)
if key is not None and not problems and identity() == key:
    try:
        os.makedirs(os.path.dirname(stamp), exist_ok=True)
        tmp = f"{stamp}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump({"key": key, "version": torch.__version__, "line": line}, f)
        os.replace(tmp, stamp)
    except OSError:
        pass
sys.exit(3 if problems else 0)
