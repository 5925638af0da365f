#include "wheel/elf_needs.h"

namespace fabuild {

// fabuild on Windows builds win_amd64 wheels, whose modules are PE images and need no glibc;
// libelf is not part of its Windows build. Nothing is read, so nothing is recorded.
Expected<std::optional<VersionNeeds>> elf_version_needs(const std::filesystem::path& /*object*/) {
  return std::optional<VersionNeeds>();
}

}  // namespace fabuild
