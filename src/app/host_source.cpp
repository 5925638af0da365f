#include "app/host_source.h"

#include <fmt/format.h>

#include "matrix/command.h"
#include "source/archive.h"
#include "source/cache.h"
#include "util/hash.h"

namespace fabuild {

namespace fs = std::filesystem;

HostSources::HostSources(const Plan& plan) : plan_(plan) {}

std::optional<fs::path> HostSources::tree_for(const Cell& cell, std::string& error) {
  const std::string key = cell.version.str();
  if (const auto it = trees_.find(key); it != trees_.end()) {
    error = it->second.second;
    return it->second.first;
  }
  auto tree = make_tree(cell, error);
  trees_[key] = {tree, error};
  return tree;
}

std::optional<fs::path> HostSources::make_tree(const Cell& cell, std::string& error) {
  const SourceSpec& s = plan_.source;
  const std::string where = s.where.str().empty() ? std::string() : s.where.str() + ": ";
  const std::string location = expand_placeholders(s.location, {{"version", cell.version.str()}});
  try {
    switch (s.kind) {
      case SourceSpec::Kind::kPip:
      case SourceSpec::Kind::kGit:
        return fs::path();  // each cell fetches it itself, into its own staging directory
      case SourceSpec::Kind::kPath: {
        const fs::path dir = fs::path(plan_.matrix_dir) / location;
        if (!fs::exists(dir / "setup.py")) {
          error = fmt::format("{}source.path {} has no setup.py", where, dir.string());
          return std::nullopt;
        }
        return fs::canonical(dir);
      }
      case SourceSpec::Kind::kSdist: {
        const bool url = location.find("://") != std::string::npos;
        // Without a sha256 in the matrix, a URL's digest is the one published beside it.
        fs::path archive = url ? cached_download(location, s.sha256.empty() ? sha256_beside(location) : s.sha256)
                               : fs::path(plan_.matrix_dir) / location;
        if (!url && !s.sha256.empty() && hex(sha256_of_file(archive)) != s.sha256) {
          error = fmt::format("{}{} does not have the sha256 the matrix gives", where, archive.string());
          return std::nullopt;
        }
        const std::string digest = hex(sha256_of_file(archive)).substr(0, 16);
        const fs::path dest = cache_dir() / "sources" / (archive.filename().string() + "-" + digest);
        if (!fs::exists(dest)) extract_archive(archive, dest);
        return sdist_root(dest);
      }
    }
  } catch (const std::exception& e) {
    error = where + e.what();
  }
  return std::nullopt;
}

}  // namespace fabuild
