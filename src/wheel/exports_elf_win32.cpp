
#include <fmt/format.h>

#include "wheel/exports_elf.h"

namespace fabuild {

// fabuild on Windows builds win_amd64 wheels only; libelf is not part of its Windows build.
Expected<std::vector<std::string>> elf_exported_functions(const std::filesystem::path& library) {
  return fail(fmt::format(
      "{} is an ELF library; this Windows build of fabuild reads PE images (.pyd, .dll) only: check it on Linux",
      library.string()));
}

}  // namespace fabuild
