#include "wheel/library_archive.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "util/archive_paths.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

using WritePtr = std::unique_ptr<struct archive, decltype(&archive_write_free)>;
using ReadPtr = std::unique_ptr<struct archive, decltype(&archive_read_free)>;
using EntryPtr = std::unique_ptr<struct archive_entry, decltype(&archive_entry_free)>;

tl::unexpected<Failure> pack_error(const fs::path& where, const std::string& what) {
  return fail(printable(where.string() + ": " + what),
              "check that the staging directory is readable and its disk is not full");
}

Expected<void> check(struct archive* a, int status, const fs::path& where, const std::string& doing) {
  if (status < ARCHIVE_WARN) return pack_error(where, fmt::format("{}: {}", doing, archive_error_string(a)));
  return {};
}

// What is under `dir`, by path relative to it, in byte order: the order of the archive.
Expected<std::vector<fs::path>> members_of(const fs::path& dir) {
  std::vector<fs::path> paths;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    paths.push_back(it->path().lexically_relative(dir));
  }
  if (ec) return pack_error(dir, "cannot list the directory: " + ec.message());
  std::sort(paths.begin(), paths.end(),
            [](const fs::path& a, const fs::path& b) { return a.generic_string() < b.generic_string(); });
  return paths;
}

// A link may point anywhere inside the tree (lib/libflash_attn.so -> libflash_attn.so.1), never out.
Expected<void> check_link(const fs::path& dir, const fs::path& rel, const fs::path& target) {
  const fs::path resolved = (dir / rel).parent_path() / target;
  const fs::path inside = resolved.lexically_normal().lexically_relative(dir.lexically_normal());
  if (target.is_absolute() || inside.empty() || *inside.begin() == "..") {
    return pack_error(dir / rel, fmt::format("a symbolic link to {}, outside the library's tree", target.string()));
  }
  return {};
}

Expected<void> write_member(struct archive* a, const fs::path& dir, const fs::path& rel, const std::string& top,
                            const fs::path& out) {
  const fs::path path = dir / rel;
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  if (ec) return pack_error(path, "cannot read it: " + ec.message());
  EntryPtr entry(archive_entry_new(), &archive_entry_free);
  archive_entry_set_pathname(entry.get(), (top + "/" + rel.generic_string()).c_str());
  archive_entry_set_mtime(entry.get(), kLibraryArchiveMtime, 0);
  archive_entry_set_uid(entry.get(), 0);
  archive_entry_set_gid(entry.get(), 0);
  const bool executable = (status.permissions() & fs::perms::owner_exec) != fs::perms::none;
  std::string data;
  if (fs::is_symlink(status)) {
    const fs::path target = fs::read_symlink(path, ec);
    if (ec) return pack_error(path, "cannot read the link: " + ec.message());
    if (auto inside = check_link(dir, rel, target); !inside) return inside;
    archive_entry_set_filetype(entry.get(), AE_IFLNK);
    archive_entry_set_perm(entry.get(), 0777);
    archive_entry_set_symlink(entry.get(), target.generic_string().c_str());
  } else if (fs::is_directory(status)) {
    archive_entry_set_filetype(entry.get(), AE_IFDIR);
    archive_entry_set_perm(entry.get(), 0755);
  } else if (fs::is_regular_file(status)) {
    std::ifstream in(path, std::ios::binary);
    data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) return pack_error(path, "cannot read it");
    archive_entry_set_filetype(entry.get(), AE_IFREG);
    archive_entry_set_perm(entry.get(), executable ? 0755 : 0644);
    archive_entry_set_size(entry.get(), static_cast<la_int64_t>(data.size()));
  } else {
    return pack_error(path, "neither a file, a directory nor a symbolic link: a library's tree holds none of those");
  }
  if (auto written =
          check(a, archive_write_header(a, entry.get()), out, "writing the header of " + rel.generic_string());
      !written) {
    return written;
  }
  if (!data.empty() && archive_write_data(a, data.data(), data.size()) != static_cast<la_ssize_t>(data.size())) {
    return pack_error(out, fmt::format("writing {}: {}", rel.generic_string(), archive_error_string(a)));
  }
  return {};
}

