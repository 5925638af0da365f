#include "app/torch_window.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <tuple>

#include <fmt/format.h>

#include "matrix/stable_cells.h"
#include "util/error.h"
#include "util/text.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

bool asks_index(const MatrixSpec& spec) {
  if (!spec.torch_ranges.empty()) return true;
  const bool wheels = std::any_of(spec.artifacts.begin(), spec.artifacts.end(),
                                  [](const auto& a) { return a.value == Artifact::kWheel; });
  return wheels && may_have_stable_cells(spec);
}

// torch_index as the build will use it: a URL as written, a directory from the matrix's.
std::string index_of(const MatrixSpec& spec, const Files& files) {
  const std::string& index = spec.torch_index;
  if (index.empty() || index.find("://") != std::string::npos) return index;
  const fs::path dir = fs::path(index).is_absolute() ? fs::path(index) : fs::absolute(spec.file).parent_path() / index;
  return files.resolve(dir).value_or(dir).string();
}

// The sub-indexes of a PyTorch-style index to ask: torch's CUDA builds the tables know of the
// matrix's CUDA majors (cu126, cu128, cu129 for 12.x).
std::vector<std::string> index_tags(const MatrixSpec& spec) {
  std::set<int> majors;
  for (const auto& set : spec.cuda) {
    if (set.value.backend == Backend::kCuda) majors.insert(set.value.toolkit.major());
  }
  std::set<Version> builds;
  for (const auto& [series, cudas] : spec.compat.torch_cuda) {
    for (const Version& v : cudas) {
      if (majors.count(v.major())) builds.insert(v);
    }
  }
  std::vector<std::string> tags;
  for (const Version& v : builds) tags.push_back(cu_tag(v));
  return tags;
}

// The Pythons the question is asked for: the oldest of the matrix's (an abi3 wheel is built with
// it) and its newest, not free-threaded. torch adds a Python at one end and drops one at the other
// (2.15 has no wheel for 3.10, 2.9 none for 3.14), so a release either has is found.
std::vector<PythonTag> asked_pythons(const MatrixSpec& spec) {
  std::optional<PythonTag> oldest;
  std::optional<PythonTag> newest;
  for (const auto& p : spec.python) {
    if (p.value.free_threaded) continue;
    if (!oldest || p.value < *oldest) oldest = p.value;
    if (!newest || *newest < p.value) newest = p.value;
  }
  if (!oldest) return {*PythonTag::parse("cp312")};
  if (*oldest == *newest) return {*oldest};
  return {*oldest, *newest};
}

// `more` added to `releases`: a release both have stays as the first found it (its oldest Python).
void add_releases(std::vector<TorchRelease>& releases, const std::vector<TorchRelease>& more) {
  for (const TorchRelease& t : more) {
    const bool known = std::any_of(releases.begin(), releases.end(), [&](const TorchRelease& r) {
      return r.version == t.version && r.cuda == t.cuda && r.index_tag == t.index_tag;
    });
    if (!known) releases.push_back(t);
  }
  std::sort(releases.begin(), releases.end(), [](const TorchRelease& a, const TorchRelease& b) {
    return std::tie(a.version, a.cuda, a.index_tag) < std::tie(b.version, b.cuda, b.index_tag);
  });
}

void teach_tables(MatrixSpec& spec, const TorchResolution& r) {
  for (const auto& [platform, releases] : r.releases) {
    if (platform != Platform::kLinuxX86_64 && r.releases.count(Platform::kLinuxX86_64)) continue;
    for (const TorchRelease& t : releases) {
      const Version series = t.version.series_version();
      if (spec.torch_index.empty()) {
        spec.compat.torch_pypi_cuda[series] = t.cuda;
        continue;
      }
      auto& builds = spec.compat.torch_cuda[series];
      if (std::find(builds.begin(), builds.end(), t.cuda) == builds.end()) {
        builds.push_back(t.cuda);
        std::sort(builds.begin(), builds.end());
      }
    }
  }
}

}  // namespace

TorchResolution resolve_torch(MatrixSpec& spec, const System& system, const std::optional<Version>& also_from) {
  TorchResolution r;
  for (const auto& t : spec.torch) r.named.insert(t.value.series());
  std::optional<Version> from;  // the oldest floor of the ranges, the stable floor, also_from
  for (const auto& range : spec.torch_ranges) {
    r.windows.push_back(range.value);
    if (!from || range.value.floor < *from) from = range.value.floor;
  }
  if (!asks_index(spec) && !also_from) return r;
  r.asked = true;
  const std::string index = index_of(spec, *system.files);
  r.index = index.empty() ? "pip's configured index" : index;
  if (spec.package->stable && (!from || spec.package->stable->floor < *from)) from = spec.package->stable->floor;
  if (also_from && (!from || *also_from < *from)) from = also_from;
  const std::string python = system.env.find_program("python3");
  if (python.empty()) {
    r.failed = "there is no python3 on PATH whose pip could ask it";
  } else {
    std::set<Platform> platforms;
    for (const auto& p : spec.platforms) platforms.insert(p.value);
    for (const Platform platform : platforms) {
      for (const PythonTag& asked : asked_pythons(spec)) {
        TorchIndexQuery query{
            python,   system.env.entries(),
            index,    index.find("://") != std::string::npos ? index_tags(spec) : std::vector<std::string>(),
            platform, asked,
            *from};
        auto found = list_torch_releases(*system.commands, query, system.cache_dir() / "torch-releases.json");
        if (!found) {
          r.failed = found.error().what;
          break;
        }
        add_releases(r.releases[platform], *found);
      }
      if (!r.failed.empty()) {
        r.releases.clear();
        break;
      }
    }
  }
  apply_releases(spec, r);
  return r;
}

