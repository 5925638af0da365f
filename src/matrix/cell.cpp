#include "matrix/cell.h"

#include <algorithm>
#include <cctype>

#include "matrix/axes.h"

namespace fabuild {

GpuSet parse_gpu_set(const std::string& canonical) {
  if (canonical.starts_with("rocm")) return GpuSet{*parse_rocm_version(canonical), std::nullopt, Backend::kRocm};
  return GpuSet{*parse_cuda_version(canonical), std::nullopt, Backend::kCuda};
}

std::string spell_gpu_set(const GpuSet& set) {
  if (set.backend == Backend::kRocm) return "rocm" + set.toolkit.str();
  return set.toolkit.str() + (set.torch_cuda ? "/" + cu_tag(*set.torch_cuda) : std::string());
}

const std::shared_ptr<const CellSetup>& default_setup() {
  static const auto setup = std::make_shared<const CellSetup>();
  return setup;
}

Version Cell::torch_series() const { return torch.series_version(); }

const std::string& Cell::abi3_floor() const {
  if (!package->abi3.empty() || !stable_floor || !package->stable) return package->abi3;
  return package->stable->limited_api;
}

std::string Cell::torch_spelling() const {
  if (stable_floor) return stable_floor->str() + "andhigher";
  return torch_series().str();
}

namespace {

// A library is for the toolkit that compiles it: there is no torch build to match.
const Version& wheel_cuda_of(const Cell& cell) {
  if (cell.library()) return cell.cuda.toolkit;
  return cell.torch_cuda ? *cell.torch_cuda : cell.cuda.torch_cuda ? *cell.cuda.torch_cuda : cell.cuda.toolkit;
}

}  // namespace

const std::string& Cell::build_type() const {
  static const std::string kRelease = "Release";
  return setup->build.type ? *setup->build.type : kRelease;
}

std::string Cell::build_type_suffix() const {
  if (!library() || build_type() == "Release") return {};
  std::string suffix = "-" + build_type();
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return suffix;
}

const Version& Cell::wheel_cuda() const { return wheel_cuda_of(*this); }

CellSetup& Cell::own_setup() {
  auto mine = std::make_shared<CellSetup>(*setup);
  CellSetup& out = *mine;
  setup = std::move(mine);
  return out;
}

std::string Cell::value(Axis axis) const {
  const AxisRow& row = axis_row(axis);
  if (library() && row.wheel_only) return {};
  return row.value(*this);
}

std::string Cell::gpu_tag() const { return rocm() ? rocm_tag(wheel_cuda()) : cu_tag(wheel_cuda()); }

std::string Cell::torch_index_tag() const { return rocm() ? rocm_index_tag(wheel_cuda()) : cu_tag(wheel_cuda()); }

std::string Cell::python_tag() const {
  if (library()) return {};
  return abi3() ? abi3_floor() : python.release().str();  // cp313 of a cp313-cp313t wheel
}

std::string Cell::abi_tag() const {
  if (library()) return {};
  return abi3() ? "abi3" : python.str();
}

std::string Cell::id() const {
  // Spelled into a buffer, then copied to a string of its own length: a plan keeps 100 000.
  thread_local std::string buffer;
  buffer.clear();
  for (const AxisRow& row : axis_rows()) {
    if (!library() || !row.wheel_only) row.id_part(*this, buffer);
  }
  buffer += build_type_suffix();
  return buffer;
}

}  // namespace fabuild
