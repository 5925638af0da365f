#pragma once

// An ELF file open for libelf, closed when it goes out of scope: what the export check
// (exports_elf_posix.cpp) and the version needs (elf_needs_posix.cpp) read. POSIX builds only.

#include <fcntl.h>
#include <libelf.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "util/expected.h"

namespace fabuild {

class ElfFile {
 public:
  // A Failure when the file cannot be opened; a file that is not ELF opens (is_elf() says so),
  // since libelf hands out a descriptor (ELF_K_NONE) for any file.
  static Expected<std::unique_ptr<ElfFile>> open(const std::filesystem::path& path) {
    std::unique_ptr<ElfFile> file(new ElfFile(::open(path.c_str(), O_RDONLY | O_CLOEXEC)));
    if (file->fd_ < 0) return fail(fmt::format("cannot open {}", path.string()));
    if (elf_version(EV_CURRENT) == EV_NONE) return fail("libelf is out of date");
    file->elf_ = elf_begin(file->fd_, ELF_C_READ, nullptr);
    if (file->elf_ == nullptr) return fail(fmt::format("libelf cannot read {}: {}", path.string(), elf_errmsg(-1)));
    return file;
  }
  ~ElfFile() { release(); }
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;

  [[nodiscard]] bool is_elf() const { return elf_kind(elf_) == ELF_K_ELF; }
  [[nodiscard]] Elf* get() const { return elf_; }

 private:
  explicit ElfFile(int fd) : fd_(fd) {}

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