void apply_releases(MatrixSpec& spec, TorchResolution& r) {
  for (const auto& range : spec.torch_ranges) {
    if (!r.failed.empty()) {
      throw config_error(range.where,
                         fmt::format("torch \"{}\" is resolved against the torch index ({}), which could not be "
                                     "asked: {}",
                                     range.value.str(), r.index, r.failed),
                         "name the series instead (torch: [\"2.11\", \"2.12\"]), or make the index reachable "
                         "(`pip config list` says which pip uses; torch_index: names another)");
    }
    std::set<Version> series;
    for (const auto& [platform, releases] : r.releases) {
      for (const TorchRelease& t : releases) {
        if (range.value.holds(t.version)) series.insert(t.version.series_version());
      }
    }
    std::vector<std::string> names;
    for (const Version& s : series) {
      names.push_back(s.str());
      const bool listed =
          std::any_of(spec.torch.begin(), spec.torch.end(), [&](const auto& t) { return t.value.str() == s.str(); });
      if (!listed) spec.torch.push_back({s, range.where});
    }
    r.ranges.emplace_back(range.value.str(), std::move(names));
  }
  teach_tables(spec, r);
}

namespace {

// The index's release of each series `wanted` picks, of the cell's platform and CUDA major; of
// several builds of one release (a PyTorch-style index), the cell's own CUDA, else the newest.
std::map<Version, TorchRelease> pick_releases(const Cell& cell, const TorchResolution& torch,
                                              const std::function<bool(const TorchRelease&)>& wanted) {
  const Version built_cuda = cell.wheel_cuda();
  std::map<Version, TorchRelease> by_series;
  const auto it = torch.releases.find(cell.platform);
  if (it == torch.releases.end()) return by_series;
  for (const TorchRelease& t : it->second) {
    if (t.cuda.major() != built_cuda.major() || !wanted(t)) continue;
    auto [at, fresh] = by_series.try_emplace(t.version.series_version(), t);
    if (!fresh && at->second.cuda != built_cuda && (t.cuda == built_cuda || at->second.cuda < t.cuda)) at->second = t;
  }
  return by_series;
}

// The Python a release is checked with for `cell`'s wheel: the wheel's own for a wheel of one
// Python; for an abi3 wheel, the one the release was found for where that is not older (an abi3
// wheel installs on every later Python).
TorchRelease checked_with(TorchRelease t, const Cell& cell) {
  if (!cell.abi3() || t.python < cell.python) t.python = cell.python;
  return t;
}

}  // namespace

std::vector<TorchRelease> sweep_of(const Cell& cell, const TorchResolution& torch) {
  if (!cell.stable()) return {};
  std::map<Version, TorchRelease> by_series = pick_releases(cell, torch, [&](const TorchRelease& t) {
    if (t.version < *cell.stable_floor) return false;
    return torch.named.count(t.version.series()) > 0 ||
           std::any_of(torch.windows.begin(), torch.windows.end(),
                       [&](const TorchRange& w) { return w.holds(t.version); });
  });
  const Version build_series = cell.torch.series_version();
  if (!by_series.count(build_series)) {
    by_series.emplace(build_series, TorchRelease{cell.torch, cell.wheel_cuda(), "", cell.python});
  }
  std::vector<TorchRelease> out;
  for (auto& [series, t] : by_series) out.push_back(checked_with(std::move(t), cell));
  return out;
}

std::vector<TorchRelease> releases_for(const Cell& cell, const TorchResolution& torch,
                                       const std::vector<std::string>& series, std::vector<std::string>& missing) {
  const std::map<Version, TorchRelease> by_series = pick_releases(cell, torch, [&](const TorchRelease& t) {
    return std::find(series.begin(), series.end(), t.version.series()) != series.end();
  });
  std::vector<TorchRelease> out;
  for (const std::string& s : series) {
    const auto it = by_series.find(*Version::parse(s));
    if (it == by_series.end()) {
      missing.push_back(s);
    } else {
      out.push_back(checked_with(it->second, cell));
    }
  }
  return out;
}

std::vector<std::string> empty_ranges(const TorchResolution& torch) {
  std::optional<Version> newest;
  for (const auto& [platform, releases] : torch.releases) {
    for (const TorchRelease& t : releases) {
      if (!newest || *newest < t.version) newest = t.version;
    }
  }
  std::vector<std::string> out;
  for (const auto& [range, series] : torch.ranges) {
    if (!series.empty() || !torch.failed.empty()) continue;
    out.push_back(fmt::format("torch \"{}\" holds no torch release {} has{}: it adds no cells until one is published",
                              range, torch.index, newest ? " (its newest is " + newest->str() + ")" : ""));
  }
  return out;
}

std::string describe_releases(const std::vector<TorchRelease>& releases, const std::optional<PythonTag>& python) {
  std::vector<std::string> parts;
  for (const TorchRelease& t : releases) {
    const bool other = python && t.python != *python;
    parts.push_back(fmt::format("{} ({}{})", t.version.str(), cu_tag(t.cuda), other ? ", with " + t.python.str() : ""));
  }
  return join(parts, ", ");
}

}  // namespace fabuild
