#include "wheel/wheelhouse.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <system_error>
#include <vector>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/read_whole.h"
#include "util/text.h"
#include "wheel/build_record.h"

namespace fabuild {

bool is_filed_name(std::string_view name) {
  return (name.size() > 4 && name.ends_with(".whl")) || (name.size() > 7 && name.ends_with(".tar.gz"));
}

namespace {

// Whether `file`, where SHA256SUMS goes, is a file or nothing: fabuild replaces nothing else.
Expected<void> sums_place(const std::filesystem::path& file) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(file, ec);
  if (!std::filesystem::exists(status) || std::filesystem::is_regular_file(status)) return {};
  const char* what = std::filesystem::is_directory(status) ? "a directory" : "not a regular file";
  return fail(printable(fmt::format("{}: {} is {}, not the list of sums fabuild writes there", file.string(),
                                    kSha256SumsName, what)),
              "remove it: fabuild writes SHA256SUMS again from the wheels beside it and manifest.json (the next "
              "build, or fabuild index)");
}

}  // namespace

Expected<std::map<std::string, std::string>> read_sha256sums(const std::filesystem::path& file) {
  if (auto place = sums_place(file); !place) return tl::make_unexpected(place.error());
  std::map<std::string, std::string> sums;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return sums;
  const std::optional<std::string> text = read_whole(file);
  if (!text) return fail(printable(file.string() + ": cannot read it"), "check the wheelhouse's permissions");
  for (const std::string& line : split(*text, '\n')) {
    const auto gap = line.find("  ");
    if (gap == 64) sums[line.substr(gap + 2)] = line.substr(0, gap);
  }
  return sums;
}

namespace {

namespace fs = std::filesystem;

tl::unexpected<Failure> filing_error(const fs::path& path, const std::string& what) {
  return fail(printable(path.string() + ": " + what), kWheelhouseWriteHint);
}

// A wheel, a library cell's archive, or the build record beside one: the files SHA256SUMS covers.
bool is_filed(const fs::directory_entry& entry) {
  std::error_code ec;
  const std::string name = entry.path().filename().string();
  return entry.is_regular_file(ec) && !entry.is_symlink(ec) && name.front() != '.' &&
         (is_filed_name(name) || is_build_record_name(name));
}

// Covers exactly the wheels in `dir`. A digest comes from `known` (just computed), else from
// the current SHA256SUMS when `trust_listed` (so that filing one wheel need not re-read the
// others), else from reading the wheel.
Expected<std::string> sums_text(const fs::path& dir, const std::map<std::string, std::string>& known,
                                bool trust_listed) {
  Expected<std::map<std::string, std::string>> listed =
      trust_listed ? read_sha256sums(dir / kSha256SumsName) : std::map<std::string, std::string>();
  if (!listed) return tl::make_unexpected(listed.error());
  std::map<std::string, std::string> sums;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (!is_filed(*it)) continue;
    const std::string name = it->path().filename().string();
    if (auto k = known.find(name); k != known.end()) {
      sums[name] = k->second;
    } else if (auto l = listed->find(name); l != listed->end()) {
      sums[name] = l->second;
    } else {
      const Expected<Sha256> sum = sha256_of_file(it->path());
      if (!sum) return tl::make_unexpected(sum.error());
      sums[name] = hex(*sum);
    }
  }
  if (ec) return filing_error(dir, "cannot list the directory: " + ec.message());
  std::string text;
  for (const auto& [name, digest] : sums) text += fmt::format("{}  {}\n", digest, name);
  return text;
}

Expected<void> write_sums(const fs::path& dir, const std::string& text) {
  if (auto place = sums_place(dir / kSha256SumsName); !place) return place;
  if (auto written = write_whole_file(dir / kSha256SumsName, text, {}, true); !written)
    return wheelhouse_write_failure(written.error());
  return {};
}

