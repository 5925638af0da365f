#include <gelf.h>

#include <fmt/format.h>

#include "wheel/elf_file_posix.h"
#include "wheel/elf_needs.h"

namespace fabuild {

Expected<std::optional<VersionNeeds>> elf_version_needs(const std::filesystem::path& object) {
  const auto opened = ElfFile::open(object);
  if (!opened) return tl::make_unexpected(opened.error());
  const ElfFile& file = **opened;
  if (!file.is_elf()) return std::optional<VersionNeeds>();
  const auto bad = [&](const char* what) {
    return fail(fmt::format("{}: its version needs (.gnu.version_r) cannot be read: {}", object.string(), what));
  };
  VersionNeeds needs;
  for (Elf_Scn* scn = elf_nextscn(file.get(), nullptr); scn != nullptr; scn = elf_nextscn(file.get(), scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr || header.sh_type != SHT_GNU_verneed) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) return bad(elf_errmsg(-1));
    const auto text = [&](GElf_Word offset) -> const char* { return elf_strptr(file.get(), header.sh_link, offset); };
    // A chain of entries (sh_info of them), each with a chain of names: offsets relative to
    // the entry, 0 at the end. Counted, so that a looping chain in a hostile file ends.
    std::size_t offset = 0;
    for (GElf_Word entry = 0; entry < header.sh_info; ++entry) {
      GElf_Verneed need;
      if (gelf_getverneed(data, static_cast<int>(offset), &need) == nullptr) return bad(elf_errmsg(-1));
      const char* file_name = text(need.vn_file);
      if (file_name == nullptr) return bad("a name outside its string table");
      std::set<std::string>& names = needs[file_name];
      std::size_t aux_offset = offset + need.vn_aux;
      for (GElf_Half i = 0; i < need.vn_cnt; ++i) {
        GElf_Vernaux aux;
        if (gelf_getvernaux(data, static_cast<int>(aux_offset), &aux) == nullptr) return bad(elf_errmsg(-1));
        const char* name = text(aux.vna_name);
        if (name == nullptr) return bad("a name outside its string table");
        names.insert(name);
        if (aux.vna_next == 0) break;
        aux_offset += aux.vna_next;
      }
      if (need.vn_next == 0) break;
      offset += need.vn_next;
    }
  }
  return std::optional<VersionNeeds>(std::move(needs));
}

}  // namespace fabuild
