#include "app/load_spec.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "matrix/loader.h"
#include "matrix/values.h"
#include "source/setup_py.h"

namespace fabuild {

namespace {

// What a setup.py's stable-ABI facts make of the package (PackagePreset::StableAbi).
std::shared_ptr<const PackagePreset::StableAbi> stable_abi_of(const StableAbiFacts& facts, const std::string& file) {
  auto stable = std::make_shared<PackagePreset::StableAbi>();
  stable->floor = *Version::parse(facts.floor);
  // "2.9.0.dev20250830": a torch built from that day's sources on; 2.9.0 is past it.
  stable->from = facts.from.empty() ? stable->floor : Version::parse(facts.from).value_or(stable->floor);
  stable->where = fmt::format("{}:{}", file, facts.line);
  for (const auto& need : facts.needs) {
    stable->needs.push_back(need.variable);
    stable->needs_where.push_back(fmt::format("{}:{}", file, need.line));
  }
  return stable;
}

// A source directory's setup.py, read before the cells are made: the abi3 floor its wheel
// declares and the switches it reads replace the preset's (FlashAttention 3 moved from cp39 to
// cp310 and added HDIMDIFF64/HDIMDIFF192); a profile switch the source does not read is left
// out with a warning rather than set for nothing. Other sources are read at build time.
void apply_source_facts(MatrixSpec& spec, const std::filesystem::path& matrix_dir) {
  namespace fs = std::filesystem;
  if (spec.source.kind != SourceSpec::Kind::kPath) return;
  const PackagePreset& preset = *spec.package;
  const fs::path root =
      fs::path(spec.source.location).is_absolute() ? fs::path(spec.source.location) : matrix_dir / spec.source.location;
  const fs::path setup_py = root / preset.source_subdir / "setup.py";
  const std::string prefix = preset.switches.kind == KernelSwitches::Kind::kEnv ? preset.switches.prefix : "";
  const auto facts = read_setup_py_file(setup_py, prefix);
  if (!facts) return;
  PackagePreset p = preset;
  if (facts->stable) p.stable = stable_abi_of(*facts->stable, setup_py.string());
  if (facts->limited_api) {
    // FlashAttention 2's stable port is abi3 for every build; the example only when stable.
    if (facts->stable && facts->stable->limited_api_with_stable_only) {
      auto stable = std::make_shared<PackagePreset::StableAbi>(*p.stable);
      stable->limited_api = *facts->limited_api;
      p.stable = std::move(stable);
    } else if (p.abi3 != *facts->limited_api) {
      p.abi3 = *facts->limited_api;
    }
  }
  if (!prefix.empty() && !facts->switches.empty()) {
    p.switches.known = facts->switches;
    const auto unknown = [&](const std::string& sw) {
      return std::find(facts->switches.begin(), facts->switches.end(), sw) == facts->switches.end();
    };
    // The package's own profiles are said only where the matrix uses them.
    const auto used = [&](const std::string& profile) {
      return std::any_of(spec.profiles.begin(), spec.profiles.end(), [&](const auto& p) { return p.value == profile; });
    };
    for (auto& [name, off] : p.profiles) {
      for (const auto& sw : off) {
        if (unknown(sw) && used(name)) {
          spec.warnings.push_back(
              fmt::format("{}: profile '{}' turns off {}, which this source's setup.py does not read "
                          "({}{}); it is left out",
                          setup_py.string(), name, sw, prefix, sw));
        }
      }
      std::erase_if(off, unknown);
    }
    for (auto& [name, def] : spec.profile_defs) {
      for (const auto& sw : def.disable) {
        if (unknown(sw)) {
          spec.warnings.push_back(
              fmt::format("{}: profile '{}' turns off {}, which {} does not read ({}{}); it is "
                          "left out",
                          def.where.str(), name, sw, setup_py.string(), prefix, sw));
        }
      }
      std::erase_if(def.disable, unknown);
    }
  }
  spec.package = std::make_shared<const PackagePreset>(std::move(p));
}

}  // namespace

MatrixSpec load_spec(const Options& options, const std::string& host_platform) {
  MatrixSpec spec = load_matrix(options.matrix, options.sets);
  if (const auto host = parse_platform(host_platform); host && !spec.platform_named) {
    for (auto& p : spec.platforms) p.value = *host;
  }
  apply_source_facts(spec, std::filesystem::absolute(options.matrix).parent_path());
  if (options.torch_index && !options.torch_index->empty()) {  // the command line's own: a directory from here
    const std::string& index = *options.torch_index;
    spec.torch_index = index.find("://") != std::string::npos ? index : std::filesystem::absolute(index).string();
  }
  return spec;
}

}  // namespace fabuild