Expected<void> rewrite_sums(const fs::path& dir, const std::map<std::string, std::string>& known, bool trust_listed) {
  const Expected<std::string> text = sums_text(dir, known, trust_listed);
  if (!text) return tl::make_unexpected(text.error());
  return write_sums(dir, *text);
}

// Copies through an AtomicFile, hashing the bytes as they are written.
Expected<FiledFile> copy_in(const fs::path& staged, const fs::path& target) {
  std::ifstream in(staged, std::ios::binary);
  if (!in) return filing_error(staged, "cannot read the staged wheel");
  Expected<AtomicFile> out = AtomicFile::create(target);
  if (!out) return wheelhouse_write_failure(out.error());
  Sha256Hasher hasher;
  std::uint64_t size = 0;
  std::vector<char> buffer(1 << 16);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    const std::string_view chunk(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (auto written = out->try_write(chunk); !written) return wheelhouse_write_failure(written.error());
    hasher.update(chunk);
    size += chunk.size();
  }
  if (in.bad()) return filing_error(staged, "error reading the staged wheel");
  if (auto committed = out->try_commit(); !committed) return wheelhouse_write_failure(committed.error());
  return FiledFile{target, hex(hasher.finish()), size};
}

}  // namespace

Expected<FiledFile> file_wheel(const fs::path& staged, const fs::path& dest_dir, Transfer how) {
  std::error_code ec;
  if (!fs::is_regular_file(staged, ec)) return filing_error(staged, "the staged wheel is not there");
  fs::create_directories(dest_dir, ec);
  if (ec) return filing_error(dest_dir, "cannot create the directory: " + ec.message());

  const fs::path target = dest_dir / staged.filename();
  const Expected<DirLock> lock = DirLock::acquire(dest_dir);
  if (!lock) return tl::make_unexpected(lock.error());
  // Before the wheel moves: one in place that no SHA256SUMS could list would be published unlisted.
  if (auto place = sums_place(dest_dir / kSha256SumsName); !place) return tl::make_unexpected(place.error());
  Expected<FiledFile> filed;
  if (how == Transfer::kMove) {
    // Hashed before the move: after it, the bytes are the same ones under another name.
    const Expected<Sha256> sum = sha256_of_file(staged);
    if (!sum) return filing_error(staged, sum.error().what);
    const std::uintmax_t size = fs::file_size(staged, ec);
    if (ec) return filing_error(staged, "cannot read its size: " + ec.message());
    filed = FiledFile{target, hex(*sum), size};
    // rename(2) within one file system is already the atomic step (the SHA256SUMS commit
    // below syncs the directory); only a cross-device move needs the temporary copy.
    const Expected<bool> moved = replace_file_on_same_device(staged, target);
    if (!moved) return filing_error(target, moved.error().what);
    if (!*moved) {
      filed = copy_in(staged, target);
      if (filed) fs::remove(staged, ec);
    }
  } else {
    filed = copy_in(staged, target);
  }
  if (!filed) return filed;
  if (auto sums = rewrite_sums(dest_dir, {{target.filename().string(), filed->sha256}}, true); !sums) {
    return tl::make_unexpected(sums.error());
  }
  return filed;
}

Expected<void> write_sha256sums(const fs::path& dir) {
  const Expected<DirLock> lock = DirLock::acquire(dir);
  if (!lock) return tl::make_unexpected(lock.error());
  return rewrite_sums(dir, {}, false);
}

Expected<bool> update_sha256sums_locked(const fs::path& dir, const std::map<std::string, std::string>& known) {
  const Expected<std::string> text = sums_text(dir, known, true);
  if (!text) return tl::make_unexpected(text.error());
  // sums_text read it, so it is a file or nothing.
  if (read_whole(dir / kSha256SumsName) == *text) return false;
  if (auto written = write_sums(dir, *text); !written) return tl::make_unexpected(written.error());
  return true;
}

}  // namespace fabuild
