#include "app/host_source.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "matrix/command.h"
#include "source/archive.h"
#include "source/cache.h"
#include "util/hash.h"
#include "util/holder_lock.h"

namespace fabuild {

namespace fs = std::filesystem;

HostSources::HostSources(const Plan& plan, Files& files) : plan_(plan), files_(files) {}

Expected<fs::path> HostSources::tree_for(const Cell& cell) {
  const SourceSpec& s = plan_.source_of(cell);
  const std::string key = cell.package->name + "|" + cell.version.str() + "|" + s.location;
  auto it = trees_.find(key);
  if (it == trees_.end()) it = trees_.emplace(key, make_tree(cell)).first;
  return it->second;
}

Expected<fs::path> HostSources::make_tree(const Cell& cell) {
  const SourceSpec& s = plan_.source_of(cell);
  const std::string where = s.where.str().empty() ? std::string() : s.where.str() + ": ";
  const std::string location = expand_placeholders(s.location, {{"version", cell.version.str()}});
  switch (s.kind) {
    case SourceSpec::Kind::kPip:
    case SourceSpec::Kind::kGit:
      return fs::path();  // each cell fetches it itself, into its own staging directory
    case SourceSpec::Kind::kPath: {
      const fs::path dir = fs::path(plan_.matrix_dir) / location;
      // The package's setup.py may sit below the root (FlashAttention 3: hopper/).
      const fs::path setup = dir / cell.package->source_subdir / "setup.py";
      if (!files_.exists(setup)) {
        return fail(fmt::format("{}source.path {} has no {}", where, dir.string(),
                                (fs::path(cell.package->source_subdir) / "setup.py").generic_string()),
                    cell.package->source_subdir.empty()
                        ? "name the directory that holds the package's setup.py"
                        : fmt::format("name the root of a checkout that holds {}/ (a recursive clone)",
                                      cell.package->source_subdir));
      }
      return files_.resolve(dir);
    }
    case SourceSpec::Kind::kSdist: {
      const bool url = location.find("://") != std::string::npos;
      fs::path archive = fs::path(plan_.matrix_dir) / location;
      if (url) {
        // Without a sha256 in the matrix, a URL's digest is the one published beside it.
        const Expected<std::string> digest = s.sha256.empty() ? sha256_beside(location) : s.sha256;
        Expected<fs::path> cached = digest.and_then(
            [&](const std::string& sha256) { return cached_download_in(plan_.cache_root, location, sha256); });
        if (!cached) return fail(where + cached.error().what);  // as the cell's FAILED line has said it
        archive = std::move(*cached);
      }
      const Expected<Sha256> sum = sha256_of_file(archive);
      if (!sum) return fail(where + sum.error().what, "check that the sdist the matrix names is there and readable");
      if (!url && !s.sha256.empty() && hex(*sum) != s.sha256) {
        return fail(fmt::format("{}{} does not have the sha256 the matrix gives", where, archive.string()));
      }
      const std::string digest = hex(*sum).substr(0, 16);
      const fs::path dest = plan_.cache_root / "sources" / (archive.filename().string() + "-" + digest);
      if (auto use = EntryUse::take(dest)) uses_.push_back(std::move(*use));
      // Another fabuild unpacking the same archive finishes first; the tree appears whole, in
      // one rename (extract_archive), or not at all.
      const Expected<HolderLock> making =
          HolderLock::take(entry_make_lock(dest), "unpacking " + archive.string(),
                           [&](const LockHolder& holder) { spdlog::info("waiting for {}", holder.describe()); });
      if (!making) return fail(where + making.error().what);
      const bool fresh = !files_.exists(dest);
      if (fresh) {
        if (auto done = extract_archive(archive, dest); !done)
          return fail(where + done.error().what, done.error().hint);
      }
      files_.touch(dest);  // marked used: trimmed by last use (util/entry_cache.h)
      // A tree no cell can build is not kept: the next run extracts it again, or is told why.
      const Expected<fs::path> root = sdist_root(dest);
      const fs::path setup = root ? *root / cell.package->source_subdir / "setup.py" : fs::path();
      if (root && files_.exists(setup)) return root;
      if (fresh) files_.remove_all(dest);
      if (!root) return fail(where + root.error().what, root.error().hint);
      return fail(fmt::format("{}{} has no {}", where, archive.string(),
                              (fs::path(cell.package->source_subdir) / "setup.py").generic_string()));
    }
  }
  return fail(where + "unknown source kind");
}

}  // namespace fabuild
