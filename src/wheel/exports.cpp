#include "wheel/exports.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

namespace fabuild {

namespace {

std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

// "flash::mha_fwd(at::Tensor&, ...)" -> "flash::mha_fwd": the name before the parameter list
// (template arguments and a return type, when the demangler writes them, are cut off too).
std::string qualified_name(const std::string& signature) {
  std::string name = signature.substr(0, signature.find('('));
  int depth = 0;
  std::string out;
  for (char c : name) {
    if (c == '<') ++depth;
    if (depth == 0) out += c;
    if (c == '>') --depth;
  }
  if (const auto space = out.rfind(' '); space != std::string::npos) out = out.substr(space + 1);
  return out;
}

std::string unqualified(const std::string& qualified) {
  const auto colons = qualified.rfind("::");
  return colons == std::string::npos ? qualified : qualified.substr(colons + 2);
}

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

ExportCheck check_exports(const std::filesystem::path& library, const std::vector<std::string>& wanted) {
  const ElfFile file(library);
  std::vector<std::pair<std::string, std::string>> defined;  // qualified name, signature
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
      const bool visible = GELF_ST_VISIBILITY(sym.st_other) == STV_DEFAULT || GELF_ST_VISIBILITY(sym.st_other) == STV_PROTECTED;
      if (!global || !visible || sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) != STT_FUNC) continue;
      const char* raw = elf_strptr(file.get(), header.sh_link, sym.st_name);
      if (raw == nullptr || *raw == '\0') continue;
      const std::string signature = demangle(raw);
      defined.emplace_back(qualified_name(signature), signature);
    }
  }
  if (!has_dynsym) throw std::runtime_error(fmt::format("{} has no dynamic symbol table", library.string()));

  ExportCheck check;
  for (const auto& want : wanted) {
    const bool qualified = want.find("::") != std::string::npos;
    const auto it = std::find_if(defined.begin(), defined.end(), [&](const auto& d) {
      return qualified ? d.first == want : unqualified(d.first) == want;
    });
    if (it == defined.end()) {
      check.missing.push_back(want);
    } else {
      check.found[want] = it->second;
    }
  }
  return check;
}

}  // namespace fabuild
