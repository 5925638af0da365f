#include "wheel/merge.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/hash.h"
#include "wheel/build_record.h"
#include "wheel/manifest.h"
#include "wheel/merge_part.h"
#include "wheel/wheelhouse.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;
using namespace merge_part;  // NOLINT(google-build-using-namespace): the parts this file merges

// "logs/x.log" -> "logs/x.part2.log": where a part's log goes when another one has its name.
std::string beside(const std::string& rel, std::size_t part_number) {
  const std::string dir = dir_of(rel);
  const std::string name = name_of(rel);
  const auto dot = name.rfind('.');
  const std::string stem = dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
  const std::string ext = dot == std::string::npos || dot == 0 ? std::string() : name.substr(dot);
  return join_rel(dir, fmt::format("{}.part{}{}", stem, part_number, ext));
}

// What the output holds at `rel`, hashed once.
class OutputFiles {
 public:
  explicit OutputFiles(fs::path out) : out_(std::move(out)) {}
  // nullopt when there is nothing there; "" for something that is not a regular file.
  std::optional<std::string> digest(const std::string& rel) {
    if (const auto it = cache_.find(rel); it != cache_.end()) return it->second;
    const fs::path path = out_ / rel;
    std::error_code ec;
    std::optional<std::string> d;
    if (fs::is_regular_file(fs::symlink_status(path, ec))) {
      d = hash_file(path).sha256;
    } else if (fs::exists(fs::symlink_status(path, ec))) {
      d = std::string();
    }
    cache_[rel] = d;
    return d;
  }

 private:
  fs::path out_;
  std::map<std::string, std::optional<std::string>> cache_;
};

void merge_wheels(const std::vector<Part>& parts, OutputFiles& output, const std::string& out_name, MergePlan& plan) {
  std::map<std::string, std::pair<std::size_t, const Part*>> seen;  // rel -> index in plan.wheels, part
  for (const auto& part : parts) {
    for (const auto& w : part.wheels) {
      const auto it = seen.find(w.rel);
      if (it == seen.end()) {
        seen.emplace(w.rel, std::make_pair(plan.wheels.size(), &part));
        plan.wheels.push_back(MergeFile{w.rel, w.path, w.hash.sha256, w.hash.size, false});
        continue;
      }
      const MergeFile& first = plan.wheels[it->second.first];
      if (first.sha256 == w.hash.sha256) {
        plan.duplicates.push_back(fmt::format("{}: identical in {} and {}", w.rel, it->second.second->name, part.name));
      } else {
        plan.conflicts.push_back(
            MergeConflict{w.rel, it->second.second->name, first.sha256, part.name, w.hash.sha256, ""});
      }
    }
  }
  for (auto& w : plan.wheels) {
    const auto there = output.digest(w.rel);
    if (!there) continue;
    if (*there == w.sha256) {
      w.present = true;
    } else {
      plan.conflicts.push_back(MergeConflict{w.rel, out_name + " (already there)",
                                             there->empty() ? "(not a file)" : *there, seen.at(w.rel).second->name,
                                             w.sha256, ""});
    }
  }
}

// For a cell filed twice: the wheels its two entries name, when they are not the same path.
std::string wheels_named(const FiledWheel& first, const FiledWheel& second) {
  return first.wheel == second.wheel ? std::string() : fmt::format("{} vs {}", first.wheel, second.wheel);
}

// A cell whose wheel several parts filed (a build job and its verify jobs): every proof they hold,
// and the output's when it has the same wheel.
void gather_proofs(const std::map<std::string, std::vector<const FiledWheel*>>& gathered,
                   const std::map<std::string, std::pair<const Part*, const FiledWheel*>>& seen,
                   const std::map<std::string, FiledWheel>& existing, MergePlan& plan) {
  for (auto& cell : plan.cells) {
    const auto also = gathered.find(cell.id);
    if (also == gathered.end()) continue;
    const FiledWheel& taken = *seen.at(cell.id).second;
    std::vector<FiledWheel::TorchProof> all = taken.torch_proofs;
    for (const FiledWheel* other : also->second) merge_proofs(all, other->torch_proofs);
    // What the output holds for the cell afterwards without this: its own entry, or the taken one.
    const auto& now = cell.present ? existing.at(cell.id).torch_proofs : taken.torch_proofs;
    if (all == now) continue;
    cell.proofs = std::move(all);
    cell.present = false;  // written again, with every proof
  }
}

