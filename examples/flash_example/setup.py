# flash_example: built exactly the way FlashAttention 2.x's setup.py builds flash_attn
# (torch.utils.cpp_extension.CUDAExtension + BuildExtension with ninja), reading the same
# environment variables, so that fabuild can drive it like flash-attn. It never uses the network.

import ast
import functools
import glob
import os
import platform
import re
import subprocess
import sys
import warnings
from pathlib import Path

from packaging.version import Version, parse
from setuptools import find_packages, setup

try:  # setuptools >= 70.1 ships bdist_wheel; FlashAttention imports wheel's (now a shim).
    from setuptools.command.bdist_wheel import bdist_wheel as _bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel as _bdist_wheel

import torch
from torch.utils.cpp_extension import (
    BuildExtension,
    CUDAExtension,
    CUDA_HOME,
    IS_HIP_EXTENSION,
)

with open("README.md", "r", encoding="utf-8") as fh:
    long_description = fh.read()

# ninja build does not work unless include_dirs are abs path
this_dir = os.path.dirname(os.path.abspath(__file__))

BUILD_TARGET = os.environ.get("BUILD_TARGET", "auto")
if BUILD_TARGET == "auto":
    IS_ROCM = bool(IS_HIP_EXTENSION)
elif BUILD_TARGET == "cuda":
    IS_ROCM = False
elif BUILD_TARGET == "rocm":
    IS_ROCM = True
else:
    raise ValueError(f"BUILD_TARGET must be auto, cuda or rocm, not {BUILD_TARGET!r}")

PACKAGE_NAME = "flash_example"

# Same switches as FlashAttention.
FORCE_BUILD = os.getenv("FLASH_ATTENTION_FORCE_BUILD", "FALSE") == "TRUE"
SKIP_CUDA_BUILD = os.getenv("FLASH_ATTENTION_SKIP_CUDA_BUILD", "FALSE") == "TRUE"
FORCE_CXX11_ABI = os.getenv("FLASH_ATTENTION_FORCE_CXX11_ABI", "FALSE") == "TRUE"

