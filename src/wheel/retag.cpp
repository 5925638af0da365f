#include "wheel/retag.h"

#include <archive.h>
#include <archive_entry.h>

#include <fmt/format.h>

#include <memory>
#include <regex>
#include <vector>

#include "util/archive_paths.h"
#include "util/expected.h"
#include "util/hash.h"
#include "util/text.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

using ReadPtr = std::unique_ptr<struct archive, decltype(&archive_read_free)>;
using WritePtr = std::unique_ptr<struct archive, decltype(&archive_write_free)>;

tl::unexpected<Failure> retag_error(const fs::path& where, const std::string& what) {
  return fail(where.string() + ": " + what,
              "check that the wheel is complete and that its directory is writable with space left");
}

Expected<ReadPtr> open_zip(const fs::path& wheel) {
  ReadPtr a(archive_read_new(), &archive_read_free);
  archive_read_support_format_zip(a.get());
  if (open_archive_file(a.get(), wheel, 1 << 16) != ARCHIVE_OK) {
    return retag_error(wheel, fmt::format("cannot open it as a zip archive: {}", archive_error_string(a.get())));
  }
  return a;
}

Expected<std::string> read_all(struct archive* a, const fs::path& wheel) {
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const la_ssize_t n = archive_read_data(a, buf, sizeof buf);
    if (n < 0) return retag_error(wheel, fmt::format("cannot read a member: {}", archive_error_string(a)));
    if (n == 0) return data;
    data.append(buf, static_cast<std::size_t>(n));
  }
}

bool is_dist_info_file(const std::string& path, const char* name) {
  const auto slash = path.find('/');
  return slash != std::string::npos && path.substr(0, slash).ends_with(".dist-info") && path.substr(slash + 1) == name;
}

// Each "Tag: py-abi-plat" with its platform replaced.
std::string retagged_wheel_file(const std::string& text, const std::string& platform_tag) {
  std::string out;
  for (const std::string& line : split(text, '\n')) {
    if (line.rfind("Tag:", 0) == 0) {
      const std::string tag = trim(line.substr(4));
      const auto last = tag.rfind('-');
      out += "Tag: " + (last == std::string::npos ? tag : tag.substr(0, last + 1) + platform_tag);
    } else {
      out += line;
    }
    out += '\n';
  }
  if (!text.ends_with('\n') && !out.empty()) out.pop_back();
  return out;
}

std::string retagged_record(const std::string& text, const std::string& wheel_path, const std::string& wheel_file) {
  const std::string line =
      fmt::format("{},sha256={},{}", wheel_path, base64url_nopad(sha256_of(wheel_file)), wheel_file.size());
  std::string out;
  for (const std::string& l : split(text, '\n')) {
    if (l.empty()) continue;
    out += (l.rfind(wheel_path + ",", 0) == 0 ? line : l) + "\n";
  }
  return out;
}

}  // namespace

std::optional<std::string> manylinux_glibc(const std::string& policy) {
  static const std::regex re(R"(^manylinux_(\d+)_(\d+)$)");
  std::smatch m;
  if (!std::regex_match(policy, m, re)) return std::nullopt;
  return m[1].str() + "." + m[2].str();
}

namespace {

// The wheel's members into `partial`, its WHEEL file and RECORD replaced.
Expected<void> write_retagged(const fs::path& wheel, const fs::path& partial, const std::string& wheel_path,
                              const std::string& wheel_file) {
  Expected<ReadPtr> in = open_zip(wheel);
  if (!in) return tl::make_unexpected(in.error());
  WritePtr w(archive_write_new(), &archive_write_free);
  archive_write_set_format_zip(w.get());
  archive_write_zip_set_compression_deflate(w.get());
  if (create_archive_file(w.get(), partial) != ARCHIVE_OK) {
    return retag_error(partial, fmt::format("cannot write it: {}", archive_error_string(w.get())));
  }
  struct archive_entry* e = nullptr;
  int status = ARCHIVE_OK;
  while ((status = archive_read_next_header(in->get(), &e)) == ARCHIVE_OK) {
    const std::string path = archive_entry_pathname(e);
    Expected<std::string> data = read_all(in->get(), wheel);
    if (!data) return tl::make_unexpected(data.error());
    if (path == wheel_path) *data = wheel_file;
    if (is_dist_info_file(path, "RECORD")) *data = retagged_record(*data, wheel_path, wheel_file);
    struct archive_entry* copy = archive_entry_clone(e);
    archive_entry_set_size(copy, static_cast<la_int64_t>(data->size()));
    // No times: libarchive's zip writer turns an entry's time into a DOS time in the machine's
    // local zone (localtime_r in its dos_time/unix_to_dos) and adds an extended-timestamp field
    // with the time's seconds, and its reader takes a wheel's DOS time as local time: the same
    // wheel retagged under TZ=UTC and TZ=Asia/Tokyo gave other bytes. Without a time every zone
    // writes DOS 1980-01-01 00:00 (its floor) and no seconds: one wheel wherever it is retagged.
    archive_entry_unset_mtime(copy);
    archive_entry_unset_atime(copy);
    archive_entry_unset_ctime(copy);
    archive_entry_unset_birthtime(copy);
    const bool ok = archive_write_header(w.get(), copy) == ARCHIVE_OK &&
                    (data->empty() ||
                     archive_write_data(w.get(), data->data(), data->size()) == static_cast<la_ssize_t>(data->size()));
    archive_entry_free(copy);
    if (!ok) return retag_error(partial, fmt::format("cannot write {}: {}", path, archive_error_string(w.get())));
  }
  if (status != ARCHIVE_EOF) {
    return retag_error(wheel, fmt::format("cannot read it: {}", archive_error_string(in->get())));
  }
  if (archive_write_close(w.get()) != ARCHIVE_OK) {
    return retag_error(partial, fmt::format("cannot finish it: {}", archive_error_string(w.get())));
  }
  return {};
}

}  // namespace

Expected<void> retag_wheel(const fs::path& wheel, const fs::path& out, const std::string& platform_tag) {
  // First the WHEEL file, whose new digest RECORD must carry wherever it sits in the zip.
  std::string wheel_path;
  std::string wheel_file;
  {
    Expected<ReadPtr> a = open_zip(wheel);
    if (!a) return tl::make_unexpected(a.error());
    struct archive_entry* e = nullptr;
    while (archive_read_next_header(a->get(), &e) == ARCHIVE_OK) {
      const std::string path = archive_entry_pathname(e);
      if (is_dist_info_file(path, "WHEEL")) {
        Expected<std::string> text = read_all(a->get(), wheel);
        if (!text) return tl::make_unexpected(text.error());
        wheel_path = path;
        wheel_file = retagged_wheel_file(*text, platform_tag);
        break;
      }
    }
  }
  if (wheel_path.empty()) return retag_error(wheel, "it has no .dist-info/WHEEL file to retag");

  const fs::path partial = out.string() + ".partial";
  Expected<void> written = write_retagged(wheel, partial, wheel_path, wheel_file);
  std::error_code ec;
  if (written) {
    fs::rename(partial, out, ec);
    if (!ec) return {};
    written = retag_error(out, "cannot put it in place: " + ec.message());
  }
  fs::remove(partial, ec);
  return written;
}

}  // namespace fabuild