void merge_cells(const std::vector<Part>& parts, const std::vector<std::map<std::string, FiledWheel>>& manifests,
                 const fs::path& out, const std::string& out_name, MergePlan& plan) {
  std::map<std::string, std::pair<const Part*, const FiledWheel*>> seen;
  std::map<std::string, std::vector<const FiledWheel*>> gathered;  // the same wheel filed again: their proofs
  for (std::size_t i = 0; i < parts.size(); ++i) {
    for (const auto& [id, entry] : manifests[i]) {
      const auto it = seen.find(id);
      if (it == seen.end()) {
        seen.emplace(id, std::make_pair(&parts[i], &entry));
        plan.cells.push_back(MergeCell{id, parts[i].root, false, "", std::nullopt});
        continue;
      }
      const FiledWheel& first = *it->second.second;
      if (first.wheel == entry.wheel && first.sha256 == entry.sha256) {
        plan.duplicates.push_back(
            fmt::format("cell {}: the same wheel in {} and {}", id, it->second.first->name, parts[i].name));
        gathered[id].push_back(&entry);
      } else {
        plan.conflicts.push_back(MergeConflict{"cell " + id, it->second.first->name, first.sha256, parts[i].name,
                                               entry.sha256, wheels_named(first, entry)});
      }
    }
  }
  const std::map<std::string, FiledWheel> existing = manifest_entries(out);
  for (auto& cell : plan.cells) {
    const auto there = existing.find(cell.id);
    if (there == existing.end()) continue;
    const FiledWheel& incoming = *seen.at(cell.id).second;
    if (there->second.wheel == incoming.wheel && there->second.sha256 == incoming.sha256) {
      cell.present = true;
      gathered[cell.id].push_back(&there->second);
    } else if (check_filed(out, there->second) == FiledState::kMissing) {
      cell.stale_sha256 = there->second.sha256;
      plan.notes.push_back(
          fmt::format("cell {}: {}'s manifest names {}, which is not there; the entry from {} replaces it", cell.id,
                      out_name, there->second.wheel, seen.at(cell.id).first->name));
    } else {
      plan.conflicts.push_back(MergeConflict{"cell " + cell.id, out_name + " (already there)", there->second.sha256,
                                             seen.at(cell.id).first->name, incoming.sha256,
                                             wheels_named(there->second, incoming)});
    }
  }
  gather_proofs(gathered, seen, existing, plan);
}

// Logs never conflict: the first of a name is kept, a different one goes beside it.
void merge_logs(const std::vector<Part>& parts, const std::vector<std::size_t>& numbers, OutputFiles& output,
                MergePlan& plan) {
  std::map<std::string, std::string> planned;  // rel -> digest
  const auto digest_at = [&](const std::string& rel) -> std::optional<std::string> {
    if (const auto it = planned.find(rel); it != planned.end()) return it->second;
    return output.digest(rel);
  };
  for (std::size_t i = 0; i < parts.size(); ++i) {
    for (const auto& log : parts[i].logs) {
      std::string target = log.rel;
      auto there = digest_at(target);
      if (there && *there == log.hash.sha256) continue;
      if (there) {
        target = beside(log.rel, numbers[i]);
        there = digest_at(target);
        if (there && *there == log.hash.sha256) continue;
      }
      planned[target] = log.hash.sha256;
      plan.logs.push_back(MergeFile{target, log.path, log.hash.sha256, log.hash.size, false});
    }
  }
}

tl::unexpected<Failure> merge_error(const fs::path& path, const std::string& what) {
  return fail(printable(path.string() + ": " + what),
              "something else changed the files while merging; run the merge again");
}

// Copies `from` to `to` through a temporary file, checking the bytes against `sha256`.
Expected<void> copy_checked(const fs::path& from, const fs::path& to, const std::string& sha256, bool keep_other) {
  std::error_code ec;
  if (keep_other && fs::exists(fs::symlink_status(to, ec))) {
    if (fs::is_regular_file(fs::symlink_status(to, ec)) && hash_file(to).sha256 == sha256) return {};
    return merge_error(to, "a different file appeared here during the merge; it is left as it is");
  }
  std::ifstream in(from, std::ios::binary);
  if (!in) return merge_error(from, "cannot read it any more");
  Expected<AtomicFile> out = AtomicFile::create(to);
  if (!out) return wheelhouse_write_failure(out.error());
  Sha256Hasher hasher;
  std::vector<char> buffer(1 << 20);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    const std::string_view chunk(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (auto written = out->try_write(chunk); !written) return wheelhouse_write_failure(written.error());
    hasher.update(chunk);
  }
  if (in.bad()) return merge_error(from, "error reading it");
  if (hex(hasher.finish()) != sha256)
    return merge_error(from, "it changed since the merge checked it; it was not copied");
  if (auto committed = out->try_commit(); !committed) return wheelhouse_write_failure(committed.error());
  return {};
}

}  // namespace

