#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <stdexcept>

#include <fmt/format.h>

#include "wheel/exports_elf.h"

namespace fabuild {

namespace {

class ElfFile {
 public:
  explicit ElfFile(const std::filesystem::path& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw std::runtime_error(fmt::format("cannot open {}", path.string()));
    // A constructor that throws runs no destructor: release what is held before each throw.
    if (elf_version(EV_CURRENT) == EV_NONE) {
      release();
      throw std::runtime_error("libelf is out of date");
    }
    elf_ = elf_begin(fd_, ELF_C_READ, nullptr);
    if (elf_ == nullptr || elf_kind(elf_) != ELF_K_ELF) {
      release();  // elf_begin hands out a descriptor (ELF_K_NONE) for a file that is not ELF too
      throw std::runtime_error(fmt::format("{} is not an ELF file", path.string()));
    }
  }
  ~ElfFile() { release(); }
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  [[nodiscard]] Elf* get() const { return elf_; }

 private:
  void release() {
    if (elf_ != nullptr) elf_end(elf_);
    if (fd_ >= 0) ::close(fd_);
    elf_ = nullptr;
    fd_ = -1;
  }

  int fd_;
  Elf* elf_ = nullptr;
};

}  // namespace

std::vector<std::string> elf_exported_functions(const std::filesystem::path& library) {
  const ElfFile file(library);
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
  if (!has_dynsym) throw std::runtime_error(fmt::format("{} has no dynamic symbol table", library.string()));
  return names;
}

}  // namespace fabuild
