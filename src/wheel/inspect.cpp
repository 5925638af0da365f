#include "wheel/inspect.h"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>

#include <map>
#include <memory>
#include <set>

#include "util/archive_paths.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/text.h"

namespace fabuild {

namespace {

constexpr std::string_view kDistInfoSuffix = ".dist-info";
constexpr std::size_t kChunk = 1 << 16;

using ArchivePtr = std::unique_ptr<archive, decltype(&archive_read_free)>;

constexpr std::string_view kRebuildHint = "the build wrote a broken wheel; rebuild the cell and look at its log";

// What is wrong with the wheel, as UserError would print it (its members' names are the
// archive's, not ours).
tl::unexpected<Failure> refused(const std::string& message, std::string hint = std::string(kRebuildHint)) {
  return fail(printable(message), std::move(hint));
}

std::string archive_message(archive* a) {
  const char* text = archive_error_string(a);
  return text != nullptr ? text : "unknown libarchive error";
}

// The top-level "X.dist-info" a member belongs to, or "".
std::string top_level_dist_info(const std::string& path) {
  const auto slash = path.find('/');
  if (slash == std::string::npos) return {};
  const std::string top = path.substr(0, slash);
  const bool is = top.size() > kDistInfoSuffix.size() &&
                  top.compare(top.size() - kDistInfoSuffix.size(), kDistInfoSuffix.size(), kDistInfoSuffix) == 0;
  return is ? top : std::string();
}

bool is_parsed_dist_info_file(const std::string& path, const std::string& dist_info) {
  if (dist_info.empty()) return false;
  const std::string file = path.substr(dist_info.size() + 1);
  return file == "METADATA" || file == "WHEEL" || file == "RECORD";
}

// Reads the current member in chunks, hashing as it goes; keeps its text only when asked.
// Counting the bytes actually inflated, not the sizes the zip claims, is what stops a bomb.
Expected<WheelMember> read_member(archive* a, const std::string& path, std::uint64_t& total,
                                  const InspectLimits& limits, std::string* keep) {
  Sha256Hasher hasher;
  std::uint64_t size = 0;
  std::vector<char> buffer(kChunk);
  while (true) {
    const la_ssize_t n = archive_read_data(a, buffer.data(), buffer.size());
    if (n == 0) break;
    if (n < 0) return refused(fmt::format("cannot read member {}: {}", path, archive_message(a)));
    const auto bytes = static_cast<std::uint64_t>(n);
    size += bytes;
    total += bytes;
    if (total > limits.max_total_bytes) {
      return refused(
          fmt::format("its members inflate to more than {} bytes (stopped at {}); refusing a likely zip bomb",
                      limits.max_total_bytes, path));
    }
    if (keep != nullptr) {
      if (size > limits.max_dist_info_file_bytes) {
        return refused(fmt::format("{} is larger than {} bytes", path, limits.max_dist_info_file_bytes));
      }
      keep->append(buffer.data(), static_cast<std::size_t>(n));
    }
    hasher.update(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
  }
  return WheelMember{path, size, base64url_nopad(hasher.finish())};
}

}  // namespace

Expected<void> safe_member_path(const std::string& path) {
  if (path.empty()) return fail("the path is empty");
  if (path.front() == '/') return fail("the path is absolute");
  if (path.find('\\') != std::string::npos) return fail("the path contains a backslash");
  if (path.size() >= 2 && path[1] == ':') return fail("the path starts with a drive letter");
  std::string_view rest(path);
  if (rest.back() == '/') rest.remove_suffix(1);  // a directory entry
  for (const auto& part : split(rest, '/')) {
    if (part.empty()) return fail("the path has an empty component");
    if (part == "." || part == "..") return fail(fmt::format("the path has a \"{}\" component", part));
  }
  return {};
}

const WheelMember* WheelContents::find(const std::string& path) const {
  for (const auto& m : members) {
    if (m.path == path) return &m;
  }
  return nullptr;
}

std::string WheelContents::dist_info_path(const std::string& file) const { return dist_info + "/" + file; }

std::vector<std::string> WheelContents::tags() const {
  return wheel ? expand_tags(wheel->all("Tag")) : std::vector<std::string>{};
}

std::optional<bool> WheelContents::root_is_purelib() const {
  if (!wheel) return std::nullopt;
  const auto value = wheel->first("Root-Is-Purelib");
  if (!value) return std::nullopt;
  const std::string v = to_lower(*value);
  if (v == "true") return true;
  if (v == "false") return false;
  return std::nullopt;
}

Expected<WheelContents> inspect_wheel(const std::filesystem::path& wheel, const InspectLimits& limits) {
  ArchivePtr a(archive_read_new(), &archive_read_free);
  if (!a) return fail("libarchive: cannot allocate a reader");
  archive_read_support_format_zip(a.get());  // a wheel is a zip and nothing else
  if (open_archive_file(a.get(), wheel, kChunk) != ARCHIVE_OK) {
    return refused(fmt::format("cannot open it as a zip archive: {}", archive_message(a.get())),
                   "a .whl must be a zip file; rebuild the cell");
  }

  WheelContents contents;
  std::set<std::string> seen;
  std::set<std::string> dist_infos;
  std::map<std::string, std::string> kept;  // "X.dist-info/METADATA" etc. -> text
  std::uint64_t total = 0;
  while (true) {
    archive_entry* entry = nullptr;
    const int status = archive_read_next_header(a.get(), &entry);
    if (status == ARCHIVE_EOF) break;
    if (status < ARCHIVE_WARN) {
      return refused(fmt::format("it is not a readable zip archive: {}", archive_message(a.get())),
                     "a .whl must be a zip file; rebuild the cell");
    }
    const char* raw = archive_entry_pathname(entry);
    const std::string path = raw != nullptr ? raw : "";
    if (const Expected<void> safe = safe_member_path(path); !safe) {
      return refused(fmt::format("member \"{}\" is unsafe to install: {}", path, safe.error().what),
                     "never install this wheel; rebuild the cell from a clean source tree");
    }
    if (!seen.insert(path).second) {
      return refused(fmt::format("member \"{}\" appears twice; installers would pick one silently", path));
    }
    if (seen.size() > limits.max_members) {
      return refused(fmt::format("it has more than {} members", limits.max_members));
    }
    const auto type = archive_entry_filetype(entry);
    if (type == AE_IFDIR) continue;
    if (type != AE_IFREG) {
      return refused(
          fmt::format("member \"{}\" is not a regular file (a link or device); wheels hold files only", path));
    }
    if (archive_entry_size_is_set(entry) != 0 &&
        static_cast<std::uint64_t>(archive_entry_size(entry)) > limits.max_total_bytes) {
      return refused(fmt::format("member \"{}\" claims {} bytes, more than the {} byte cap; refusing a likely zip bomb",
                                 path, archive_entry_size(entry), limits.max_total_bytes));
    }
    const std::string dist_info = top_level_dist_info(path);
    if (!dist_info.empty()) dist_infos.insert(dist_info);
    std::string* keep = is_parsed_dist_info_file(path, dist_info) ? &kept[path] : nullptr;
    Expected<WheelMember> member = read_member(a.get(), path, total, limits, keep);
    if (!member) return tl::make_unexpected(member.error());
    contents.members.push_back(std::move(*member));
  }

  if (dist_infos.empty()) return refused("it has no top-level .dist-info directory, so it is not a wheel");
  if (dist_infos.size() > 1) {
    return refused(fmt::format("it has {} .dist-info directories ({}); a wheel has exactly one", dist_infos.size(),
                               join(std::vector<std::string>(dist_infos.begin(), dist_infos.end()))));
  }
  contents.dist_info = *dist_infos.begin();
  if (auto it = kept.find(contents.dist_info_path("METADATA")); it != kept.end()) {
    contents.metadata = parse_headers(it->second);
    contents.metadata_text = it->second;
  }
  if (auto it = kept.find(contents.dist_info_path("WHEEL")); it != kept.end()) {
    contents.wheel = parse_headers(it->second);
  }
  if (auto it = kept.find(contents.dist_info_path("RECORD")); it != kept.end()) {
    contents.record = parse_record(it->second);
  }
  return contents;
}

}  // namespace fabuild
