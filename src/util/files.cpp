#include "util/files.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "util/read_whole.h"

namespace fabuild {

namespace fs = std::filesystem;

namespace {

tl::unexpected<Failure> cannot(const std::string& doing, const fs::path& path, const std::error_code& ec) {
  return fail("cannot " + doing + " " + path.string() + ": " + ec.message());
}

}  // namespace

Expected<Sha256> Files::sha256(const fs::path& path) const {
  const Expected<std::string> bytes = read(path);
  if (!bytes) return tl::make_unexpected(bytes.error());
  return sha256_of(*bytes);
}

Files::Kind RealFiles::kind(const fs::path& path) const {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  switch (status.type()) {
    case fs::file_type::not_found:
    case fs::file_type::none:
      return Kind::kNone;
    case fs::file_type::regular:
      return Kind::kFile;
    case fs::file_type::directory:
      return Kind::kDirectory;
    default:
      return Kind::kOther;
  }
}

bool RealFiles::is_link(const fs::path& path) const {
  std::error_code ec;
  return fs::is_symlink(fs::symlink_status(path, ec));
}

std::optional<FileIdentity> RealFiles::identity(const fs::path& path) const { return identity_of(path); }

Expected<std::vector<fs::path>> RealFiles::list(const fs::path& dir) const {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
  if (ec) return cannot("list", dir, ec);
  std::sort(entries.begin(), entries.end());
  return entries;
}

Expected<std::vector<fs::path>> RealFiles::files_under(const fs::path& dir,
                                                       const std::function<bool(const fs::path&)>& skip) const {
  std::vector<fs::path> found;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code unknown;
    if (it->is_directory(unknown)) {
      if (skip && skip(it->path())) it.disable_recursion_pending();
    } else if (it->is_regular_file(unknown)) {
      found.push_back(it->path());
    }
  }
  if (ec) return cannot("list", dir, ec);
  std::sort(found.begin(), found.end());
  return found;
}

Expected<std::string> RealFiles::read(const fs::path& path) const {
  std::optional<std::string> bytes = read_whole(path);
  if (!bytes) return fail("cannot read " + path.string());
  return std::move(*bytes);
}

Expected<Sha256> RealFiles::sha256(const fs::path& path) const { return sha256_of_file(path); }

Expected<std::string> RealFiles::read_from(const fs::path& path, std::uint64_t offset) const {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot read " + path.string());
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return fail("cannot read " + path.string());
  if (static_cast<std::uint64_t>(size) <= offset) return std::string();
  std::string bytes(static_cast<std::size_t>(static_cast<std::uint64_t>(size) - offset), '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  return bytes;
}

Expected<void> RealFiles::write(const fs::path& path, std::string_view bytes) {
  return write_whole_file(path, bytes, {}, true);
}

Expected<void> RealFiles::append(const fs::path& path, std::string_view bytes) {
  return File::open(path, File::Mode::kAppend).and_then([&](File file) { return file.write(bytes); });
}

Expected<void> RealFiles::create_directories(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return cannot("create the directory", dir, ec);
  return {};
}

Expected<void> RealFiles::rename(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) return cannot("rename " + from.string() + " to", to, ec);
  return {};
}

namespace {

// The first entry below `dir` that a copy cannot take (a FIFO, a socket, a device), and what
// it is; nullopt when there is none.
std::optional<std::pair<fs::path, std::string>> special_entry(const fs::path& dir) {
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code unknown;
    switch (it->symlink_status(unknown).type()) {
      case fs::file_type::fifo:
        return std::pair{it->path(), std::string("a FIFO (named pipe)")};
      case fs::file_type::socket:
        return std::pair{it->path(), std::string("a socket")};
      case fs::file_type::block:
      case fs::file_type::character:
        return std::pair{it->path(), std::string("a device")};
      default:
        break;
    }
  }
  return std::nullopt;
}

}  // namespace

Expected<void> RealFiles::copy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
  if (!ec) return {};
  // The library's own words for a FIFO in the tree are "Invalid argument": name it instead.
  if (const auto special = special_entry(from)) {
    return fail(fmt::format("cannot copy {} to {}: {} is {}, which is copied as neither a file nor a directory",
                            from.string(), to.string(), special->first.string(), special->second),
                "remove it from the tree, or copy the tree without it and name that copy");
  }
  return cannot("copy " + from.string() + " to", to, ec);
}

Expected<bool> RealFiles::remove(const fs::path& path) {
  std::error_code ec;
  const bool removed = fs::remove(path, ec);
  if (ec) return cannot("remove", path, ec);
  return removed;
}

Expected<std::uintmax_t> RealFiles::remove_all(const fs::path& path) {
  std::error_code ec;
  const std::uintmax_t removed = fs::remove_all(path, ec);
  if (ec) return cannot("remove", path, ec);
  return removed;
}

Expected<void> RealFiles::touch(const fs::path& path) {
  if (!set_last_write_time(path, fs::file_time_type::clock::now()))
    return fail("cannot mark " + path.string() + " used");
  return {};
}

Expected<fs::path> RealFiles::resolve(const fs::path& path) const {
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(path, ec);
  if (ec) return cannot("resolve", path, ec);
  return resolved;
}

Expected<void> RealFiles::make_executable(const fs::path& path) {
  std::error_code ec;
#ifdef _WIN32
  // Windows runs any file by its name: the file need only be there.
  if (!fs::is_regular_file(path, ec))
    return cannot("make executable", path, std::make_error_code(std::errc::no_such_file_or_directory));
#else
  fs::permissions(path,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                      fs::perms::others_exec,
                  ec);
  if (ec) return cannot("make executable", path, ec);
#endif
  return {};
}

Expected<void> RealFiles::link(const fs::path& target, const fs::path& link) {
  const fs::path temp = link.parent_path() / (".~" + link.filename().string() + ".link");
  std::error_code ec;
  fs::remove(temp, ec);
  fs::create_symlink(target, temp, ec);
  if (!ec) fs::rename(temp, link, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    return cannot("link " + target.string() + " as", link, ec);
  }
  return {};
}

Expected<std::size_t> RealFiles::fix_modes(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) {
    return cannot("fix the modes under", dir, std::make_error_code(std::errc::not_a_directory));
  }
  std::size_t changed = 0;
#ifndef _WIN32
  constexpr fs::perms kRead =
      fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
  constexpr fs::perms kRun = fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec;
  const auto fix = [&](const fs::path& path, const fs::file_status& status) -> Expected<void> {
    const bool runs = fs::is_directory(status) || (status.permissions() & kRun) != fs::perms::none;
    const fs::perms wanted = runs ? kRead | kRun : kRead;
    if (status.permissions() == wanted) return {};
    fs::permissions(path, wanted, ec);
    if (ec) return cannot("set the mode of", path, ec);
    ++changed;
    return {};
  };
  if (auto done = fix(dir, fs::symlink_status(dir, ec)); !done) return tl::make_unexpected(done.error());
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::file_status status = it->symlink_status(ec);
    if (ec) break;
    if (fs::is_symlink(status) || !(fs::is_directory(status) || fs::is_regular_file(status))) continue;
    if (auto done = fix(it->path(), status); !done) return tl::make_unexpected(done.error());
  }
  if (ec) return cannot("fix the modes under", dir, ec);
#endif
  return changed;
}

}  // namespace fabuild