# Opt-in build against PyTorch's stable libtorch ABI, shaped like FlashAttention 2's stable port:
# csrc/flash_example/api_stable.cpp in api.cpp's place, an op registered with the dispatcher
# instead of a pybind module, and a cp310-abi3 wheel that loads under every torch from 2.10 on
# and every CPython from 3.10 on. Off by default, and ignored on an older torch, so that the
# default build stays the pybind cpXY-cpXY build that fabuild's tests expect.
TORCH_MAJOR, TORCH_MINOR = (int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
# The stable Tensor API that api_stable.cpp uses needs torch 2.10 (as FlashAttention 2's stable port).
use_stable_torch_api = (TORCH_MAJOR, TORCH_MINOR) >= (2, 10)
STABLE_ABI = os.getenv("FLASH_EXAMPLE_STABLE_ABI", "FALSE") == "TRUE" and use_stable_torch_api
if os.getenv("FLASH_EXAMPLE_STABLE_ABI", "FALSE") == "TRUE" and not use_stable_torch_api:
    warnings.warn(f"FLASH_EXAMPLE_STABLE_ABI=TRUE needs torch >= 2.10, not {torch.__version__}: "
                  "building the default pybind module instead.")


@functools.lru_cache(maxsize=None)
def cuda_archs():
    return os.getenv("FLASH_ATTN_CUDA_ARCHS", "80;90;100;120").split(";")


def get_platform():
    """Returns the platform name as used in wheel filenames."""
    if sys.platform.startswith("linux"):
        return f"linux_{platform.uname().machine}"
    elif sys.platform == "darwin":
        mac_version = ".".join(platform.mac_ver()[0].split(".")[:2])
        return f"macosx_{mac_version}_x86_64"
    elif sys.platform == "win32":
        return "win_amd64"
    raise ValueError(f"Unsupported platform: {sys.platform}")


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output([os.path.join(cuda_dir, "bin", "nvcc"), "-V"],
                                         universal_newlines=True)
    output = raw_output.split()
    release_idx = output.index("release") + 1
    return raw_output, parse(output[release_idx].split(",")[0])


def append_nvcc_threads(nvcc_extra_args):
    nvcc_threads = os.getenv("NVCC_THREADS") or "4"
    return nvcc_extra_args + ["--threads", nvcc_threads]


# (arch, minimum nvcc version) as in FlashAttention's setup.py, plus sm_110 (CUDA 13.0).
# Archs not listed here are silently ignored, as FlashAttention does.
ARCH_MIN_NVCC = [("80", None), ("90", "11.8"), ("100", "12.8"), ("110", "13.0"), ("120", "12.8")]


def cc_flags(bare_metal_version):
    flags = []
    for arch, min_version in ARCH_MIN_NVCC:
        if arch not in cuda_archs():
            continue
        if min_version is not None and (bare_metal_version is None
                                        or bare_metal_version < Version(min_version)):
            continue
        flags += ["-gencode", f"arch=compute_{arch},code=sm_{arch}"]
    return flags


cmdclass = {}
ext_modules = []

if not SKIP_CUDA_BUILD and IS_ROCM:
    raise RuntimeError("flash_example has no ROCm kernels; use BUILD_TARGET=cuda "
                       "(or FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE for an sdist)")

if not SKIP_CUDA_BUILD:
    print("\n\ntorch.__version__  = {}\n\n".format(torch.__version__))
    bare_metal_version = None
    if CUDA_HOME is None:
        warnings.warn("flash_example was requested, but nvcc was not found. "
                      "Set CUDA_HOME to a CUDA toolkit.")
    else:
        _, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)
        if bare_metal_version < Version("11.7"):
            raise RuntimeError("flash_example needs CUDA 11.7 or newer (nvcc -V).")
    cc_flag = cc_flags(bare_metal_version)
    print(f"flash_example: nvcc {bare_metal_version}, FLASH_ATTN_CUDA_ARCHS={';'.join(cuda_archs())}, "
          f"gencode flags: {' '.join(cc_flag) or '(none)'}")

    # HACK (as in FlashAttention): torch.utils.cpp_extension sets -D_GLIBCXX_USE_CXX11_ABI from
    # torch._C._GLIBCXX_USE_CXX11_ABI.
    if FORCE_CXX11_ABI:
        torch._C._GLIBCXX_USE_CXX11_ABI = True

    # FlashAttention 2.8's setup.py says -std=c++17. torch's extension builder moved its own
    # default to C++20 in 2.13, and torch 2.15's headers refuse anything older (#error C++20 or
    # later): take the standard torch builds with, from 2.13 on.
    cxx_std = "c++20" if parse(torch.__version__.split("+")[0]) >= Version("2.13") else "c++17"
    nvcc_flags = [
        "-O3",
        f"-std={cxx_std}",
        "-U__CUDA_NO_HALF_OPERATORS__",
        "-U__CUDA_NO_HALF_CONVERSIONS__",
        "-U__CUDA_NO_HALF2_OPERATORS__",
        "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
        "--expt-relaxed-constexpr",
        "--expt-extended-lambda",
        "--use_fast_math",
    ]
    compiler_std_flags = ["-O3", f"-std={cxx_std}"]
    if sys.platform == "win32" and os.getenv("DISTUTILS_USE_SDK") == "1":
        nvcc_flags.extend(["-Xcompiler", "/Zc:__cplusplus"])
        compiler_std_flags = ["-O2", f"/std:{cxx_std}", "/Zc:__cplusplus"]

    # Relative source paths, like FlashAttention (so object paths do not embed the source dir).
    kernel_sources = sorted(
        os.path.relpath(p, this_dir)
        for p in glob.glob(os.path.join(this_dir, "csrc", "flash_example", "src", "flash_fwd_hdim*.cu"))
    )
    api_source = "csrc/flash_example/api_stable.cpp" if STABLE_ABI else "csrc/flash_example/api.cpp"
    # Flags for both compilers, since the kernel TUs' launch check (src/cuda_check.h) follows them
    # too. Empty in the default build, whose command lines must stay as they were.
    feature_flags = []
    if STABLE_ABI:
        # The shim declares the CUDA functions (the current stream, the launch check's message)
        # only under USE_CUDA.
        feature_flags.append("-DUSE_CUDA")
        # Compile against the torch 2.10 stable surface whatever torch builds it, so that the
        # .so calls only what every torch from 2.10 on exports.
        feature_flags.append("-DTORCH_TARGET_VERSION=0x020a000000000000")
    ext_modules.append(
        CUDAExtension(
            name="flash_example_cuda",
            sources=[api_source] + kernel_sources,
            extra_compile_args={
                "cxx": compiler_std_flags + feature_flags,
                "nvcc": append_nvcc_threads(nvcc_flags + cc_flag + feature_flags),
            },
            # Py_LIMITED_API, and no libtorch_python: the stable build uses no CPython API beyond
            # the limited one (it has no Python code at all).
            py_limited_api=STABLE_ABI,
            include_dirs=[
                Path(this_dir) / "csrc" / "flash_example",
                Path(this_dir) / "csrc" / "flash_example" / "src",
            ],
        )
    )


