#include "matrix/cell.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>

namespace fabuild {

std::string axis_key(Axis axis) {
  switch (axis) {
    case Axis::kVersion:
      return "version";
    case Axis::kTorch:
      return "torch";
    case Axis::kGpu:
      return "cuda";
    case Axis::kPython:
      return "python";
    case Axis::kPlatform:
      return "platform";
    case Axis::kAbi:
      return "cxx11_abi";
    case Axis::kProfile:
      return "profile";
    case Axis::kPackage:
      return "package";
    case Axis::kArtifact:
      return "artifact";
  }
  return "?";
}

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

// What Cell::id() says, spelled without the temporaries of gpu_tag() and python.str(): a large
// matrix spells 100 000 ids.
void append_id(const Cell& cell, std::string& out) {
  out += cell.package->id_prefix;
  if (!out.empty() && std::isdigit(static_cast<unsigned char>(out.back())) != 0) out += '-';  // flash_attn_3-3.0.0
  cell.version.append_to(out);
  if (cell.library()) {
    out += "-lib";
  } else {
    // The series, as the label and the wheelhouse say it: a pin (2.8.0) files under torch2.8, and
    // `--only 'fa2.8.3-torch2.8-*'` finds it.
    out += "-torch";
    if (cell.stable_floor) {  // the window it serves: fa2.8.4-torch2.10andhigher-...
      cell.stable_floor->append_to(out);
      out += "andhigher";
    } else {
      cell.torch_series().append_to(out);
    }
  }
  // The GPU and Python tags, as gpu_tag() and python.str() spell them, on the stack.
  char tags[64];
  char* end = tags;
  const auto literal = [&](std::string_view s) {
    end = std::copy_n(s.begin(), std::min<std::size_t>(s.size(), tags + sizeof tags - end), end);
  };
  const auto number = [&](int n) { end = std::to_chars(end, tags + sizeof tags, n).ptr; };
  const Version& gpu = wheel_cuda_of(cell);
  literal(cell.rocm() ? "-rocm" : "-cu");
  number(gpu.major());
  number(gpu.minor());
  if (cell.library()) {
    // no Python
  } else if (cell.abi3()) {
    literal("-abi3");
  } else {
    literal("-cp");
    number(cell.python.major);
    number(cell.python.minor);
    if (cell.python.free_threaded) literal("t");
  }
  literal("-");
  out.append(tags, end);
  out += to_string(cell.platform);
  if (!cell.library() && cell.abi != cell.default_abi) {
    out += "-cxx11abi";
    out += to_string(cell.abi);
  }
  if (cell.profile != kDefaultProfile) {
    out += '-';
    out += cell.profile;
  }
  out += cell.build_type_suffix();
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

Version Cell::wheel_cuda() const { return wheel_cuda_of(*this); }

CellSetup& Cell::own_setup() {
  auto mine = std::make_shared<CellSetup>(*setup);
  CellSetup& out = *mine;
  setup = std::move(mine);
  return out;
}

std::string Cell::value(Axis axis) const {
  if (library() && (axis == Axis::kTorch || axis == Axis::kPython || axis == Axis::kAbi)) return {};
  switch (axis) {
    case Axis::kVersion:
      return version.str();
    case Axis::kTorch:
      return stable_floor ? ">=" + stable_floor->str() : torch.str();
    case Axis::kGpu:
      return rocm() ? "rocm" + cuda.toolkit.str() : cuda.toolkit.str();
    case Axis::kPython:
      return python.str();
    case Axis::kPlatform:
      return to_string(platform);
    case Axis::kAbi:
      return to_string(abi);
    case Axis::kProfile:
      return profile;
    case Axis::kPackage:
      return package->name;
    case Axis::kArtifact:
      return to_string(artifact);
  }
  return {};
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
  append_id(*this, buffer);
  return buffer;
}

}  // namespace fabuild