// libarchive writes through this into an AtomicFile: the archive appears whole or not at all.
la_ssize_t write_to(struct archive*, void* file, const void* buffer, size_t length) {
  if (!static_cast<AtomicFile*>(file)->try_write(std::string_view(static_cast<const char*>(buffer), length))) return -1;
  return static_cast<la_ssize_t>(length);
}

// The whole archive into `file`: the top directory, then each member in order.
Expected<void> write_archive(struct archive* a, AtomicFile& file, const fs::path& dir,
                             const std::vector<fs::path>& members, const std::string& top, const fs::path& out) {
  // ustar where it suffices, pax headers only for what ustar cannot say (long names): no
  // access or change times in them.
  if (auto done = check(a, archive_write_set_format_pax_restricted(a), out, "choosing the tar format"); !done)
    return done;
  if (auto done = check(a, archive_write_add_filter_gzip(a), out, "choosing gzip"); !done) return done;
  if (auto done = check(a, archive_write_set_options(a, "gzip:!timestamp"), out, "leaving the time out of gzip"); !done)
    return done;
  if (auto done =
          check(a, archive_write_open2(a, &file, nullptr, write_to, nullptr, nullptr), out, "creating the archive");
      !done) {
    return done;
  }
  EntryPtr root(archive_entry_new(), &archive_entry_free);
  archive_entry_set_pathname(root.get(), top.c_str());
  archive_entry_set_filetype(root.get(), AE_IFDIR);
  archive_entry_set_perm(root.get(), 0755);
  archive_entry_set_mtime(root.get(), kLibraryArchiveMtime, 0);
  if (auto done = check(a, archive_write_header(a, root.get()), out, "writing the top directory"); !done) return done;
  for (const fs::path& rel : members) {
    if (auto done = write_member(a, dir, rel, top, out); !done) return done;
  }
  return check(a, archive_write_close(a), out, "finishing the archive");
}

}  // namespace

Expected<void> pack_library_archive(const fs::path& dir, const std::string& top, const fs::path& out) {
  const Expected<std::vector<fs::path>> members = members_of(dir);
  if (!members) return tl::make_unexpected(members.error());
  Expected<AtomicFile> file = AtomicFile::create(out);
  if (!file) return tl::make_unexpected(file.error());
  {
    WritePtr a(archive_write_new(), &archive_write_free);
    if (auto written = write_archive(a.get(), *file, dir, *members, top, out); !written) return written;
  }
  return file->try_commit();
}

Expected<std::vector<ArchiveMember>> list_archive(const fs::path& archive) {
  ReadPtr a(archive_read_new(), &archive_read_free);
  archive_read_support_filter_all(a.get());
  archive_read_support_format_all(a.get());
  if (open_archive_file(a.get(), archive, 1 << 16) != ARCHIVE_OK) {
    return fail(
        printable(fmt::format("{}: cannot read the archive: {}", archive.string(), archive_error_string(a.get()))));
  }
  std::vector<ArchiveMember> members;
  struct archive_entry* entry = nullptr;
  int status = 0;
  while ((status = archive_read_next_header(a.get(), &entry)) == ARCHIVE_OK) {
    ArchiveMember m;
    m.path = archive_entry_pathname(entry);
    const auto type = archive_entry_filetype(entry);
    m.kind = type == AE_IFREG   ? ArchiveMember::Kind::kFile
             : type == AE_IFDIR ? ArchiveMember::Kind::kDirectory
             : type == AE_IFLNK ? ArchiveMember::Kind::kSymlink
                                : ArchiveMember::Kind::kOther;
    if (const char* link = archive_entry_symlink(entry)) m.link = link;
    m.size = static_cast<std::uint64_t>(archive_entry_size(entry));
    m.mode = static_cast<int>(archive_entry_perm(entry));
    m.mtime = archive_entry_mtime(entry);
    m.uid = archive_entry_uid(entry);
    m.gid = archive_entry_gid(entry);
    members.push_back(std::move(m));
  }
  if (status != ARCHIVE_EOF) {
    return fail(
        printable(fmt::format("{}: the archive is damaged: {}", archive.string(), archive_error_string(a.get()))));
  }
  return members;
}

}  // namespace fabuild
