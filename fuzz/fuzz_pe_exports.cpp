// The PE export reader (wheel/pe_exports.h) on any bytes: it returns exports or a reason, never
// reads outside the input (ASan), and what it returns keeps to its limits.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "wheel/pe_exports.h"
#include "wheel/symbol_names.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string image(reinterpret_cast<const char*>(data), size);
  const auto read = fabuild::read_pe_exports(fabuild::bytes_of(image));
  if (!read) {
    if (read.error().what.empty()) std::abort();
    return 0;
  }
  if (read->dll_name.size() > 64 * 1024) std::abort();
  for (const auto& e : read->exports) {
    if (e.name.size() > 64 * 1024 || e.name.find('\0') != std::string::npos) std::abort();
    if (e.forwarded && e.code) std::abort();
    (void)fabuild::symbol_name(e.name);
  }
  return 0;
}
