#include "source/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/archive_paths.h"
#include "util/error.h"
#include "util/expected.h"
#include "util/file.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;

// The kernel gives up on a path after this many symlinks (ELOOP); a longer chain is a loop.
constexpr int kMaxSymlinkHops = 40;

tl::unexpected<Failure> refused(const fs::path& archive, const std::string& what) {
  return fail(fmt::format("{}: refusing to extract: {}", archive.string(), what),
              "the archive is damaged or hostile; do not build from it. Re-download it from a trusted "
              "index and check its sha256");
}

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> parts;
  while (!path.empty()) {
    const auto slash = path.find('/');
    parts.emplace_back(path.substr(0, slash));
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
  }
  return parts;
}

// An entry name as a path relative to the extraction root, or a reason to refuse it.
Expected<fs::path> relative_entry_path(std::string_view name) {
  if (name.empty()) return fail("an entry has an empty name");
  if (name.front() == '/') return fail(fmt::format("'{}' is an absolute path", name));
  fs::path out;
  for (const auto& part : split_path(name)) {
    if (part == "..") return fail(fmt::format("'{}' has a '..' component", name));
    if (!part.empty() && part != ".") out /= part;
  }
  return out;
}

// Where `target` leads from the directory holding the link, judged on the names alone. Catches
// the plain cases early with a precise message; links_stay_inside catches chains afterwards.
bool lexically_inside(const fs::path& link, std::string_view target) {
  if (target.empty() || target.front() == '/') return false;
  std::vector<std::string> at = split_path(link.parent_path().string());
  for (const auto& part : split_path(target)) {
    if (part.empty() || part == ".") continue;
    if (part != "..") {
      at.push_back(part);
    } else if (at.empty()) {
      return false;
    } else {
      at.pop_back();
    }
  }
  return true;
}

// Follows the link at root/link as the kernel would, through every link met on the way, and
// returns why it leaves root, or nothing. "d/up -> .." and "d/l -> up/.." each look harmless
// by name; together "d/l" is root's parent.
std::optional<std::string> link_escape(const fs::path& root, const fs::path& link) {
  std::vector<std::string> at = split_path(link.parent_path().string());
  std::error_code ec;
  const auto first = fs::read_symlink(root / link, ec).string();
  std::deque<std::string> pending_parts;
  for (auto& part : split_path(first)) pending_parts.push_back(std::move(part));
  int hops = 0;
  while (!pending_parts.empty()) {
    const std::string part = std::move(pending_parts.front());
    pending_parts.pop_front();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (at.empty()) return fmt::format("symlink '{}' -> '{}' leads outside the archive", link.string(), first);
      at.pop_back();
      continue;
    }
    fs::path here = root;
    for (const auto& a : at) here /= a;
    here /= part;
    if (!fs::is_symlink(fs::symlink_status(here, ec))) {
      at.push_back(part);
      continue;
    }
    const auto next = fs::read_symlink(here, ec).string();
    if (++hops > kMaxSymlinkHops) return fmt::format("symlink '{}' is part of a loop", link.string());
    if (next.empty() || next.front() == '/')
      return fmt::format("symlink '{}' leads through '{}' outside the archive", link.string(), next);
    const auto parts = split_path(next);
    pending_parts.insert(pending_parts.begin(), parts.begin(), parts.end());
  }
  return std::nullopt;
}

std::string type_name(mode_t type) {
  switch (type) {
    case AE_IFCHR:
      return "character device";
    case AE_IFBLK:
      return "block device";
    case AE_IFIFO:
      return "fifo";
    case AE_IFSOCK:
      return "socket";
    default:
      return fmt::format("file of type {:o}", static_cast<unsigned>(type));
  }
}

using Reader = std::unique_ptr<struct archive, decltype(&archive_read_free)>;
using Writer = std::unique_ptr<struct archive, decltype(&archive_write_free)>;

class Extraction {
 public:
  Extraction(const fs::path& archive_path, const fs::path& root, const ExtractLimits& limits)
      : archive_(archive_path), root_(root), limits_(limits) {
    std::error_code ec;
    packed_ = fs::file_size(archive_path, ec);
    if (!ec && limits_.max_ratio != 0) ratio_cap_ = packed_ * limits_.max_ratio + kRatioAllowance;
  }

