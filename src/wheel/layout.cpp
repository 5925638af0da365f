#include "wheel/layout.h"

#include <fmt/format.h>

#include <cctype>

#include "matrix/axes.h"
#include "util/text.h"

namespace fabuild {

namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

}  // namespace

std::string local_label(const Cell& cell) {
  if (cell.library()) return {};  // a library has no Python version to label
  std::string label = cell.platform == Platform::kWinAmd64 ? cell.package->windows_label : cell.package->label;
  const Version gpu = cell.wheel_cuda();
  // FlashAttention names a CUDA major's wheels cu12 (they serve every minor), ROCm's rocm62.
  label = replace_all(label, "{gpu_major}", cell.rocm() ? cell.gpu_tag() : "cu" + std::to_string(gpu.major()));
  label = replace_all(label, "{cuda_major}", std::to_string(gpu.major()));
  label = replace_all(label, "{gpu}", cell.gpu_tag());
  label = replace_all(label, "{cuda}", gpu.str());
  if (cell.stable()) {
    // One wheel for every torch from its floor on: "cu130torch2.10andhigher". torch's stable ABI
    // is a C one, so libstdc++'s C++11 ABI switch says nothing of it and the label drops it.
    label = replace_all(label, "cxx11abi{abi}", "");
    label = replace_all(label, "{abi}", "");
  }
  label = replace_all(label, "{torch}", cell.torch_spelling());
  label = replace_all(label, "{abi}", to_string(cell.abi));
  if (cell.profile != kDefaultProfile) label += (label.empty() ? "" : ".") + cell.profile;
  for (const auto& name : declared_names(cell)) label += (label.empty() ? "" : ".") + name;
  return label;
}

namespace {

// What tells a cell apart below its CUDA tag: the profile (always, for a library) and the
// declared axes' values, "minimal-lineinfo"; "" for a wheel of the full profile and none.
std::string flavour_of(const Cell& cell) {
  std::vector<std::string> names = declared_names(cell);
  if (cell.library() || cell.profile != kDefaultProfile) names.insert(names.begin(), cell.profile);
  return join(names, "-");
}

}  // namespace

std::string wheelhouse_subdir(const Cell& cell) {
  const std::string& prefix = cell.package->id_prefix;
  const bool digit = !prefix.empty() && std::isdigit(static_cast<unsigned char>(prefix.back())) != 0;
  if (cell.library()) {
    return fmt::format("{}{}{}/lib/{}/{}{}", prefix, digit ? "-" : "", cell.version.str(), cell.gpu_tag(),
                       flavour_of(cell), cell.build_type_suffix());
  }
  std::string dir = fmt::format("{}{}{}/torch{}/{}", prefix, digit ? "-" : "", cell.version.str(),
                                cell.torch_spelling(), cell.gpu_tag());
  // One directory, so that it has its own variant index (publish/catalog.h).
  if (const std::string flavour = flavour_of(cell); !flavour.empty()) dir += "/" + flavour;
  return dir;
}

std::string library_stem(const Cell& cell) {
  return fmt::format("{}-{}-lib-{}-{}{}-{}", cell.package->dist_name, cell.version.str(), cell.gpu_tag(),
                     flavour_of(cell), cell.build_type_suffix(), to_string(cell.platform));
}

std::string library_filename(const Cell& cell) { return library_stem(cell) + ".tar.gz"; }

std::string filed_version(const Cell& cell) {
  const std::string label = local_label(cell);
  return label.empty() ? cell.version.str() : cell.version.str() + "+" + label;
}

std::string wheel_version(const Cell& cell) {
  return cell.package->label_in_metadata ? filed_version(cell) : cell.version.str();
}

std::string filed_platform_tag(const Cell& cell) {
  const std::string platform = to_string(cell.platform);
  if (cell.package->manylinux.empty() || cell.platform == Platform::kWinAmd64) return platform;
  return cell.package->manylinux + platform.substr(platform.find('_'));  // manylinux_2_28 + _x86_64
}

std::string wheel_filename(const Cell& cell) {
  // setuptools writes the version PEP 440-normalised (a local label lower case), but PEP 440
  // compares local labels without case: the file keeps the label's case, as FlashAttention's
  // own wheels and its get_wheel_url do ("cxx11abiTRUE"), and METADATA stays consistent.
  const std::string label = local_label(cell);
  const std::string version = to_lower(cell.version.str()) + (label.empty() ? "" : "+" + label);
  return fmt::format("{}-{}-{}-{}-{}.whl", cell.package->dist_name, version, cell.python_tag(), cell.abi_tag(),
                     filed_platform_tag(cell));
}

}  // namespace fabuild
