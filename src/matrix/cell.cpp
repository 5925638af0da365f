#include "matrix/cell.h"

#include <fmt/format.h>

namespace fabuild {

std::string axis_key(Axis axis) {
  switch (axis) {
    case Axis::kVersion: return "version";
    case Axis::kTorch: return "torch";
    case Axis::kCuda: return "cuda";
    case Axis::kPython: return "python";
    case Axis::kPlatform: return "platform";
    case Axis::kAbi: return "cxx11_abi";
    case Axis::kProfile: return "profile";
    case Axis::kPackage: return "package";
  }
  return "?";
}

CudaSet parse_gpu_set(const std::string& canonical) {
  if (canonical.starts_with("rocm")) return CudaSet{*parse_rocm_version(canonical), std::nullopt, Backend::kRocm};
  return CudaSet{*parse_cuda_version(canonical), std::nullopt, Backend::kCuda};
}

std::string spell_gpu_set(const CudaSet& set) {
  if (set.backend == Backend::kRocm) return "rocm" + set.toolkit.str();
  return set.toolkit.str() + (set.torch_cuda ? "/" + cu_tag(*set.torch_cuda) : std::string());
}

Version Cell::torch_series() const { return *Version::parse(torch.series()); }

Version Cell::wheel_cuda() const { return torch_cuda.value_or(cuda.torch_cuda.value_or(cuda.toolkit)); }

std::string Cell::value(Axis axis) const {
  switch (axis) {
    case Axis::kVersion: return version.str();
    case Axis::kTorch: return torch.str();
    case Axis::kCuda: return rocm() ? "rocm" + cuda.toolkit.str() : cuda.toolkit.str();
    case Axis::kPython: return python.str();
    case Axis::kPlatform: return to_string(platform);
    case Axis::kAbi: return to_string(abi);
    case Axis::kProfile: return profile;
    case Axis::kPackage: return package->name;
  }
  return {};
}

std::string Cell::gpu_tag() const { return rocm() ? rocm_tag(wheel_cuda()) : cu_tag(wheel_cuda()); }

std::string Cell::torch_index_tag() const { return rocm() ? rocm_index_tag(wheel_cuda()) : cu_tag(wheel_cuda()); }

std::string Cell::python_tag() const { return abi3() ? package->abi3 : python.str(); }

std::string Cell::abi_tag() const { return abi3() ? "abi3" : python.str(); }

std::string Cell::id() const {
  std::string id = fmt::format("{}{}-torch{}-{}-{}-{}", package->id_prefix, version.str(), torch.str(), gpu_tag(),
                               abi3() ? "abi3" : python.str(), to_string(platform));
  if (abi != default_abi) id += "-cxx11abi" + to_string(abi);
  if (profile != kDefaultProfile) id += "-" + profile;
  return id;
}

}  // namespace fabuild
