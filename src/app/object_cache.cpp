#include "app/object_cache.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "engine/forecast.h"
#include "matrix/select.h"
#include "objcache/protocol.h"
#include "objcache/store.h"
#include "util/byte_size.h"
#include "util/entry_cache.h"
#include "util/error.h"
#include "util/text.h"
#include "util/windows_command_line.h"

namespace fabuild {

namespace fs = std::filesystem;

ObjectCacheSettings object_cache_settings(const CacheSpec& spec, const Options& options, const std::string& matrix_dir,
                                          const fs::path& cache_root) {
  ObjectCacheSettings s;
  if (options.no_cache) {
    s.enabled = false;
    s.off_because = "--no-cache";
  } else if (spec.enabled == false) {
    s.enabled = false;
    s.off_because = fmt::format("cache: false in {}", spec.where.str());
  }
  if (options.cache_dir) {
    s.dir = fs::absolute(*options.cache_dir).lexically_normal().string();
  } else if (!spec.dir.empty()) {
    const fs::path dir(spec.dir);
    s.dir = (dir.is_absolute() ? dir : fs::path(matrix_dir) / dir).lexically_normal().string();
  } else if (s.enabled) {
    s.dir = (cache_root / "objects").string();
  }
  if (!options.cache_size.empty()) {
    const auto bytes = parse_byte_size(options.cache_size);
    if (!bytes || *bytes == 0) {
      throw config_error(Location{}, fmt::format("--cache-size {}: not a size", options.cache_size),
                         "e.g. --cache-size 20G, 500M or 1.5GiB");
    }
    s.max_bytes = *bytes;
  } else if (spec.max_bytes) {
    s.max_bytes = *spec.max_bytes;
  }
  return s;
}

namespace {

// Where a cell's compiles are counted: in its staging directory, so also inside its container.
std::string tally_path(const CellRun& run) { return (fs::path(run.staging_dir) / objcache::kTallyFile).string(); }

// Adds the whole lines of `text` (a part of a tally file) to `tally`.
void add_tally_lines(CacheTally& t, std::string_view text);

}  // namespace

std::shared_ptr<CellCompiles> use_object_cache(CellRun& run, const ObjectCacheSettings& settings,
                                               const CcWrapper& wrapper, const std::string& cuda_home,
                                               const std::string& python_env, std::vector<Mount>* mounts,
                                               std::shared_ptr<const Files> files) {
  auto compiles = std::make_shared<CellCompiles>(tally_path(run), std::move(files));
  const auto set_in_cell = [&](const std::string& name) {
    return std::any_of(run.env.begin(), run.env.end(), [&](const auto& kv) { return kv.first == name; });
  };
  bool wrapped = false;
  if (!set_in_cell("PYTORCH_NVCC")) {
    // ninja runs it as written: through CreateProcessW on Windows (quoted: C:\Program Files\...).
    const std::string nvcc = (fs::path(cuda_home) / "bin" / (wrapper.windows ? "nvcc.exe" : "nvcc")).string();
    run.env.emplace_back("PYTORCH_NVCC",
                         wrapper.windows ? windows_command_line({wrapper.cc, nvcc}) : wrapper.cc + " " + nvcc);
    wrapped = true;
  }
  if (!wrapper.cxx.empty() && !set_in_cell("CXX")) {
    run.env.emplace_back("CXX", wrapper.cxx);
    run.env.emplace_back(objcache::wrapper_env::kCxx, "c++");
    wrapped = true;
  }
  if (!wrapped) return compiles;  // no compile of it is counted: an empty tally
  run.env.emplace_back(objcache::wrapper_env::kDir, settings.dir);
  run.env.emplace_back(objcache::wrapper_env::kTally, tally_path(run));
  run.env.emplace_back(objcache::wrapper_env::kBaseDir, run.staging_dir);  // mapped out of compiles (normal_form.h)
  if (!python_env.empty()) run.env.emplace_back(objcache::wrapper_env::kEnvDir, python_env);  // ...as is this
  if (mounts != nullptr) {  // the caller made settings.dir
    mounts->push_back(Mount{settings.dir, settings.dir, false});
    mounts->push_back(Mount{wrapper.bin_dir, wrapper.bin_dir, true});
  }
  return compiles;
}

CmakeLaunchers use_object_cache_for_cmake(CellRun& run, const ObjectCacheSettings& settings, const CcWrapper& wrapper,
                                          std::shared_ptr<const Files> files) {
  run.env.emplace_back(objcache::wrapper_env::kDir, settings.dir);
  run.env.emplace_back(objcache::wrapper_env::kTally, tally_path(run));
  run.env.emplace_back(objcache::wrapper_env::kBaseDir, run.staging_dir);
  return {{"-DCMAKE_CUDA_COMPILER_LAUNCHER=" + wrapper.cc, "-DCMAKE_CXX_COMPILER_LAUNCHER=" + wrapper.cc},
          std::make_shared<CellCompiles>(tally_path(run), std::move(files))};
}

std::map<std::string, std::uint64_t> CacheTally::as_map() const {
  return {{"hits", hits},
          {"misses", misses},
          {"uncacheable", uncacheable},
          {"errors", errors},
          {"stored_bytes", stored_bytes},
          {"hit_bytes", hit_bytes}};
}

namespace {

void add_tally_lines(CacheTally& t, std::string_view text) {
  for (const std::string& text_line : split(std::string(text), '\n')) {
    const auto line = objcache::parse_tally_line(text_line);
    if (!line) continue;
    if (!line->source.empty()) t.sources.push_back(line->source);
    const bool used = line->outcome == "hit" || line->outcome == "miss";
    if (used && !line->manifest_key.empty() && !line->result_key.empty()) {
      t.objects.emplace_back(line->manifest_key, line->result_key);
    }
    if (line->outcome == "miss" && line->wall_ms) {  // a line of an older fabuild-cc has no costs
      t.costs.push_back({line->source, *line->wall_ms, *line->cpu_ms, *line->peak_kb, line->busy_pct});
    }
    if (line->gate_wait_ms >= 0) {  // a compile under the memory gate
      t.gate_wait_ms += static_cast<std::uint64_t>(line->gate_wait_ms);
      ++t.gated;
    }
    if (line->outcome == "hit") {
      ++t.hits;
      t.hit_bytes += line->bytes;
      continue;
    }
    if (line->outcome == "placeholder") {
      ++t.placeholders;
      continue;
    }
    t.not_hits.push_back(fmt::format("{} {}: {}", line->outcome, line->source.empty() ? "?" : line->source,
                                     line->detail.empty() ? "?" : line->detail));
    if (line->outcome == "miss") {
      ++t.misses;
      t.stored_bytes += line->bytes;
    } else if (line->outcome == "uncacheable") {
      ++t.uncacheable;
    } else if (line->outcome == "error") {
      ++t.errors;
    }
  }
}

}  // namespace

CellCompiles::CellCompiles(std::string file, std::shared_ptr<const Files> files)
    : file_(std::move(file)), files_(std::move(files)) {}

CellCompiles::CellCompiles(CacheTally known) : tally_(std::move(known)), settled_(true) {}

void CellCompiles::read_more() {
  // What fabuild-cc added since the last look, not the whole file again.
  const Expected<std::string> chunk = files_->read_from(file_, offset_);
  if (!chunk || chunk->empty()) return;  // none yet, or nothing new
  offset_ += chunk->size();
  partial_ += *chunk;
  const auto last_nl = partial_.rfind('\n');
  if (last_nl == std::string::npos) return;
  add_tally_lines(tally_, std::string_view(partial_).substr(0, last_nl + 1));
  partial_.erase(0, last_nl + 1);
}

CacheTally CellCompiles::read_new() {
  std::lock_guard lock(mutex_);
  if (!settled_) read_more();
  return tally_;
}

const CacheTally& CellCompiles::after_build() {
  std::lock_guard lock(mutex_);
  if (!settled_) {
    read_more();
    add_tally_lines(tally_, partial_);  // a last line without its newline counts as fabuild-cc wrote it
    partial_.clear();
    settled_ = true;
  }
  return tally_;
}

const CacheTally& CellCompiles::for_entry() {
  const CacheTally& whole = after_build();
  std::lock_guard lock(mutex_);
  in_entry_ = true;
  return whole;
}

void CellCompiles::restart() {
  std::lock_guard lock(mutex_);
  if (!file_.empty()) {
    read_more();  // to the end of the file: the first build's lines are skipped
    partial_.clear();
    const std::uint64_t restarts = tally_.restarts + 1;
    tally_ = CacheTally{};
    tally_.restarts = restarts;
  }
  settled_ = false;
}

bool CellCompiles::in_entry() const {
  std::lock_guard lock(mutex_);
  return in_entry_;
}

ObjectCacheReport object_cache_report(const std::map<std::string, std::shared_ptr<CellCompiles>>& cells) {
  ObjectCacheReport report;
  for (const auto& [id, compiles] : cells) {
    if (compiles && compiles->in_entry()) report.cells[id] = compiles->after_build();
  }
  return report;
}

void log_cache_tally(Files& files, const CacheTally& tally, const std::string& log_path) {
  std::string log =
      fmt::format("fabuild: object cache: {} of {} compiles from the cache\n", tally.hits, tally.compiles());
  for (const std::string& line : tally.not_hits) log += fmt::format("fabuild: object cache: {}\n", line);
  if (tally.gated > 0) {
    log += fmt::format("fabuild: memory gate: {} compiles waited {:.1f} s in all for their memory\n", tally.gated,
                       static_cast<double>(tally.gate_wait_ms) / 1000);
  }
  files.append(log_path, log);
}

void first_of_each_row_first(std::vector<CellRun>& runs, const std::vector<std::string>& rows) {
  const auto after = after_first_of_row(rows);
  for (std::size_t k = 0; k < runs.size() && k < after.size(); ++k) runs[k].demand.after = after[k];
}

void finish_entry_caches(const fs::path& cache_root, std::ostream& out) {
  using std::chrono::hours;
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  struct Kind {
    const char* dir;
    const char* name;
    EntryCacheLimits limits;
  };
  // Sources and downloads come back from their archive or URL; a toolkit or an environment
  // takes minutes and gigabytes to make again, so their bounds are wide (an environment with
  // torch is ~2.7 GB: 60 GB holds ~22), but they are bounds: a matrix over many Pythons and torch
  // series must not fill the disk. One used within the day is kept whatever the size.
  const Kind kinds[] = {{"sources", "sources", {20 * kGiB, hours(24 * 30)}},
                        {"downloads", "downloads", {10 * kGiB, hours(24 * 30)}},
                        {"toolkits", "toolkits", {20 * kGiB, hours(24 * 60)}},
                        {"venvs", "environments", {60 * kGiB, hours(24 * 30)}}};
  std::vector<std::string> parts;
  std::size_t removed = 0;
  std::uint64_t removed_bytes = 0;
  for (const Kind& k : kinds) {
    const EntryCacheReport r = trim_entry_cache(cache_root / k.dir, k.limits);
    removed += r.removed;
    removed_bytes += r.removed_bytes;
    if (r.entries > 0) parts.push_back(fmt::format("{} {} ({})", k.name, format_bytes(r.bytes), r.entries));
  }
  if (parts.empty() && removed == 0) return;
  std::string line = fmt::format("caches in {}: {}", cache_root.string(), parts.empty() ? "empty" : join(parts, ", "));
  if (removed > 0)
    line += fmt::format("; removed {} unused for long or over their size, {}", removed, format_bytes(removed_bytes));
  fmt::print(out, "{}\n", line);
}

void finish_object_cache(const ObjectCacheSettings& settings, const ObjectCacheReport& report, std::ostream& out) {
  const objcache::TrimReport trimmed = objcache::trim(settings.dir, settings.max_bytes);
  if (report.cells.empty()) return;
  std::size_t width = 4;
  for (const auto& [id, t] : report.cells) width = std::max(width, id.size());
  fmt::print(out, "\n{:<{}}  {:>6}  {:>6}  {:>8}\n", "OBJECT CACHE", width, "HITS", "MISSES", "STORED");
  CacheTally total;
  for (const auto& [id, t] : report.cells) {
    fmt::print(out, "{:<{}}  {:>6}  {:>6}  {:>8}\n", id, width, t.hits, t.misses + t.uncacheable + t.errors,
               format_bytes(t.stored_bytes));
    total.hits += t.hits;
    total.misses += t.misses;
    total.uncacheable += t.uncacheable;
    total.errors += t.errors;
    total.stored_bytes += t.stored_bytes;
  }
  const std::uint64_t compiles = total.compiles();
  std::string line =
      fmt::format("{} of {} compiles from the cache ({:.0f} %), {} stored", total.hits, compiles,
                  compiles == 0 ? 0.0 : 100.0 * static_cast<double>(total.hits) / static_cast<double>(compiles),
                  format_bytes(total.stored_bytes));
  if (total.uncacheable > 0) line += fmt::format(", {} not cacheable", total.uncacheable);
  if (total.errors > 0)
    line +=
        fmt::format(", {} cache errors (see {} in docs/performance.md)", total.errors, objcache::wrapper_env::kTally);
  line += fmt::format("; {} holds {} of {}", settings.dir, format_bytes(trimmed.bytes_after),
                      format_bytes(settings.max_bytes));
  if (trimmed.files_removed > 0) {
    line += fmt::format(" (trimmed {} least recently used files, {})", trimmed.files_removed,
                        format_bytes(trimmed.bytes_before - trimmed.bytes_after));
  }
  fmt::print(out, "{}\n", line);
}

}  // namespace fabuild
