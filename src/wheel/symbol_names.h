#pragma once

// What an exported symbol's name says in C++ terms, for the export check (wheel/exports.h):
// the Itanium names of ELF libraries and of DLLs built by mingw-w64 ("_ZN5flash7mha_fwd..."),
// and the decorated names of DLLs built by MSVC ("?mha_fwd@flash@@YA?AV...").

#include <optional>
#include <string>

namespace fabuild {

struct SymbolName {
  std::string qualified;  // "flash::mha_fwd"; an extern "C" symbol's own name
  std::string signature;  // what a C++ program declares or links against (see symbol_name)
};

// An Itanium name demangled ("flash::mha_fwd(at::Tensor&, ...)"); the name itself when it is
// none, or when this build has no demangler (MSVC's runtime has no <cxxabi.h>).
std::string demangle_itanium(const std::string& name);

// "flash::mha_fwd(at::Tensor&, ...)" -> "flash::mha_fwd": the name before the parameter list
// (template arguments and a return type, when the demangler writes them, are cut off too).
std::string qualified_name(const std::string& signature);
// "flash::mha_fwd" -> "mha_fwd".
std::string unqualified(const std::string& qualified);

// The qualified name of an MSVC-decorated function or variable name: "?mha_fwd@flash@@YA..." ->
// "flash::mha_fwd". Operators, constructors, templates and local scopes (names that start with
// "??" or have a "?$" part) are not decoded: nullopt.
std::optional<std::string> msvc_qualified_name(const std::string& decorated);

// Any exported name: an Itanium name demangled (signature: its demangled form), an MSVC name
// decoded (signature: the decorated name, which is what the linker matches on Windows), or a
// plain name as it is; nullopt for an MSVC name that msvc_qualified_name does not decode.
std::optional<SymbolName> symbol_name(const std::string& raw);

}  // namespace fabuild