  Expected<void> run() {
    Reader reader(archive_read_new(), &archive_read_free);
    archive_read_support_filter_all(reader.get());
    archive_read_support_format_tar(reader.get());
    archive_read_support_format_zip(reader.get());
    if (open_archive_file(reader.get(), archive_, 1 << 16) != ARCHIVE_OK)
      return refused(archive_, fmt::format("cannot read it: {}", archive_error_string(reader.get())));
    Writer writer(archive_write_disk_new(), &archive_write_free);
    // Defence in depth behind our own checks: never write through a link, never climb out.
    archive_write_disk_set_options(
        writer.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT);
    archive_entry* entry = nullptr;
    for (;;) {
      const int rc = archive_read_next_header(reader.get(), &entry);
      if (rc == ARCHIVE_EOF) break;
      if (rc < ARCHIVE_WARN)
        return refused(archive_, fmt::format("cannot read it: {}", archive_error_string(reader.get())));
      if (++entries_ > limits_.max_entries) {
        return refused(archive_,
                       fmt::format("it has more than {} entries (a decompression bomb?)", limits_.max_entries));
      }
      if (auto done = extract_entry(reader.get(), writer.get(), entry); !done) return done;
    }
    if (archive_write_close(writer.get()) < ARCHIVE_WARN)
      return refused(archive_, fmt::format("cannot finish: {}", archive_error_string(writer.get())));
    for (const auto& link : symlinks_) {
      if (auto escape = link_escape(root_, link)) return refused(archive_, *escape);
    }
    return {};
  }

 private:
  Expected<void> extract_entry(struct archive* reader, struct archive* writer, archive_entry* entry) {
    const char* raw_name = archive_entry_pathname(entry);
    const std::string name = raw_name ? raw_name : "";
    const auto checked = relative_entry_path(name);
    if (!checked) return refused(archive_, checked.error().what);
    const fs::path& rel = *checked;
    if (rel.empty()) return {};  // "./": the root itself
    const auto type = archive_entry_filetype(entry);
    if (const char* hardlink = archive_entry_hardlink(entry)) {
      const auto inside = relative_entry_path(hardlink);
      if (!inside) {
        return refused(archive_, fmt::format("hard link '{}' -> '{}' points outside the archive ({})", name, hardlink,
                                             inside.error().what));
      }
      const fs::path target = *inside;
      if (target.empty()) return refused(archive_, fmt::format("hard link '{}' points at the root", name));
      set_entry_hardlink(entry, root_ / target);
    } else if (type == AE_IFLNK) {
      const char* target = archive_entry_symlink(entry);
      if (!lexically_inside(rel, target ? target : "")) {
        return refused(archive_,
                       fmt::format("symlink '{}' -> '{}' points outside the archive", name, target ? target : ""));
      }
      symlinks_.push_back(rel);
    } else if (type != AE_IFREG && type != AE_IFDIR) {
      return refused(archive_, fmt::format("'{}' is a {}; an sdist holds only files, directories and links", name,
                                           type_name(type)));
    }
    if (archive_entry_size_is_set(entry)) {
      if (auto fits = check_total(static_cast<std::uint64_t>(archive_entry_size(entry))); !fits) return fits;
    }
    set_entry_pathname(entry, root_ / rel);
    if (archive_write_header(writer, entry) < ARCHIVE_WARN)
      return refused(archive_, fmt::format("cannot extract '{}': {}", name, archive_error_string(writer)));
    if (auto copied = copy_data(reader, writer, name); !copied) return copied;
    if (archive_write_finish_entry(writer) < ARCHIVE_WARN)
      return refused(archive_, fmt::format("cannot extract '{}': {}", name, archive_error_string(writer)));
    return {};
  }

  Expected<void> copy_data(struct archive* reader, struct archive* writer, const std::string& name) {
    const void* block = nullptr;
    std::size_t size = 0;
    la_int64_t offset = 0;
    int rc = ARCHIVE_OK;
    while ((rc = archive_read_data_block(reader, &block, &size, &offset)) == ARCHIVE_OK) {
      written_ += size;  // the running total decides, whatever the headers claimed
      if (auto fits = check_total(0); !fits) return fits;
      if (archive_write_data_block(writer, block, size, offset) < ARCHIVE_WARN)
        return refused(archive_, fmt::format("cannot write '{}': {}", name, archive_error_string(writer)));
    }
    if (rc != ARCHIVE_EOF)
      return refused(archive_, fmt::format("cannot read '{}': {}", name, archive_error_string(reader)));
    return {};
  }

