#pragma once

// Test wheels built in C++: a zip writer over libarchive, and a builder that writes a
// FlashAttention-shaped wheel with a correct RECORD unless a test asks for it to be wrong.

#include <archive.h>
#include <archive_entry.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "util/hash.h"

namespace fabuild::test {

// Writes members in order, exactly as given: duplicates and "../evil" included, so that
// tests can build the archives a reader must refuse.
inline void write_zip(const std::filesystem::path& path,
                      const std::vector<std::pair<std::string, std::string>>& members) {
  std::unique_ptr<archive, decltype(&archive_write_free)> a(archive_write_new(), &archive_write_free);
  archive_write_set_format_zip(a.get());
  if (archive_write_open_filename(a.get(), path.string().c_str()) != ARCHIVE_OK) {
    throw std::runtime_error(std::string("write_zip: ") + archive_error_string(a.get()));
  }
  for (const auto& [name, bytes] : members) {
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(archive_entry_new(), &archive_entry_free);
    archive_entry_set_pathname(e.get(), name.c_str());
    archive_entry_set_filetype(e.get(), AE_IFREG);
    archive_entry_set_perm(e.get(), 0644);
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(bytes.size()));
    if (archive_write_header(a.get(), e.get()) != ARCHIVE_OK ||
        archive_write_data(a.get(), bytes.data(), bytes.size()) != static_cast<la_ssize_t>(bytes.size())) {
      throw std::runtime_error(std::string("write_zip: ") + archive_error_string(a.get()));
    }
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) throw std::runtime_error("write_zip: close failed");
}

struct TestWheel {
  std::string dist = "flash_attn";
  std::string version = "2.8.3+cu128torch2.8cxx11abiTRUE";
  std::string tag = "cp312-cp312-linux_x86_64";
  std::string metadata_name = "flash_attn";
  std::string metadata_version = "2.8.3+cu128torch2.8cxx11abiTRUE";
  // Members besides the .dist-info files.
  std::map<std::string, std::string> files = {
      {"flash_attn/__init__.py", "__version__ = \"2.8.3\"\n"},
      {"flash_attn/flash_attn_interface.py", "import flash_attn_2_cuda\n"},
      {"flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so", std::string("\x7f"
                                                                        "ELF\x02\x01\x01",
                                                                        7) +
                                                                std::string(4096, 'x')},
  };
  bool with_record = true;
  std::set<std::string> unrecorded;             // left out of RECORD
  std::map<std::string, std::string> tampered;  // written instead of the bytes RECORD hashed
  std::string extra_record;                     // raw lines appended to RECORD

  [[nodiscard]] std::string dist_info() const { return dist + "-" + version + ".dist-info"; }
  [[nodiscard]] std::string file_name() const { return dist + "-" + version + "-" + tag + ".whl"; }

  // Writes dir/file_name() and returns its path.
  std::filesystem::path write(const std::filesystem::path& dir) const {
    std::vector<std::pair<std::string, std::string>> members(files.begin(), files.end());
    members.emplace_back(dist_info() + "/METADATA", "Metadata-Version: 2.1\nName: " + metadata_name +
                                                        "\nVersion: " + metadata_version +
                                                        "\nSummary: Flash Attention\n\nLong description.\n");
    members.emplace_back(
        dist_info() + "/WHEEL",
        "Wheel-Version: 1.0\nGenerator: setuptools (80.9.0)\nRoot-Is-Purelib: false\nTag: " + tag + "\n");
    std::string record;
    for (const auto& [name, bytes] : members) {
      if (unrecorded.count(name) != 0) continue;
      record += name + ",sha256=" + base64url_nopad(sha256_of(bytes)) + "," + std::to_string(bytes.size()) + "\n";
    }
    record += dist_info() + "/RECORD,,\n" + extra_record;
    for (auto& [name, bytes] : members) {
      if (auto t = tampered.find(name); t != tampered.end()) bytes = t->second;
    }
    if (with_record) members.emplace_back(dist_info() + "/RECORD", record);
    const std::filesystem::path path = dir / file_name();
    write_zip(path, members);
    return path;
  }
};

}  // namespace fabuild::test
