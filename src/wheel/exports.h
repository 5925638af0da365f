#pragma once

// Which C++ entry points a built extension library exports (docs/cpp-consumers.md): C++
// programs link against FlashAttention's flash_attn_2_cuda library for mha_fwd, mha_bwd...,
// so a wheel whose library lost one (hidden visibility, a build switch, a rename) breaks them
// although every Python test passes. Read from an ELF library's dynamic symbol table with
// libelf (exports_elf.h), or from a PE image's export directory (a Windows .pyd: pe_exports.h).

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "util/expected.h"

namespace fabuild {

struct ExportCheck {
  // Each wanted entry point that was found -> its demangled signature ("flash::mha_fwd(at::Tensor&, ...)").
  std::map<std::string, std::string> found;
  std::vector<std::string> missing;  // wanted, not exported
};

// `wanted`: "mha_fwd" matches a defined function whose unqualified name is mha_fwd (in any
// namespace, any overload: the first in symbol order is reported); "flash::mha_fwd" must
// match the qualified name; an extern "C" symbol matches by its plain name. In a PE image,
// MSVC-decorated names match by the name they decorate, and their signature is the decorated
// name. A Failure when the file is neither an ELF shared library with a dynamic symbol table nor
// a readable PE image.
Expected<ExportCheck> check_exports(const std::filesystem::path& library, const std::vector<std::string>& wanted);

// Every function the library exports (defined, global, visible), by qualified name, sorted and
// once each: what a library that must export exactly its C API is held to. Fails as check_exports.
Expected<std::vector<std::string>> exported_functions(const std::filesystem::path& library);

}  // namespace fabuild
