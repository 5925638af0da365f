#pragma once

// The functions an ELF shared library exports (its dynamic symbol table, read with libelf):
// defined, global or weak, of default or protected visibility. Only fabuild's Linux builds read
// ELF (exports_elf_posix.cpp); a Windows build of fabuild builds win_amd64 wheels, whose
// libraries are PE images (pe_exports.h).

#include <filesystem>
#include <string>
#include <vector>

#include "util/expected.h"

namespace fabuild {

// Raw (mangled) names; a Failure when the file is not an ELF shared library with a dynamic symbol
// table.
Expected<std::vector<std::string>> elf_exported_functions(const std::filesystem::path& library);

}  // namespace fabuild
