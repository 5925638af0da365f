#pragma once

// An ELF file open for libelf, closed when it goes out of scope: what the export check
// (exports_elf_posix.cpp) and the version needs (elf_needs_posix.cpp) read. POSIX builds only.

#include <fcntl.h>
#include <libelf.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

namespace fabuild {

class ElfFile {
 public:
  // Throws std::runtime_error when the file cannot be opened; a file that is not ELF opens
  // (is_elf() says so), since libelf hands out a descriptor (ELF_K_NONE) for any file.
  explicit ElfFile(const std::filesystem::path& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw std::runtime_error(fmt::format("cannot open {}", path.string()));
    // A constructor that throws runs no destructor: release what is held before each throw.
    if (elf_version(EV_CURRENT) == EV_NONE) {
      release();
      throw std::runtime_error("libelf is out of date");
    }
    elf_ = elf_begin(fd_, ELF_C_READ, nullptr);
    if (elf_ == nullptr) {
      release();
      throw std::runtime_error(fmt::format("libelf cannot read {}: {}", path.string(), elf_errmsg(-1)));
    }
  }
  ~ElfFile() { release(); }
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;

  [[nodiscard]] bool is_elf() const { return elf_kind(elf_) == ELF_K_ELF; }
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

}  // namespace fabuild
