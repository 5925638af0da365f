#pragma once

// The names a Windows DLL (a `.pyd` is one) exports, read from the export directory of its PE
// image (PE32+, and PE32). There is no well-kept PE library in Debian's archive, so this reader
// is fabuild's own, kept small and defensive: every size, count and offset in the file is
// checked against the bytes that are really there before it is used, tables larger than the
// file could hold are refused, and nothing is read past the end (fuzz/fuzz_pe_exports.cpp).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "util/expected.h"

namespace fabuild {

struct PeExport {
  std::string name;
  std::uint32_t rva = 0;   // where it is in the image, as loaded
  bool code = false;       // in an executable section (a function), not data
  bool forwarded = false;  // a forwarder ("OTHER.Name"): defined in another DLL, not this one
};

struct PeExports {
  std::string dll_name;           // as the export directory names the DLL ("flash_attn_2_cuda.pyd")
  std::vector<PeExport> exports;  // those exported by name, in the name table's order
};

// Random access to the bytes of an image: `read` fills `out` with `size` bytes from `offset`,
// or returns false when they are not all there.
struct ByteSource {
  std::uint64_t size = 0;
  std::function<bool(std::uint64_t offset, void* out, std::size_t size)> read;
};
ByteSource bytes_of(const std::string& image);  // the string must outlive the source

// Whether `head` (the first bytes of a file) starts like a PE image ("MZ").
bool looks_like_pe(const std::string& head);

// The exports of the image, or why they cannot be read ("not a PE image: ...", "truncated: the
// section table ends at byte 4096 of a 1000-byte file", ...). An image without an export
// directory has no exports; that is not an error.
Expected<PeExports> read_pe_exports(const ByteSource& image);
// The same for a file, read piece by piece: a FlashAttention .pyd is hundreds of MB, of which
// the headers and the export tables are a few KB.
Expected<PeExports> read_pe_exports_file(const std::filesystem::path& path);

}  // namespace fabuild