def get_package_version():
    with open(Path(this_dir) / PACKAGE_NAME / "__init__.py", "r") as f:
        version_match = re.search(r"^__version__\s*=\s*(.*)$", f.read(), re.MULTILINE)
    public_version = ast.literal_eval(version_match.group(1))
    local_version = os.environ.get("FLASH_ATTN_LOCAL_VERSION")
    if local_version:
        return f"{public_version}+{local_version}"
    return str(public_version)


# FlashAttention's setup.py downloads a prebuilt wheel from its GitHub release (BASE_WHEEL_URL)
# unless FLASH_ATTENTION_FORCE_BUILD=TRUE. flash_example has no release of its own: it downloads
# only when FLASH_EXAMPLE_BASE_WHEEL_URL names one (fabuild's tests serve a wheelhouse on
# 127.0.0.1), and otherwise never touches the network.
BASE_WHEEL_URL = os.environ.get("FLASH_EXAMPLE_BASE_WHEEL_URL", "")


def get_wheel_url():
    """The asset FlashAttention's get_wheel_url computes: the label from torch's CUDA major,
    torch's major.minor, torch's C++ ABI and the running Python."""
    torch_version_raw = parse(torch.__version__)
    python_version = f"cp{sys.version_info.major}{sys.version_info.minor}"
    torch_version = f"{torch_version_raw.major}.{torch_version_raw.minor}"
    cxx11_abi = str(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)).upper()
    cuda_version = parse(torch.version.cuda).major if torch.version.cuda else "none"
    wheel_filename = (f"{PACKAGE_NAME}-{get_package_version()}+cu{cuda_version}torch{torch_version}"
                      f"cxx11abi{cxx11_abi}-{python_version}-{python_version}-{get_platform()}.whl")
    return BASE_WHEEL_URL.format(tag_name=f"v{get_package_version()}", wheel_name=wheel_filename), wheel_filename


class CachedWheelsCommand(_bdist_wheel):
    """FlashAttention's bdist_wheel: download the release's wheel for this torch/CUDA/ABI/Python,
    rename it to the plain version's name and hand it to pip; build from source if there is none."""

    def run(self):
        if FORCE_BUILD or not BASE_WHEEL_URL:
            return super().run()
        import urllib.error
        import urllib.request

        wheel_url, wheel_filename = get_wheel_url()
        print("Guessing wheel URL: ", wheel_url)
        try:
            urllib.request.urlretrieve(wheel_url, wheel_filename)
            if not os.path.exists(self.dist_dir):
                os.makedirs(self.dist_dir)
            impl_tag, abi_tag, plat_tag = self.get_tag()
            archive_basename = f"{self.wheel_dist_name}-{impl_tag}-{abi_tag}-{plat_tag}"
            wheel_path = os.path.join(self.dist_dir, archive_basename + ".whl")
            print("Raw wheel path", wheel_path)
            os.rename(wheel_filename, wheel_path)
        except (urllib.error.HTTPError, urllib.error.URLError):
            print("Precompiled wheel not found. Building from source...")
            super().run()


class NinjaBuildExtension(BuildExtension):
    """FlashAttention's MAX_JOBS guess: if MAX_JOBS is unset, min(cores / 2, free RAM / 9 GB)."""

    def __init__(self, *args, **kwargs) -> None:
        if not os.environ.get("MAX_JOBS"):
            import psutil

            max_num_jobs_cores = max(1, os.cpu_count() // 2)
            free_memory_gb = psutil.virtual_memory().available / (1024 ** 3)
            max_num_jobs_memory = int(free_memory_gb / 9)
            max_jobs = max(1, min(max_num_jobs_cores, max_num_jobs_memory))
            os.environ["MAX_JOBS"] = str(max_jobs)
        super().__init__(*args, **kwargs)


setup(
    name=PACKAGE_NAME,
    version=get_package_version(),
    packages=find_packages(exclude=("build", "csrc", "include", "tests", "dist", "docs",
                                    "flash_example.egg-info")),
    description="FlashAttention-shaped example CUDA extension for testing fabuild",
    long_description=long_description,
    long_description_content_type="text/markdown",
    classifiers=["Programming Language :: Python :: 3", "Operating System :: Unix"],
    ext_modules=ext_modules,
    cmdclass={"bdist_wheel": CachedWheelsCommand, "build_ext": NinjaBuildExtension}
    if ext_modules
    else {"bdist_wheel": CachedWheelsCommand},
    # Only the stable build is CPython-agnostic (no pybind): tag it cp310-abi3, as FlashAttention
    # 2's stable port does; the default build keeps its cpXY-cpXY tag.
    options={"bdist_wheel": {"py_limited_api": "cp310"}} if STABLE_ABI else {},
    python_requires=">=3.8",
    install_requires=["torch"],
    setup_requires=["packaging", "psutil", "ninja"],
)
