#include "wheel/merge_part.h"

#include <fmt/format.h>

#include <system_error>

#include "util/error.h"
#include "util/hash.h"
#include "wheel/build_record.h"
#include "wheel/wheelhouse.h"

namespace fabuild::merge_part {

namespace fs = std::filesystem;

namespace {

// What `fabuild index` makes (src/publish): files at the top (index.html, report.json,
// summary.md), index trees (simple/, <variant>/simple/) and "<wheel>.metadata".
bool generated(const std::string& rel) {
  return rel.find('/') == std::string::npos || rel.rfind("simple/", 0) == 0 ||
         rel.find("/simple/") != std::string::npos || rel.ends_with(".whl.metadata");
}

}  // namespace

Hashed hash_file(const fs::path& path) {
  const Expected<Sha256> sum = sha256_of_file(path);
  std::error_code ec;
  const auto size = sum ? fs::file_size(path, ec) : 0;
  if (!sum || ec) {
    throw UserError(kExitCellFailed, Location{path.string()},
                    fmt::format("cannot read it: {}", sum ? ec.message() : sum.error().what),
                    "check the file's permissions; nothing was written");
  }
  return Hashed{hex(*sum), size};
}

std::string dir_of(const std::string& rel) {
  const auto slash = rel.rfind('/');
  return slash == std::string::npos ? std::string() : rel.substr(0, slash);
}

std::string name_of(const std::string& rel) {
  const auto slash = rel.rfind('/');
  return slash == std::string::npos ? rel : rel.substr(slash + 1);
}

std::string join_rel(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

Part scan_part(const fs::path& root, const std::string& name, MergePlan& plan) {
  Part part{root, name, {}, {}, {}};
  std::error_code ec;
  fs::recursive_directory_iterator it(root, ec);
  if (ec) throw config_error(Location{}, fmt::format("merge: cannot read {}: {}", name, ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) throw config_error(Location{}, fmt::format("merge: cannot read {}: {}", name, ec.message()));
    const fs::directory_entry& entry = *it;
    const std::string rel = entry.path().lexically_relative(root).generic_string();
    const std::string file = entry.path().filename().string();
    if (file.front() == '.') {
      if (entry.is_directory(ec) && !entry.is_symlink(ec)) it.disable_recursion_pending();
      continue;  // .staging, temporary files, caches: never part of a wheelhouse
    }
    if (entry.is_symlink(ec)) {
      plan.left_out.push_back(fmt::format("{}/{}: a symbolic link", name, rel));
      continue;
    }
    if (entry.is_directory(ec)) continue;
    if (!entry.is_regular_file(ec)) {
      plan.left_out.push_back(fmt::format("{}/{}: not a regular file", name, rel));
      continue;
    }
    if (rel.rfind("logs/", 0) == 0) {
      part.logs.push_back(Found{rel, entry.path(), hash_file(entry.path())});
    } else if (rel == kManifestName) {
      // read below, through the manifest module
    } else if (file == kSha256SumsName) {
      if (Expected<std::map<std::string, std::string>> sums = read_sha256sums(entry.path()); sums) {
        part.sums[dir_of(rel)] = std::move(*sums);
      } else {
        plan.problems.push_back(fmt::format("{}: {}", name, sums.error().what));
      }
    } else if (is_filed_name(file)) {  // a wheel, or a library's archive
      part.wheels.push_back(Found{rel, entry.path(), hash_file(entry.path())});
    } else if (generated(rel) || is_build_record_name(file)) {  // a build record: made again from the manifest
      ++plan.regenerated;
    } else {
      plan.left_out.push_back(fmt::format("{}/{}: not a wheel", name, rel));
    }
  }
  return part;
}

void check_part(const Part& part, std::map<std::string, FiledWheel>& manifest, MergePlan& plan) {
  std::map<std::string, const Found*> by_rel;
  for (const auto& w : part.wheels) by_rel[w.rel] = &w;
  for (const auto& [dir, sums] : part.sums) {
    for (const auto& [wheel, digest] : sums) {
      if (is_build_record_name(wheel)) continue;  // made again from the merged manifest
      const auto it = by_rel.find(join_rel(dir, wheel));
      if (it == by_rel.end()) {
        plan.problems.push_back(
            fmt::format("{}: {} lists {}, which is not there", part.name, join_rel(dir, kSha256SumsName), wheel));
      } else if (it->second->hash.sha256 != digest) {
        plan.problems.push_back(fmt::format("{}: {} lists {} with sha256 {}, but the file's is {}", part.name,
                                            join_rel(dir, kSha256SumsName), wheel, digest, it->second->hash.sha256));
      }
    }
  }
  Expected<std::map<std::string, FiledWheel>> read = read_manifest(part.root);
  if (!read) {
    plan.problems.push_back(fmt::format("{}: {}", part.name, read.error().what));
    manifest.clear();
    return;
  }
  manifest = std::move(*read);
  for (const auto& [cell, entry] : manifest) {
    const auto it = by_rel.find(entry.wheel);
    if (it == by_rel.end()) {
      plan.problems.push_back(
          fmt::format("{}: {} files cell {} as {}, which is not there", part.name, kManifestName, cell, entry.wheel));
    } else if (it->second->hash.sha256 != entry.sha256 || it->second->hash.size != entry.size) {
      plan.problems.push_back(fmt::format("{}: {} files cell {} as {} with sha256 {}, but the file's is {}", part.name,
                                          kManifestName, cell, entry.wheel, entry.sha256, it->second->hash.sha256));
    }
  }
}

}  // namespace fabuild::merge_part
