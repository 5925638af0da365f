#include "wheel/pe_exports.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>

#include <fmt/format.h>

namespace fabuild {

namespace {

// Offsets and sizes of the Microsoft PE/COFF specification ("PE Format"), little-endian.
constexpr std::uint32_t kDosLfanew = 0x3c;  // where the DOS header keeps the PE header's offset
constexpr std::size_t kCoffHeader = 20;
constexpr std::uint16_t kMagicPe32 = 0x10b;
constexpr std::uint16_t kMagicPe32Plus = 0x20b;
constexpr std::size_t kSectionHeader = 40;
constexpr std::size_t kExportDirectory = 40;
constexpr std::uint32_t kScnCntCode = 0x00000020;
constexpr std::uint32_t kScnMemExecute = 0x20000000;
// Limits no real DLL comes near: the loader takes at most 96 sections; a name longer than 64 KiB
// or a million exported names is a broken or hostile file, not a library.
constexpr std::uint16_t kMaxSections = 96;
constexpr std::size_t kMaxName = 64 * 1024;
constexpr std::uint32_t kMaxNames = 1'000'000;

struct Section {
  std::uint32_t va = 0;
  std::uint32_t virtual_size = 0;
  std::uint32_t raw_size = 0;
  std::uint32_t raw_offset = 0;
  std::uint32_t flags = 0;
};

class Image {
 public:
  explicit Image(const ByteSource& source) : src_(source) {}

  bool read(std::uint64_t offset, void* out, std::size_t size) const {
    if (offset > src_.size || size > src_.size - offset) return false;
    return src_.read(offset, out, size);
  }
  bool u16(std::uint64_t offset, std::uint16_t& v) const {
    unsigned char b[2];
    if (!read(offset, b, 2)) return false;
    v = static_cast<std::uint16_t>(b[0] | (b[1] << 8));
    return true;
  }
  bool u32(std::uint64_t offset, std::uint32_t& v) const {
    unsigned char b[4];
    if (!read(offset, b, 4)) return false;
    v = static_cast<std::uint32_t>(b[0]) | (static_cast<std::uint32_t>(b[1]) << 8) |
        (static_cast<std::uint32_t>(b[2]) << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
    return true;
  }
  [[nodiscard]] std::uint64_t size() const { return src_.size; }

  std::vector<Section> sections;

  // The section holding `rva`, or null. Only bytes the file really has count: the part of a
  // section past its raw data is zero-filled memory, never names or tables.
  [[nodiscard]] const Section* section_of(std::uint32_t rva) const {
    for (const Section& s : sections) {
      const std::uint64_t extent = std::min(s.virtual_size == 0 ? s.raw_size : s.virtual_size, s.raw_size);
      if (rva >= s.va && static_cast<std::uint64_t>(rva) - s.va < extent) return &s;
    }
    return nullptr;
  }
  // The file offset of `size` bytes at `rva`, when they lie whole inside one section's raw data.
  [[nodiscard]] std::optional<std::uint64_t> offset_of(std::uint32_t rva, std::uint64_t size) const {
    const Section* s = section_of(rva);
    if (s == nullptr) return std::nullopt;
    const std::uint64_t extent = std::min(s->virtual_size == 0 ? s->raw_size : s->virtual_size, s->raw_size);
    const std::uint64_t into = static_cast<std::uint64_t>(rva) - s->va;
    if (size > extent - into) return std::nullopt;
    const std::uint64_t offset = static_cast<std::uint64_t>(s->raw_offset) + into;
    if (offset > src_.size || size > src_.size - offset) return std::nullopt;
    return offset;
  }
  // A NUL-terminated string at `rva`, within its section and at most kMaxName bytes.
  [[nodiscard]] std::optional<std::string> string_at(std::uint32_t rva) const {
    const Section* s = section_of(rva);
    if (s == nullptr) return std::nullopt;
    const std::uint64_t extent = std::min(s->virtual_size == 0 ? s->raw_size : s->virtual_size, s->raw_size);
    const std::uint64_t room = std::min<std::uint64_t>(extent - (static_cast<std::uint64_t>(rva) - s->va), kMaxName);
    const auto base = offset_of(rva, room);
    if (!base) return std::nullopt;
    std::string out;
    char chunk[256];
    for (std::uint64_t done = 0; done < room;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof chunk, room - done));
      if (!read(*base + done, chunk, n)) return std::nullopt;
      const char* end = static_cast<const char*>(std::memchr(chunk, '\0', n));
      out.append(chunk, end == nullptr ? n : static_cast<std::size_t>(end - chunk));
      if (end != nullptr) return out;
      done += n;
    }
    return std::nullopt;  // no terminator where one must be
  }

