#include "publish/grid.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "publish/html.h"
#include "util/error.h"
#include "util/text.h"
#include "wheel/manifest.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

// "fa2.8.3/torch2.8" and "cu128" of "fa2.8.3/torch2.8/cu128" ("fa2.8.3/torch2.8/minimal" for
// a profile's "fa2.8.3/torch2.8/cu128/minimal"); a directory outside the layout is a row of its own.
std::pair<std::string, std::string> row_and_accelerator(const std::string& dir) {
  if (is_library_dir(dir)) {  // fa3.0.0/lib/cu130/minimal: row fa3.0.0/lib/minimal, column cu130
    const std::vector<std::string> parts = split(dir, '/');
    return {parts[0] + "/lib/" + parts[3], parts[2]};
  }
  if (!variant_of_dir(dir).empty()) {
    const std::vector<std::string> parts = split(dir, '/');
    std::string row = parts[0] + "/" + parts[1];
    if (parts.size() == 4) row += "/" + parts[3];
    return {row, parts[2]};
  }
  return {dir.empty() ? std::string(".") : dir, "-"};
}

std::string python_of(const WheelName& n) { return n.abi_tag == "abi3" ? n.python_tag + "-abi3" : n.python_tag; }

class Builder {
 public:
  Builder(const fs::path& wheelhouse, const Catalog& catalog) : wheelhouse_(wheelhouse) {
    for (const auto& w : catalog.wheels) by_path_[w.path] = &w;
    for (const auto& l : catalog.libraries) libraries_[l.path] = &l;
  }

  // A library cell's record or manifest entry: its archive as published, if it is.
  void add_library(GridEntry e, const std::string& path, bool failed, bool built, const std::string& dir) {
    const auto it = libraries_.find(path);
    e.library = it == libraries_.end() ? nullptr : it->second;
    e.state = failed ? BuildState::kFailed : built && e.library != nullptr ? BuildState::kBuilt : BuildState::kNotBuilt;
    if (e.state == BuildState::kNotBuilt && e.detail.empty()) {
      e.detail = e.library == nullptr && built ? "its library is no longer in the wheelhouse" : e.status;
    }
    if (e.library != nullptr) claimed_.insert(e.library->path);
    place(dir.empty() && e.library != nullptr ? e.library->dir() : dir, "lib", std::move(e));
  }

  void add_record(const CellRecord& r, const std::map<std::string, FiledCell>& filed) {
    if (!seen_.insert(r.id).second) return;
    GridEntry e;
    e.id = r.id;
    e.status = r.status;
    e.detail = r.detail;
    e.build_s = r.duration_s;
    e.max_jobs = r.max_jobs;
    e.nvcc_threads = r.nvcc_threads;
    e.toolchain = r.toolchain;
    e.platform = r.platform;
    e.run = r.run;
    e.needs = r.needs;
    // Its proofs as the manifest has them now (a later run may have checked it under another torch).
    if (auto f = filed.find(r.id); f != filed.end()) {
      e.gpu_code = f->second.gpu_code;
      e.stable_floor = f->second.stable_floor;
      e.torch_proofs = f->second.torch_proofs;
    } else {
      e.stable_floor = r.stable_floor;
      e.torch_proofs = r.torch_proofs;
    }
    if (!r.log.empty() && fs::exists(wheelhouse_ / r.log)) e.log = r.log;
    if (r.library) {
      std::string path = r.wheel;
      if (auto f = filed.find(r.id); path.empty() && f != filed.end()) path = f->second.wheel;
      return add_library(std::move(e), path, r.failed(), r.built(), r.dir);
    }
    e.wheel = published(r.wheel);
    if (e.wheel == nullptr) {
      // A cell that failed now may still have the wheel an earlier run filed.
      if (auto f = filed.find(r.id); f != filed.end()) e.wheel = published(f->second.wheel);
    }
    if (r.failed()) {
      e.state = BuildState::kFailed;
    } else if (r.built() && e.wheel != nullptr) {
      e.state = BuildState::kBuilt;
    } else {
      e.state = BuildState::kNotBuilt;
      if (e.detail.empty() && r.built()) {
        e.detail = r.wheel.empty() ? "it filed no wheel" : "its wheel is no longer in the wheelhouse";
      } else if (e.detail.empty()) {
        e.detail = r.status;
      }
    }
    if (e.wheel != nullptr) claimed_.insert(e.wheel->path);
    place(r.dir, r.python, std::move(e));
  }

