#include "matrix/compat.h"

namespace fabuild {

namespace {

Version v(const char* text) { return *Version::parse(text); }

std::vector<Version> vs(std::initializer_list<const char*> texts) {
  std::vector<Version> out;
  for (const char* t : texts) out.push_back(v(t));
  return out;
}

CompatTables::PythonRange py(int min_minor, int max_minor) {
  return {PythonTag{3, min_minor}, PythonTag{3, max_minor}};
}

}  // namespace

CompatTables CompatTables::builtin() {
  CompatTables t;
  // The CUDA builds each torch release publishes on its package index (cuXYZ): PyTorch's
  // release compatibility matrix (RELEASE.md, stable and experimental CUDA), 2.4-2.14. For 2.15
  // only its PyPI build (cu132) is listed until its release matrix is published.
  t.torch_cuda = {
      {v("2.4"), vs({"11.8", "12.1", "12.4"})},  {v("2.5"), vs({"11.8", "12.1", "12.4"})},
      {v("2.6"), vs({"11.8", "12.4", "12.6"})},  {v("2.7"), vs({"11.8", "12.6", "12.8"})},
      {v("2.8"), vs({"12.6", "12.8", "12.9"})},  {v("2.9"), vs({"12.6", "12.8", "13.0"})},
      {v("2.10"), vs({"12.6", "12.8", "13.0"})}, {v("2.11"), vs({"12.6", "12.8", "13.0"})},
      {v("2.12"), vs({"12.6", "13.0", "13.2"})}, {v("2.13"), vs({"12.6", "13.0", "13.2"})},
      {v("2.14"), vs({"12.6", "13.0", "13.2"})}, {v("2.15"), vs({"13.2"})},
  };
  // The CUDA build of each series' wheels on PyPI, from their dependencies (nvidia-cuda-runtime-cu12
  // ==12.8.90, cuda-toolkit==13.2.2): scripts/refresh-compat.py, run 2026-11-23.
  t.torch_pypi_cuda = {
      {v("2.4"), v("12.1")},  {v("2.5"), v("12.4")},  {v("2.6"), v("12.4")},  {v("2.7"), v("12.6")},
      {v("2.8"), v("12.8")},  {v("2.9"), v("12.8")},  {v("2.10"), v("12.8")}, {v("2.11"), v("13.0")},
      {v("2.12"), v("13.0")}, {v("2.13"), v("13.0")}, {v("2.14"), v("13.0")}, {v("2.15"), v("13.2")},
  };
  // The ROCm builds each torch release publishes (its index rocmX.Y[.Z]), from PyTorch's
  // install pages; 2.10 and later are not in the table yet (their cells are kept unchecked).
  t.torch_rocm = {
      {v("2.5"), vs({"6.1", "6.2"})}, {v("2.6"), vs({"6.1", "6.2.4"})}, {v("2.7"), vs({"6.2.4", "6.3"})},
      {v("2.8"), vs({"6.3", "6.4"})}, {v("2.9"), vs({"6.4"})},
  };
  // The Pythons each series has wheels for on PyPI (scripts/refresh-compat.py).
  t.torch_python = {
      {v("2.4"), py(8, 12)},   {v("2.5"), py(9, 13)},   {v("2.6"), py(9, 13)},   {v("2.7"), py(9, 13)},
      {v("2.8"), py(9, 13)},   {v("2.9"), py(10, 14)},  {v("2.10"), py(10, 14)}, {v("2.11"), py(10, 14)},
      {v("2.12"), py(10, 14)}, {v("2.13"), py(10, 14)}, {v("2.14"), py(10, 14)}, {v("2.15"), py(11, 15)},
  };
  // The free-threaded Pythons each series has wheels for on PyPI (cp313t, cp314t: refresh-compat.py's
  // `pip install --dry-run --abi cp3XYt` per series, run 2026-11-26).
  t.torch_free_threaded = {
      {v("2.7"), py(13, 13)},  {v("2.8"), py(13, 13)},  {v("2.9"), py(13, 14)},
      {v("2.10"), py(13, 14)}, {v("2.11"), py(13, 14)}, {v("2.12"), py(13, 14)},
      {v("2.13"), py(14, 14)}, {v("2.14"), py(14, 14)}, {v("2.15"), py(14, 15)},
  };
  // FlashAttention's README: "PyTorch 2.2 and above" since 2.7.
  t.fa_min_torch = {{v("2.5"), v("1.12")}, {v("2.6"), v("1.12")}, {v("2.7"), v("2.2")}, {v("2.8"), v("2.2")}};
  // nvcc learned sm_90 in 11.8, sm_100/sm_120 in 12.8, and names Thor sm_110 since 13.0.
  t.arch_min_cuda = {{80, v("11.0")}, {90, v("11.8")}, {100, v("12.8")}, {110, v("13.0")}, {120, v("12.8")}};
  t.cxx11_abi_from = v("2.7");
  // torch 2.6 moved its CUDA 12.6 wheels to manylinux_2_28 with the C++11 ABI and kept cu118,
  // cu124 and CPU on the old ABI (pytorch/pytorch#141565, #142064: the binary build matrix's
  // devtoolset "cxx11-abi" for 12.6, CUDA aarch64 and CPU aarch64); from 2.7 every build is
  // C++11 ABI (#143423).
  t.torch_abi = {{v("2.6"), {{{v("12.6"), Abi::kTrue}}, {{Platform::kLinuxAarch64, Abi::kTrue}}}}};
  return t;
}

Abi CompatTables::torch_abi_of(const Version& series, const std::optional<Version>& cuda_build,
                               Platform platform) const {
  if (const auto it = torch_abi.find(series); it != torch_abi.end()) {
    if (const auto p = it->second.platform.find(platform); p != it->second.platform.end()) return p->second;
    const std::optional<Version> build = cuda_build ? cuda_build : pypi_cuda(series);
    if (build) {
      // "12.6" covers 12.6.3.
      for (const auto& [cuda, abi] : it->second.cuda) {
        if (cuda.major() == build->major() && cuda.minor() == build->minor()) return abi;
      }
    }
  }
  return series < cxx11_abi_from ? Abi::kFalse : Abi::kTrue;
}

const std::vector<Version>* CompatTables::cuda_builds(const Version& torch_series) const {
  const auto it = torch_cuda.find(torch_series);
  return it == torch_cuda.end() ? nullptr : &it->second;
}

const std::vector<Version>* CompatTables::rocm_builds(const Version& torch_series) const {
  const auto it = torch_rocm.find(torch_series);
  return it == torch_rocm.end() ? nullptr : &it->second;
}

std::optional<Version> CompatTables::pypi_cuda(const Version& torch_series) const {
  const auto it = torch_pypi_cuda.find(torch_series);
  if (it == torch_pypi_cuda.end()) return std::nullopt;
  return it->second;
}

const CompatTables::PythonRange* CompatTables::python_range(const Version& torch_series) const {
  const auto it = torch_python.find(torch_series);
  return it == torch_python.end() ? nullptr : &it->second;
}

std::optional<Version> CompatTables::min_torch(const Version& fa) const {
  const MinTorch* best = nullptr;
  for (const auto& entry : fa_min_torch) {
    if (fa.has_prefix(entry.fa_prefix) &&
        (best == nullptr || entry.fa_prefix.release().size() > best->fa_prefix.release().size())) {
      best = &entry;
    }
  }
  if (best == nullptr) return std::nullopt;
  return best->torch;
}

}  // namespace fabuild
