#include "wheel/layout.h"

#include <fmt/format.h>

#include "util/text.h"

namespace fabuild {

std::string local_label(const Cell& cell) {
  return fmt::format("{}torch{}cxx11abi{}", cu_tag(cell.wheel_cuda()), cell.torch_series().str(), to_string(cell.abi));
}

std::string wheelhouse_subdir(const Cell& cell) {
  return fmt::format("{}{}/torch{}/{}", cell.package->id_prefix, cell.version.str(), cell.torch_series().str(),
                     cu_tag(cell.wheel_cuda()));
}

std::string wheel_filename(const Cell& cell) {
  // setuptools writes the version PEP 440-normalised, and a local label is lower case there.
  const std::string py = cell.python.str();
  return fmt::format("{}-{}+{}-{}-{}-{}.whl", cell.package->dist_name, cell.version.str(), to_lower(local_label(cell)), py,
                     py, to_string(cell.platform));
}

}  // namespace fabuild