  void add_filed(const std::string& id, const FiledCell& f) {
    if (!seen_.insert(id).second) return;
    if (f.library) {
      if (libraries_.count(f.wheel) == 0) return;  // filed once, gone now
      GridEntry e;
      e.id = id;
      e.status = "filed";
      e.build_s = f.build_seconds;
      if (const std::string log = "logs/" + id + ".log"; fs::exists(wheelhouse_ / log)) e.log = log;
      return add_library(std::move(e), f.wheel, false, true, "");
    }
    const CatalogWheel* w = published(f.wheel);
    if (w == nullptr) return;  // filed once, gone now: nothing to show but the manifest's memory
    GridEntry e;
    e.id = id;
    e.state = BuildState::kBuilt;
    e.status = "filed";
    e.wheel = w;
    e.build_s = f.build_seconds;
    e.toolchain = f.toolchain;
    e.needs = f.needs;
    e.gpu_code = f.gpu_code;
    e.stable_floor = f.stable_floor;
    e.torch_proofs = f.torch_proofs;
    e.platform = w->name.platform_tag;
    if (const std::string log = "logs/" + id + ".log"; fs::exists(wheelhouse_ / log)) e.log = log;
    claimed_.insert(w->path);
    place(w->dir(), python_of(w->name), std::move(e));
  }

  void add_unclaimed(const Catalog& catalog) {
    for (const auto& l : catalog.libraries) {
      if (claimed_.count(l.path) != 0) continue;
      GridEntry e;
      e.id = l.file_name();
      e.status = "filed";
      add_library(std::move(e), l.path, false, true, "");
    }
    for (const auto& w : catalog.wheels) {
      if (claimed_.count(w.path) != 0) continue;
      GridEntry e;
      e.id = w.file_name();
      e.state = BuildState::kBuilt;
      e.status = "filed";
      e.wheel = &w;
      e.platform = w.name.platform_tag;
      place(w.dir(), python_of(w.name), std::move(e));
    }
  }

  Grid finish() {
    Grid grid;
    std::set<std::string> rows;
    std::set<std::string> cols;
    for (const auto& p : placed_) {
      rows.insert(p.row);
      cols.insert(p.col);
    }
    grid.rows.assign(rows.begin(), rows.end());
    grid.columns.assign(cols.begin(), cols.end());
    std::sort(grid.rows.begin(), grid.rows.end(), [](const auto& a, const auto& b) { return natural_less(a, b); });
    std::sort(grid.columns.begin(), grid.columns.end(),
              [](const auto& a, const auto& b) { return natural_less(a, b); });
    const auto index = [](const std::vector<std::string>& v, const std::string& s) {
      return static_cast<std::size_t>(std::find(v.begin(), v.end(), s) - v.begin());
    };
    for (auto& p : placed_)
      grid.entries[{index(grid.rows, p.row), index(grid.columns, p.col)}].push_back(std::move(p.entry));
    for (auto& [key, list] : grid.entries) {
      std::sort(list.begin(), list.end(),
                [](const GridEntry& a, const GridEntry& b) { return natural_less(a.id, b.id); });
    }
    return grid;
  }

 private:
  struct Placed {
    std::string row;
    std::string col;
    GridEntry entry;
  };

  const CatalogWheel* published(const std::string& path) const {
    const auto it = by_path_.find(path);
    return it == by_path_.end() ? nullptr : it->second;
  }

  void place(const std::string& dir, const std::string& python, GridEntry e) {
    const auto [row, acc] = row_and_accelerator(dir);
    placed_.push_back(Placed{row, acc + "/" + (python.empty() ? "-" : python), std::move(e)});
  }

  fs::path wheelhouse_;
  std::map<std::string, const CatalogWheel*> by_path_;
  std::map<std::string, const CatalogLibrary*> libraries_;
  std::set<std::string> seen_;
  std::set<std::string> claimed_;
  std::vector<Placed> placed_;
};

}  // namespace

std::map<std::string, FiledCell> filed_cells(const std::map<std::string, FiledWheel>& manifest) {
  std::map<std::string, FiledCell> cells;
  for (const auto& [id, entry] : manifest) {
    FiledCell c;
    c.library = entry.library;
    c.wheel = entry.wheel;
    c.build_seconds = entry.build_seconds;
    c.toolchain = entry.image;
    c.versions = entry.versions;
    c.needs = entry.needs;
    c.gpu_code = entry.gpu_code;
    c.stable_floor = entry.stable_floor;
    c.torch_proofs = entry.torch_proofs;
    cells.emplace(id, std::move(c));
  }
  return cells;
}

Grid make_grid(const fs::path& wheelhouse, const std::vector<CellRecord>& records,
               const std::map<std::string, FiledCell>& filed, const Catalog& catalog) {
  Builder b(wheelhouse, catalog);
  for (const auto& r : records) b.add_record(r, filed);
  for (const auto& [id, f] : filed) b.add_filed(id, f);
  b.add_unclaimed(catalog);
  return b.finish();
}

std::array<std::size_t, 3> count_states(const Grid& grid) {
  std::array<std::size_t, 3> n{0, 0, 0};
  for (const auto& [key, list] : grid.entries) {
    for (const auto& e : list) ++n[static_cast<std::size_t>(e.state)];
  }
  return n;
}

}  // namespace fabuild
