#include "objcache/probation.h"

#include <algorithm>
#include <sstream>
#include <system_error>

#include "util/dir_lock.h"
#include "util/file.h"

namespace fabuild::objcache {

namespace fs = std::filesystem;

namespace {

// Only paths of the cache's own two kinds, below it: the list is read back from disk.
bool cache_path(const std::string& path) {
  if (!path.starts_with("results/") && !path.starts_with("manifests/")) return false;
  return path.find("..") == std::string::npos && path.find('\\') == std::string::npos;
}

}  // namespace

Probation::Probation(const Store& store, const std::string& row_key)
    : store_(store), dir_(store.dir() / "probation"), file_(dir_ / row_key) {}

std::string Probation::path_of(const fs::path& file) const {
  return file.lexically_relative(store_.dir()).generic_string();
}

std::vector<std::string> Probation::read() const {
  std::vector<std::string> paths;
  const auto text = read_whole(file_);
  if (!text) return paths;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    if (cache_path(line)) paths.push_back(line);
  }
  return paths;
}

Expected<void> Probation::write(const std::vector<std::string>& paths) const {
  std::error_code ec;
  if (paths.empty()) {
    fs::remove(file_, ec);
    if (ec && fs::exists(file_)) return fail("cannot remove " + file_.string() + ": " + ec.message());
    return {};
  }
  std::string text;
  for (const std::string& p : paths) text += p + "\n";
  return write_whole_file(file_, text, store_.dir() / "tmp");
}

Expected<void> Probation::add(const std::vector<std::string>& paths) const {
  if (paths.empty()) return {};
  std::error_code ec;
  fs::create_directories(dir_, ec);
  const Expected<DirectoryLock> lock = DirectoryLock::acquire(dir_);
  if (!lock) return tl::make_unexpected(lock.error());
  std::vector<std::string> listed = read();
  const std::set<std::string> known(listed.begin(), listed.end());
  for (const std::string& p : paths) {
    if (cache_path(p) && !known.contains(p)) listed.push_back(p);
  }
  return write(listed);
}

std::vector<std::string> Probation::paths() const { return read(); }

Expected<std::size_t> Probation::prove(const std::set<std::string>& proven) const {
  std::error_code ec;
  if (!fs::exists(file_, ec)) return std::size_t{0};
  const Expected<DirectoryLock> lock = DirectoryLock::acquire(dir_);
  if (!lock) return tl::make_unexpected(lock.error());
  std::vector<std::string> listed = read();
  std::erase_if(listed, [&](const std::string& p) { return proven.contains(p); });
  if (auto written = write(listed); !written) return tl::make_unexpected(written.error());
  return listed.size();
}

Expected<std::vector<std::string>> Probation::evict() const {
  std::error_code ec;
  if (!fs::exists(file_, ec)) return std::vector<std::string>{};
  const Expected<DirectoryLock> lock = DirectoryLock::acquire(dir_);
  if (!lock) return tl::make_unexpected(lock.error());
  std::vector<std::string> removed;
  for (const std::string& p : read()) {
    if (fs::remove(store_.dir() / p, ec)) removed.push_back(p);
  }
  // The objects are gone; a list left behind names only missing files, which the next
  // eviction passes over.
  if (auto written = write({}); !written) return tl::make_unexpected(written.error());
  return removed;
}

}  // namespace fabuild::objcache
