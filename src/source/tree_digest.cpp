#include "source/tree_digest.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace fabuild {

Expected<Sha256> tree_sha256(const Files& files, const std::filesystem::path& dir) {
  const auto skip = [](const std::filesystem::path& d) {
    const std::string name = d.filename().string();
    return name == ".git" || name == ".hg" || name == ".svn";
  };
  const Expected<std::vector<std::filesystem::path>> found = files.files_under(dir, skip);
  if (!found) return tl::make_unexpected(found.error());
  // By the bytes of the relative paths, as `LC_ALL=C sort` orders them (not by path element).
  std::vector<std::pair<std::string, std::filesystem::path>> sorted;
  for (const auto& path : *found) sorted.emplace_back(path.lexically_relative(dir).generic_string(), path);
  std::sort(sorted.begin(), sorted.end());
  std::string lines;
  for (const auto& [relative, path] : sorted) {
    const Expected<Sha256> sum = files.sha256(path);  // streamed: a large file is not held whole
    if (!sum) return tl::make_unexpected(sum.error());
    lines += fmt::format("{}  {}\n", hex(*sum), relative);
  }
  return sha256_of(lines);
}

}  // namespace fabuild
