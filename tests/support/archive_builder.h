#pragma once

// Writes test archives with libarchive's writer, hostile ones included: the writer stores
// absolute paths, "..", device nodes and links as given, and needs no root to do so.

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fabuild::test {

struct ArchiveEntry {
  enum class Type { kFile, kDir, kSymlink, kHardlink, kCharDevice, kFifo };
  Type type = Type::kFile;
  std::string path;
  std::string content{};    // kFile: its bytes; kSymlink/kHardlink: the target
  std::uint64_t zeros = 0;  // kFile: this many zero bytes after `content` (bombs)

  static ArchiveEntry make(Type type, std::string path, std::string content = {}) {
    ArchiveEntry e;
    e.type = type;
    e.path = std::move(path);
    e.content = std::move(content);
    return e;
  }
  static ArchiveEntry file(std::string path, std::string content) {
    return make(Type::kFile, std::move(path), std::move(content));
  }
  static ArchiveEntry dir(std::string path) { return make(Type::kDir, std::move(path)); }
  static ArchiveEntry symlink(std::string path, std::string target) {
    return make(Type::kSymlink, std::move(path), std::move(target));
  }
  static ArchiveEntry hardlink(std::string path, std::string target) {
    return make(Type::kHardlink, std::move(path), std::move(target));
  }
};

enum class ArchiveFormat { kTarGz, kTar, kZip };

inline void write_archive(const std::filesystem::path& file, ArchiveFormat format,
                          const std::vector<ArchiveEntry>& entries) {
  std::unique_ptr<struct archive, decltype(&archive_write_free)> a(archive_write_new(), &archive_write_free);
  if (format == ArchiveFormat::kZip) {
    archive_write_set_format_zip(a.get());
  } else {
    archive_write_set_format_pax_restricted(a.get());
    if (format == ArchiveFormat::kTarGz) archive_write_add_filter_gzip(a.get());
  }
  if (archive_write_open_filename(a.get(), file.c_str()) != ARCHIVE_OK)
    throw std::runtime_error(archive_error_string(a.get()));
  for (const auto& e : entries) {
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> entry(archive_entry_new(), &archive_entry_free);
    archive_entry_set_pathname(entry.get(), e.path.c_str());
    archive_entry_set_perm(entry.get(), 0644);
    archive_entry_set_mtime(entry.get(), 1700000000, 0);
    using T = ArchiveEntry::Type;
    switch (e.type) {
      case T::kFile:
        archive_entry_set_filetype(entry.get(), AE_IFREG);
        archive_entry_set_size(entry.get(), static_cast<la_int64_t>(e.content.size() + e.zeros));
        break;
      case T::kDir:
        archive_entry_set_filetype(entry.get(), AE_IFDIR);
        archive_entry_set_perm(entry.get(), 0755);
        break;
      case T::kSymlink:
        archive_entry_set_filetype(entry.get(), AE_IFLNK);
        archive_entry_set_symlink(entry.get(), e.content.c_str());
        break;
      case T::kHardlink:
        archive_entry_set_filetype(entry.get(), AE_IFREG);
        archive_entry_set_hardlink(entry.get(), e.content.c_str());
        break;
      case T::kCharDevice:
        archive_entry_set_filetype(entry.get(), AE_IFCHR);
        archive_entry_set_rdev(entry.get(), (1 << 8) | 3);  // /dev/null's 1:3
        break;
      case T::kFifo:
        archive_entry_set_filetype(entry.get(), AE_IFIFO);
        break;
    }
    if (archive_write_header(a.get(), entry.get()) != ARCHIVE_OK)
      throw std::runtime_error(archive_error_string(a.get()));
    if (e.type == ArchiveEntry::Type::kFile) {
      archive_write_data(a.get(), e.content.data(), e.content.size());
      const std::string block(1 << 16, '\0');
      for (std::uint64_t left = e.zeros; left > 0;) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, block.size()));
        archive_write_data(a.get(), block.data(), n);
        left -= n;
      }
    }
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) throw std::runtime_error(archive_error_string(a.get()));
}

}  // namespace fabuild::test