  // Refuses once the bytes written so far plus `announced` (an entry's declared size) pass the cap.
  [[nodiscard]] Expected<void> check_total(std::uint64_t announced) const {
    if (written_ + announced > limits_.max_total_bytes) {
      return refused(archive_, fmt::format("it expands past the limit of {} bytes (a decompression bomb?)",
                                           limits_.max_total_bytes));
    }
    if (ratio_cap_ != 0 && written_ + announced > ratio_cap_) {
      return refused(archive_, fmt::format("it expands past {} bytes, more than {} times its own {} bytes "
                                           "(a decompression bomb?)",
                                           ratio_cap_, limits_.max_ratio, packed_));
    }
    return {};
  }

  fs::path archive_;
  fs::path root_;
  ExtractLimits limits_;
  std::uint64_t packed_ = 0;     // the archive's size
  std::uint64_t ratio_cap_ = 0;  // packed_ * max_ratio + kRatioAllowance; 0: none
  std::uint64_t entries_ = 0;
  std::uint64_t written_ = 0;
  std::vector<fs::path> symlinks_;
};

tl::unexpected<Failure> extract_error(const fs::path& archive, const std::string& what, std::string hint) {
  return fail(archive.string() + ": " + what, std::move(hint));
}

}  // namespace

Expected<void> extract_archive(const fs::path& archive_path, const fs::path& dest_dir, const ExtractLimits& limits) {
  fs::path dest = dest_dir.lexically_normal();
  if (!dest.has_filename()) dest = dest.parent_path();  // "out/" names "out"
  std::error_code ec;
  const auto existing = fs::symlink_status(dest, ec);
  if (fs::exists(existing) && !(fs::is_directory(existing) && fs::is_empty(dest, ec))) {
    return extract_error(archive_path, fmt::format("cannot extract into {}: it already exists", dest.string()),
                         "remove it first, or extract somewhere else");
  }
  const fs::path parent = dest.has_parent_path() ? dest.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  // A resolved parent: ARCHIVE_EXTRACT_SECURE_SYMLINKS would also refuse a link above the tree.
  const fs::path real_parent = fs::canonical(parent, ec);
  if (ec) {
    return extract_error(archive_path, fmt::format("cannot use {}: {}", parent.string(), ec.message()),
                         "check that the directory exists and is writable");
  }
  const auto unwritable = [&](const std::string& why) {
    return extract_error(archive_path, fmt::format("cannot extract into {}: {}", dest.string(), why),
                         "check that the destination directory is writable");
  };
  const Expected<fs::path> staging = make_temp_directory("." + dest.filename().string() + ".extract-", real_parent);
  if (!staging) return unwritable(staging.error().what);
  Expected<void> done = Extraction(archive_path, *staging, limits).run();
  if (done) {
    fs::permissions(*staging,
                    fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                        fs::perms::others_exec,
                    ec);
    done = rename_directory(*staging, dest);  // replaces an empty dest_dir
    if (!done) done = unwritable(done.error().what);
  }
  if (!done) fs::remove_all(*staging, ec);
  return done;
}

Expected<fs::path> sdist_root(const fs::path& dest_dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::directory_iterator it(dest_dir, ec), end; !ec && it != end; it.increment(ec)) found.push_back(it->path());
  if (ec) {
    return extract_error(dest_dir, fmt::format("cannot list the extracted sdist: {}", ec.message()),
                         "extract the archive first");
  }
  if (found.size() == 1 && fs::is_directory(fs::symlink_status(found.front(), ec))) return found.front();
  std::vector<std::string> names;
  for (const auto& p : found) names.push_back(p.filename().string());
  std::sort(names.begin(), names.end());
  return extract_error(dest_dir,
                       fmt::format("expected one top-level directory (like flash_attn-2.8.3/), found {}",
                                   names.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(names, ", "))),
                       "this is not the layout of an sdist; check that the URL points at the package's .tar.gz");
}

}  // namespace fabuild
