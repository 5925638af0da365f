#include "wheel/layout.h"

#include <fmt/format.h>

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
  std::string label = cell.package->label;
  label = replace_all(label, "{gpu}", cell.gpu_tag());
  label = replace_all(label, "{cuda}", cell.wheel_cuda().str());
  label = replace_all(label, "{torch}", cell.torch_series().str());
  label = replace_all(label, "{abi}", to_string(cell.abi));
  if (cell.profile != kDefaultProfile) label += (label.empty() ? "" : ".") + cell.profile;
  return label;
}

std::string wheelhouse_subdir(const Cell& cell) {
  std::string dir = fmt::format("{}{}/torch{}/{}", cell.package->id_prefix, cell.version.str(),
                                cell.torch_series().str(), cell.gpu_tag());
  if (cell.profile != kDefaultProfile) dir += "/" + cell.profile;
  return dir;
}

std::string wheel_version(const Cell& cell) {
  const std::string label = local_label(cell);
  return label.empty() ? cell.version.str() : cell.version.str() + "+" + label;
}

std::string wheel_filename(const Cell& cell) {
  // setuptools writes the version PEP 440-normalised, and a local label is lower case there.
  return fmt::format("{}-{}-{}-{}-{}.whl", cell.package->dist_name, to_lower(wheel_version(cell)), cell.python_tag(),
                     cell.abi_tag(), to_string(cell.platform));
}

}  // namespace fabuild
