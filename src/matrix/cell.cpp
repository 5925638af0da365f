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
  }
  return "?";
}

Version Cell::torch_series() const { return *Version::parse(torch.series()); }

Version Cell::wheel_cuda() const { return torch_cuda.value_or(cuda.torch_cuda.value_or(cuda.toolkit)); }

std::string Cell::value(Axis axis) const {
  switch (axis) {
    case Axis::kVersion: return version.str();
    case Axis::kTorch: return torch.str();
    case Axis::kCuda: return cuda.toolkit.str();
    case Axis::kPython: return python.str();
    case Axis::kPlatform: return to_string(platform);
    case Axis::kAbi: return to_string(abi);
  }
  return {};
}

std::string Cell::id() const {
  std::string id = fmt::format("{}{}-torch{}-{}-{}-{}", package->id_prefix, version.str(), torch.str(),
                               cu_tag(wheel_cuda()), python.str(), to_string(platform));
  if (abi != default_abi) id += "-cxx11abi" + to_string(abi);
  return id;
}

}  // namespace fabuild