 private:
  const ByteSource& src_;
};

tl::unexpected<Failure> broken(const std::string& what) { return fail(what); }

}  // namespace

ByteSource bytes_of(const std::string& image) {
  return ByteSource{image.size(), [&image](std::uint64_t offset, void* out, std::size_t size) {
                      if (offset > image.size() || size > image.size() - offset) return false;
                      std::memcpy(out, image.data() + offset, size);
                      return true;
                    }};
}

bool looks_like_pe(const std::string& head) { return head.size() >= 2 && head[0] == 'M' && head[1] == 'Z'; }

Expected<PeExports> read_pe_exports(const ByteSource& source) {
  Image image(source);
  char mz[2];
  if (!image.read(0, mz, 2) || mz[0] != 'M' || mz[1] != 'Z') return broken("not a PE image: no MZ header");
  std::uint32_t pe = 0;
  if (!image.u32(kDosLfanew, pe)) return broken("truncated: the DOS header is cut short");
  char signature[4];
  if (!image.read(pe, signature, 4) || std::memcmp(signature, "PE\0\0", 4) != 0) {
    return broken(fmt::format("not a PE image: no PE signature at byte {}", pe));
  }
  const std::uint64_t coff = static_cast<std::uint64_t>(pe) + 4;
  std::uint16_t sections = 0;
  std::uint16_t optional_size = 0;
  if (!image.u16(coff + 2, sections) || !image.u16(coff + 16, optional_size)) {
    return broken("truncated: the COFF header is cut short");
  }
  if (sections > kMaxSections) return broken(fmt::format("{} sections, more than the loader takes", sections));
  const std::uint64_t optional = coff + kCoffHeader;
  std::uint16_t magic = 0;
  if (optional_size < 2 || !image.u16(optional, magic)) return broken("truncated: no optional header");
  if (magic != kMagicPe32 && magic != kMagicPe32Plus) {
    return broken(fmt::format("optional header magic {:#x} is neither PE32 nor PE32+", magic));
  }
  const std::uint64_t count_at = magic == kMagicPe32Plus ? 108 : 92;  // NumberOfRvaAndSizes
  const std::uint64_t dirs_at = count_at + 4;
  std::uint32_t dir_count = 0;
  if (optional_size < dirs_at || !image.u32(optional + count_at, dir_count)) {
    return broken("truncated: the optional header has no data directories");
  }
  PeExports out;
  if (dir_count == 0 || optional_size < dirs_at + 8) return out;  // no export directory entry at all
  std::uint32_t export_rva = 0;
  std::uint32_t export_size = 0;
  if (!image.u32(optional + dirs_at, export_rva) || !image.u32(optional + dirs_at + 4, export_size)) {
    return broken("truncated: the data directories are cut short");
  }

  const std::uint64_t table = optional + optional_size;
  if (table + static_cast<std::uint64_t>(sections) * kSectionHeader > image.size()) {
    return broken(fmt::format("truncated: the section table ends past byte {} of the {}-byte file",
                              table + static_cast<std::uint64_t>(sections) * kSectionHeader, image.size()));
  }
  for (std::uint16_t i = 0; i < sections; ++i) {
    const std::uint64_t at = table + static_cast<std::uint64_t>(i) * kSectionHeader;
    Section s;
    if (!image.u32(at + 8, s.virtual_size) || !image.u32(at + 12, s.va) || !image.u32(at + 16, s.raw_size) ||
        !image.u32(at + 20, s.raw_offset) || !image.u32(at + 36, s.flags)) {
      return broken("truncated: a section header is cut short");
    }
    image.sections.push_back(s);
  }
  if (export_rva == 0 && export_size == 0) return out;  // exports nothing

  const auto dir = image.offset_of(export_rva, kExportDirectory);
  if (!dir) return broken(fmt::format("the export directory (RVA {:#x}) is not inside the file", export_rva));
  std::uint32_t name_rva = 0, functions = 0, names = 0, functions_rva = 0, names_rva = 0, ordinals_rva = 0;
  if (!image.u32(*dir + 12, name_rva) || !image.u32(*dir + 20, functions) || !image.u32(*dir + 24, names) ||
      !image.u32(*dir + 28, functions_rva) || !image.u32(*dir + 32, names_rva) || !image.u32(*dir + 36, ordinals_rva)) {
    return broken("truncated: the export directory is cut short");
  }
  if (names > kMaxNames) return broken(fmt::format("the export directory claims {} names", names));
  if (names == 0) return out;
  // Every table must lie whole in the file before any entry is read: a count that does not
  // fit is refused at once rather than read entry by entry to the end.
  const auto name_table = image.offset_of(names_rva, static_cast<std::uint64_t>(names) * 4);
  const auto ordinal_table = image.offset_of(ordinals_rva, static_cast<std::uint64_t>(names) * 2);
  const auto function_table = image.offset_of(functions_rva, static_cast<std::uint64_t>(functions) * 4);
  if (!name_table || !ordinal_table || !function_table) {
    return broken(fmt::format("the export tables ({} names, {} functions) do not fit in the file", names, functions));
  }
  if (name_rva != 0) out.dll_name = image.string_at(name_rva).value_or("");
  for (std::uint32_t i = 0; i < names; ++i) {
    std::uint32_t rva = 0;
    std::uint16_t ordinal = 0;
    if (!image.u32(*name_table + 4ull * i, rva) || !image.u16(*ordinal_table + 2ull * i, ordinal)) {
      return broken("truncated: the export name table is cut short");
    }
    if (ordinal >= functions) return broken(fmt::format("export {} points past the {} functions", i, functions));
    auto name = image.string_at(rva);
    if (!name) return broken(fmt::format("export {}'s name (RVA {:#x}) is not inside the file", i, rva));
    PeExport e;
    e.name = std::move(*name);
    if (!image.u32(*function_table + 4ull * ordinal, e.rva)) return broken("truncated: the export address table");
    // An address inside the export directory's own range is a forwarder string, not code.
    e.forwarded = e.rva >= export_rva && static_cast<std::uint64_t>(e.rva) - export_rva < export_size;
    const Section* s = image.section_of(e.rva);
    e.code = !e.forwarded && s != nullptr && (s->flags & (kScnCntCode | kScnMemExecute)) != 0;
    out.exports.push_back(std::move(e));
  }
  return out;
}

Expected<PeExports> read_pe_exports_file(const std::filesystem::path& path) {
  auto file = std::make_shared<std::ifstream>(path, std::ios::binary);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!*file || ec) return fail(fmt::format("cannot open {}", path.string()));
  const ByteSource source{size, [file](std::uint64_t offset, void* out, std::size_t n) {
                            file->clear();
                            file->seekg(static_cast<std::streamoff>(offset));
                            file->read(static_cast<char*>(out), static_cast<std::streamsize>(n));
                            return static_cast<std::size_t>(file->gcount()) == n;
                          }};
  auto exports = read_pe_exports(source);
  if (!exports) return fail(fmt::format("{}: {}", path.string(), exports.error().what));
  return exports;
}

}  // namespace fabuild
