#include <gelf.h>

#include <fmt/format.h>

#include "wheel/elf_file_posix.h"
#include "wheel/exports_elf.h"

namespace fabuild {

Expected<std::vector<std::string>> elf_exported_functions(const std::filesystem::path& library) {
  const auto opened = ElfFile::open(library);
  if (!opened) return tl::make_unexpected(opened.error());
  const ElfFile& file = **opened;
  if (!file.is_elf()) return fail(fmt::format("{} is not an ELF file", library.string()));
  std::vector<std::string> names;
  bool has_dynsym = false;
  for (Elf_Scn* scn = elf_nextscn(file.get(), nullptr); scn != nullptr; scn = elf_nextscn(file.get(), scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr || header.sh_type != SHT_DYNSYM || header.sh_entsize == 0) continue;
    has_dynsym = true;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) continue;
    const std::size_t count = header.sh_size / header.sh_entsize;
    for (std::size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
      const bool global = GELF_ST_BIND(sym.st_info) == STB_GLOBAL || GELF_ST_BIND(sym.st_info) == STB_WEAK;
      const bool visible =
          GELF_ST_VISIBILITY(sym.st_other) == STV_DEFAULT || GELF_ST_VISIBILITY(sym.st_other) == STV_PROTECTED;
      if (!global || !visible || sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) != STT_FUNC) continue;
      const char* raw = elf_strptr(file.get(), header.sh_link, sym.st_name);
      if (raw != nullptr && *raw != '\0') names.emplace_back(raw);
    }
  }
  if (!has_dynsym) return fail(fmt::format("{} has no dynamic symbol table", library.string()));
  return names;
}

}  // namespace fabuild
