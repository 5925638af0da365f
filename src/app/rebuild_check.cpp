#include "app/rebuild_check.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <map>
#include <set>

#include "app/build.h"
#include "util/error.h"
#include "wheel/build_record.h"
#include "wheel/inspect.h"
#include "wheel/manifest.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

// A wheel's members, path -> sha256; a wheel that cannot be read is a UserError naming it.
std::map<std::string, std::string> member_digests(const fs::path& wheel) {
  const Expected<WheelContents> contents = inspect_wheel(wheel);
  if (!contents)
    throw UserError(kExitCellFailed, Location{wheel.string()}, contents.error().what, contents.error().hint);
  std::map<std::string, std::string> digests;
  for (const auto& m : contents->members) digests[m.path] = m.sha256;
  return digests;
}

// The members of two wheels that differ, by path: "x.so (sha256 ab12… → cd34…)", "only in ...".
std::vector<std::string> differing_members(const fs::path& filed, const fs::path& rebuilt) {
  const std::map<std::string, std::string> a = member_digests(filed);
  const std::map<std::string, std::string> b = member_digests(rebuilt);
  std::vector<std::string> out;
  for (const auto& [path, sha] : a) {
    const auto other = b.find(path);
    if (other == b.end()) {
      out.push_back(path + " (only in the filed wheel)");
    } else if (other->second != sha) {
      out.push_back(fmt::format("{} ({}… → {}…)", path, sha.substr(0, 12), other->second.substr(0, 12)));
    }
  }
  for (const auto& [path, sha] : b) {
    if (!a.count(path)) out.push_back(path + " (only in the rebuilt wheel)");
  }
  return out;
}

}  // namespace

ExitCode rebuild_check(Plan plan, Options options, const System& system, std::ostream& out) {
  const fs::path house(plan.wheelhouse);
  const std::map<std::string, FiledWheel> filed = manifest_entries(house);
  std::vector<PlannedCell> cells;
  for (auto& c : plan.cells) {
    const auto it = filed.find(c.id);
    if (it != filed.end() && !it->second.library) cells.push_back(std::move(c));
  }
  if (cells.empty()) {
    spdlog::error("--rebuild-check: none of the {} selected cells is filed in {}", plan.cells.size(), plan.wheelhouse);
    return kExitNoCellSelected;
  }
  plan.cells = std::move(cells);
  const fs::path scratch = house / kRebuildCheckDir;
  (void)system.files->remove_all(scratch);  // a previous check's; what cannot go is rebuilt over
  plan.wheelhouse = scratch.string();
  plan.cache.enabled = true;  // through fabuild-cc, which makes nvcc's objects reproducible; all misses
  plan.cache.dir = (scratch / "objects").string();
  plan.cache.off_because.clear();
  plan.remote_cache = RemoteCacheSettings{};
  options.force = true;
  fmt::print(out, "rebuild-check: building {} filed cell{} again into {}, every unit compiled anew\n",
             plan.cells.size(), plan.cells.size() == 1 ? "" : "s", scratch.string());
  const ExitCode built = build(plan, options, system, out);
  const std::map<std::string, FiledWheel> rebuilt = manifest_entries(scratch);
  std::size_t same = 0;
  std::size_t differ = 0;
  for (const PlannedCell& c : plan.cells) {
    const FiledWheel& was = filed.at(c.id);
    const auto now = rebuilt.find(c.id);
    if (now == rebuilt.end()) {
      ++differ;
      fmt::print(out, "rebuild-check: {}: not rebuilt (its log: {}/logs/{}.log)\n", c.id, scratch.string(), c.id);
      continue;
    }
    if (now->second.sha256 == was.sha256) {
      ++same;
      fmt::print(out, "rebuild-check: {}: the same bytes (sha256 {})\n", c.id, was.sha256);
      continue;
    }
    ++differ;
    const auto members = differing_members(house / was.wheel, scratch / now->second.wheel);
    fmt::print(
        out, "rebuild-check: {}: differs (sha256 {} filed, {} rebuilt): {}\n", c.id, was.sha256, now->second.sha256,
        members.empty() ? std::string("every member the same; the zip around them differs (times, order or modes)")
                        : fmt::format("{}", fmt::join(members, "; ")));
    const std::vector<std::string> inputs = build_record_differences(was.build, now->second.build);
    if (!inputs.empty()) {
      fmt::print(out, "rebuild-check: {}: not the same inputs, as their build records say: {}\n", c.id,
                 fmt::join(inputs, "; "));
    }
  }
  fmt::print(out, "rebuild-check: {} of {} the same bytes{}\n", same, plan.cells.size(),
             differ > 0 ? fmt::format("; the rebuilt wheels are in {}", scratch.string()) : "");
  if (differ == 0 && built == kExitOk) (void)system.files->remove_all(scratch);
  return differ == 0 && built == kExitOk ? kExitOk : kExitCellFailed;
}

}  // namespace fabuild