MergePlan plan_merge(const std::vector<fs::path>& part_paths, const fs::path& out) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec)) {
    throw config_error(Location{}, fmt::format("merge: the output {} is not a directory", out.string()),
                       "give -o a wheelhouse directory (it is created if missing)");
  }
  MergePlan plan;
  plan.out = out;
  const std::string out_name = out.string();
  std::vector<Part> parts;
  std::vector<std::size_t> numbers;  // 1-based position on the command line
  std::set<fs::path> seen;
  for (std::size_t i = 0; i < part_paths.size(); ++i) {
    const fs::path& p = part_paths[i];
    if (!fs::is_directory(p, ec)) {
      throw config_error(Location{}, fmt::format("merge: the part {} is not a directory", p.string()),
                         "each PART is a wheelhouse directory, as a build's -o made it");
    }
    const fs::path canonical = fs::canonical(p, ec);
    if (fs::exists(out, ec) && fs::equivalent(p, out, ec)) {
      plan.notes.push_back(fmt::format("{} is the output itself: what it holds stays", p.string()));
      continue;
    }
    if (!seen.insert(canonical).second) {
      plan.notes.push_back(fmt::format("{} is given twice: merged once", p.string()));
      continue;
    }
    plan.parts.push_back(p);
    parts.push_back(scan_part(p, p.string(), plan));
    numbers.push_back(i + 1);
  }
  std::vector<std::map<std::string, FiledWheel>> manifests(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    check_part(parts[i], manifests[i], plan);
    if (parts[i].wheels.empty()) plan.notes.push_back(fmt::format("{} holds no wheel", parts[i].name));
  }
  OutputFiles output(out);
  merge_wheels(parts, output, out_name, plan);
  merge_cells(parts, manifests, out, out_name, plan);
  merge_logs(parts, numbers, output, plan);
  return plan;
}

Expected<MergeResult> apply_merge(const MergePlan& plan) {
  if (plan.refused()) throw std::logic_error("apply_merge: the plan is refused");
  MergeResult result;
  std::error_code ec;
  fs::create_directories(plan.out, ec);
  if (ec) return merge_error(plan.out, "cannot create it: " + ec.message());

  std::map<std::string, std::vector<const MergeFile*>> by_dir;
  for (const auto& w : plan.wheels) by_dir[dir_of(w.rel)].push_back(&w);
  for (const auto& [dir, wheels] : by_dir) {
    const fs::path target = plan.out / dir;
    fs::create_directories(target, ec);
    if (ec) return merge_error(target, "cannot create the directory: " + ec.message());
    const Expected<DirLock> lock = DirLock::acquire(target);
    if (!lock) return tl::make_unexpected(lock.error());
    std::map<std::string, std::string> known;
    for (const MergeFile* w : wheels) {
      known[name_of(w->rel)] = w->sha256;
      if (w->present) continue;
      if (auto copied = copy_checked(w->from, plan.out / w->rel, w->sha256, true); !copied) {
        return tl::make_unexpected(copied.error());
      }
      ++result.wheels_copied;
    }
    const Expected<bool> sums = update_sha256sums_locked(target, known);
    if (!sums) return tl::make_unexpected(sums.error());
    if (*sums) ++result.sums_written;
  }

  for (const auto& log : plan.logs) {
    fs::create_directories((plan.out / log.rel).parent_path(), ec);
    if (auto copied = copy_checked(log.from, plan.out / log.rel, log.sha256, false); !copied) {
      return tl::make_unexpected(copied.error());
    }
    ++result.logs_copied;
  }

  std::vector<FiledCopy> copies;
  for (const auto& cell : plan.cells) {
    if (!cell.present) copies.push_back(FiledCopy{cell.from, cell.id, cell.stale_sha256, cell.proofs});
  }
  if (!copies.empty()) {
    const Expected<std::size_t> added = copy_filed(plan.out, copies);
    if (!added) return tl::make_unexpected(added.error());
    result.cells_added = *added;
  }
  return result;
}

}  // namespace fabuild
