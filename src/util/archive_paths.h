#pragma once

// Paths handed to libarchive in the platform's own form: bytes on POSIX, UTF-16 (the _w calls)
// on Windows, where a narrow path would be read in the ANSI code page and lose what it cannot
// spell. Header-only: included by the layers that link libarchive (source, wheel).

#include <archive.h>
#include <archive_entry.h>

#include <cstddef>
#include <filesystem>

namespace fabuild {

inline int open_archive_file(struct archive* a, const std::filesystem::path& path, std::size_t block_size) {
#ifdef _WIN32
  return archive_read_open_filename_w(a, path.c_str(), block_size);
#else
  return archive_read_open_filename(a, path.c_str(), block_size);
#endif
}

inline int create_archive_file(struct archive* a, const std::filesystem::path& path) {
#ifdef _WIN32
  return archive_write_open_filename_w(a, path.c_str());
#else
  return archive_write_open_filename(a, path.c_str());
#endif
}

inline void set_entry_pathname(struct archive_entry* entry, const std::filesystem::path& path) {
#ifdef _WIN32
  archive_entry_copy_pathname_w(entry, path.c_str());
#else
  archive_entry_set_pathname(entry, path.c_str());
#endif
}

inline void set_entry_hardlink(struct archive_entry* entry, const std::filesystem::path& path) {
#ifdef _WIN32
  archive_entry_copy_hardlink_w(entry, path.c_str());
#else
  archive_entry_set_hardlink(entry, path.c_str());
#endif
}

}  // namespace fabuild
