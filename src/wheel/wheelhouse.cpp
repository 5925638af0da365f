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
#include "wheel/build_record.h"

namespace fabuild {

bool is_filed_name(std::string_view name) {
  return (name.size() > 4 && name.ends_with(".whl")) || (name.size() > 7 && name.ends_with(".tar.gz"));
}

std::map<std::string, std::string> read_sha256sums(const std::filesystem::path& file) {
  std::map<std::string, std::string> sums;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const auto gap = line.find("  ");
    if (gap == 64) sums[line.substr(gap + 2)] = line.substr(0, gap);
  }
  return sums;
}

namespace {

namespace fs = std::filesystem;

UserError filing_error(const fs::path& path, const std::string& what) {
  return UserError(kExitCellFailed, Location{path.string()}, what,
                   "check that the wheelhouse is writable and its disk is not full");
}

// A wheel, a library cell's archive, or the build record beside one: the files SHA256SUMS covers.
bool is_filed(const fs::directory_entry& entry) {
  std::error_code ec;
  const std::string name = entry.path().filename().string();
  return entry.is_regular_file(ec) && !entry.is_symlink(ec) && name.front() != '.' &&
         (is_filed_name(name) || is_build_record_name(name));
}

// What dir/SHA256SUMS says now, so that filing one wheel need not re-read the others.
std::map<std::string, std::string> listed_sums(const fs::path& dir) { return read_sha256sums(dir / kSha256SumsName); }

// Covers exactly the wheels in `dir`. A digest comes from `known` (just computed), else from
// the current SHA256SUMS when `trust_listed`, else from reading the wheel.
std::string sums_text(const fs::path& dir, const std::map<std::string, std::string>& known, bool trust_listed) {
  const std::map<std::string, std::string> listed = trust_listed ? listed_sums(dir) : decltype(listed){};
  std::map<std::string, std::string> sums;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!is_filed(entry)) continue;
    const std::string name = entry.path().filename().string();
    if (auto k = known.find(name); k != known.end()) {
      sums[name] = k->second;
    } else if (auto l = listed.find(name); l != listed.end()) {
      sums[name] = l->second;
    } else {
      const Expected<Sha256> sum = sha256_of_file(entry.path());
      if (!sum) throw std::runtime_error(sum.error().what);
      sums[name] = hex(*sum);
    }
  }
  std::string text;
  for (const auto& [name, digest] : sums) text += fmt::format("{}  {}\n", digest, name);
  return text;
}

void rewrite_sums(const fs::path& dir, const std::map<std::string, std::string>& known, bool trust_listed) {
  write_file_atomically(dir / kSha256SumsName, sums_text(dir, known, trust_listed));
}

// Copies through an AtomicFile, hashing the bytes as they are written.
FiledFile copy_in(const fs::path& staged, const fs::path& target) {
  std::ifstream in(staged, std::ios::binary);
  if (!in) throw filing_error(staged, "cannot read the staged wheel");
  AtomicFile out(target);
  Sha256Hasher hasher;
  std::uint64_t size = 0;
  std::vector<char> buffer(1 << 16);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    const std::string_view chunk(buffer.data(), static_cast<std::size_t>(in.gcount()));
    out.write(chunk);
    hasher.update(chunk);
    size += chunk.size();
  }
  if (in.bad()) throw filing_error(staged, "error reading the staged wheel");
  out.commit();
  return FiledFile{target, hex(hasher.finish()), size};
}

}  // namespace

FiledFile file_wheel(const fs::path& staged, const fs::path& dest_dir, Transfer how) {
  std::error_code ec;
  if (!fs::is_regular_file(staged, ec)) throw filing_error(staged, "the staged wheel is not there");
  fs::create_directories(dest_dir, ec);
  if (ec) throw filing_error(dest_dir, "cannot create the directory: " + ec.message());

  const fs::path target = dest_dir / staged.filename();
  DirLock lock(dest_dir);
  FiledFile filed;
  if (how == Transfer::kMove) {
    // Hashed before the move: after it, the bytes are the same ones under another name.
    const Expected<Sha256> sum = sha256_of_file(staged);
    if (!sum) throw filing_error(staged, sum.error().what);
    filed = FiledFile{target, hex(*sum), fs::file_size(staged)};
    // rename(2) within one file system is already the atomic step (the SHA256SUMS commit
    // below syncs the directory); only a cross-device move needs the temporary copy.
    const Expected<bool> moved = replace_file_on_same_device(staged, target);
    if (!moved) throw filing_error(target, moved.error().what);
    if (!*moved) {
      filed = copy_in(staged, target);
      fs::remove(staged, ec);
    }
  } else {
    filed = copy_in(staged, target);
  }
  rewrite_sums(dest_dir, {{target.filename().string(), filed.sha256}}, true);
  return filed;
}

void write_sha256sums(const fs::path& dir) {
  DirLock lock(dir);
  rewrite_sums(dir, {}, false);
}

bool update_sha256sums_locked(const fs::path& dir, const std::map<std::string, std::string>& known) {
  const std::string text = sums_text(dir, known, true);
  std::ifstream in(dir / kSha256SumsName, std::ios::binary);
  const std::string now((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.is_open() && now == text) return false;
  write_file_atomically(dir / kSha256SumsName, text);
  return true;
}

}  // namespace fabuild
