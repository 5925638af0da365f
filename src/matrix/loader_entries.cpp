#include <regex>

#include <fmt/format.h>

#include "matrix/axes.h"
#include "matrix/budget_limits.h"
#include "matrix/command.h"
#include "matrix/loader_parts.h"
#include "matrix/match.h"
#include "util/text.h"

namespace fabuild::loader {

using yaml::Reader;

BuildSettings read_build(const Reader& r, const YAML::Node& node, const std::string& what) {
  r.expect_map(node, what);
  r.check_keys(node, {"max_jobs", "nvcc_threads", "memory_per_thread_gb", "timeout", "kill_grace", "type"}, what);
  BuildSettings b;
  if (const auto n = node["max_jobs"]; n && !(n.IsScalar() && to_lower(n.Scalar()) == "auto")) {
    b.max_jobs = r.positive_int(n, what + ".max_jobs");
  }
  if (const auto n = node["nvcc_threads"]) b.nvcc_threads = r.positive_int(n, what + ".nvcc_threads");
  if (const auto n = node["memory_per_thread_gb"])
    b.memory_per_thread_gb = r.positive_number(n, what + ".memory_per_thread_gb");
  if (const auto n = node["timeout"]) b.timeout_s = r.duration_s(n, what + ".timeout");
  if (const auto n = node["kill_grace"]) b.kill_grace_s = r.duration_s(n, what + ".kill_grace");
  if (const auto n = node["type"]) {
    // As CMake spells them; any case is taken (debug, RELEASE).
    const std::string text = r.scalar(n, what + ".type");
    for (const std::string& type : kBuildTypes) {
      if (to_lower(text) == to_lower(type)) b.type = type;
    }
    if (!b.type) {
      r.fail(n, fmt::format("{}.type is '{}', which is no build type of library cells", what, text),
             "write " + join(kBuildTypes, ", ") + " (CMAKE_BUILD_TYPE)");
    }
  }
  return b;
}

BudgetSpec read_budget(const Reader& r, const YAML::Node& node) {
  r.expect_map(node, "budget");
  r.check_keys(node, {"cores", "memory_gb", "reserve_gb", "jobs"}, "budget");
  BudgetSpec b;
  const auto number = [&](const char* key) -> std::optional<double> {
    const auto n = node[key];
    if (!n) return std::nullopt;
    return r.number(n, fmt::format("budget.{}", key), budget_limit(key).range);
  };
  b.cores = number("cores");
  b.memory_gb = number("memory_gb");
  b.reserve_gb = number("reserve_gb");
  if (const auto jobs = number("jobs")) b.max_cells = static_cast<int>(*jobs);
  return b;
}

std::map<std::string, std::string> read_env(const Reader& r, const YAML::Node& node, const PackagePreset& preset,
                                            const std::string& what) {
  auto env = r.string_map(node, what);
  for (const auto& item : node) {
    const std::string key = item.first.Scalar();
    for (const auto& controlled : controlled_env(preset)) {
      if (controlled.name == key) {
        r.fail(item.first, fmt::format("{} sets {}, which fabuild sets for every cell", what, key),
               controlled.instead.front() == '(' ? fmt::format("remove it {}", controlled.instead)
                                                 : fmt::format("use the matrix key '{}' instead", controlled.instead));
      }
    }
  }
  return env;
}

namespace {

std::string axis_value(const Reader& r, const YAML::Node& node, Axis axis, bool allow_glob) {
  const std::string text = trim(r.scalar(node, axis_key(axis)));
  if (has_glob(text) && !allow_glob) {
    r.fail(node, fmt::format("'{}' is a pattern; an include names one value per key", text),
           "patterns are for exclude and filters; add one include entry per cell");
  }
  if (axis == Axis::kPython && !has_glob(text)) return read_python(r, node).value.str();  // the tag's own errors
  if (axis == Axis::kProfile && !has_glob(text)) return read_profile(r, node).value;
  if (axis == Axis::kPackage && !has_glob(text)) {
    if (!find_preset(text) || text == "torch-extension") {
      r.fail(node, fmt::format("unknown package '{}'{}", text, did_you_mean(text, preset_names())),
             "an include adds cells of a built-in package; describe your own as the matrix's package:");
    }
    return text;
  }
  const auto canonical = normalize_axis_value(axis, text);
  if (!canonical) r.fail(node, fmt::format("'{}' is not a valid {} value", text, axis_key(axis)));
  return *canonical;
}

// `rocm: "6.2"` in an entry is the GPU set rocm6.2.
std::string rocm_value(const Reader& r, const YAML::Node& node, bool allow_glob) {
  const std::string text = trim(r.scalar(node, "rocm"));
  if (has_glob(text)) {
    if (!allow_glob) r.fail(node, fmt::format("'{}' is a pattern; an include names one value per key", text));
    return "rocm" + text;
  }
  return "rocm" + read_rocm_set(r, node).value.toolkit.str();
}

MatrixEntry read_entry(const Reader& r, const YAML::Node& node, bool include, const PackagePreset& matrix_preset) {
  const std::string what = include ? "an include entry" : "an exclude entry";
  r.expect_map(node, what);
  std::vector<std::string> keys;
  for (const AxisRow& row : axis_rows()) {
    keys.emplace_back(row.key);
    if (!row.alt_key.empty()) keys.emplace_back(row.alt_key);
  }
  if (include) keys.insert(keys.end(), {"archs", "provision", "toolkit", "env", "build", "command", "source"});
  r.check_keys(node, keys, what);
  if (node.size() == 0) r.fail(node, fmt::format("{} is empty", what), "name at least one key, e.g. {python: cp313}");
  if (node["cuda"] && node["rocm"])
    r.fail(node, fmt::format("{} names both cuda and rocm", what), "a cell has one GPU set");

  MatrixEntry entry;
  entry.where = r.at(node);
  for (const auto& item : node) {
    const std::string key = item.first.Scalar();
    const AxisRow* row = axis_for_key(key);
    if (row == nullptr) continue;
    const bool rocm = key == "rocm";  // the GPU set's other key: `rocm: "6.2"` is rocm6.2
    const Axis axis = row->axis;
    AxisMatch m{axis, {}, r.at(item.second)};
    if (include) {
      m.values.push_back(rocm ? rocm_value(r, item.second, false) : axis_value(r, item.second, axis, false));
    } else {
      for (const auto& value : r.scalar_list(item.second, "exclude." + key)) {
        m.values.push_back(rocm ? rocm_value(r, value, true) : axis_value(r, value, axis, true));
      }
    }
    entry.match.push_back(std::move(m));
  }
  if (!include && entry.match.empty())
    r.fail(node, "an exclude entry names no axis", "e.g. {torch: \"2.7\", python: cp313}");
  if (!include) return entry;

  // Settings are checked against the package of the cells the entry adds.
  const PresetPtr own = node["package"] ? find_preset(trim(node["package"].Scalar())) : nullptr;
  const PackagePreset& preset = own ? *own : matrix_preset;
  if (const auto n = node["source"]) {
    entry.settings.source = read_source(r, n);
    check_source(r, n, *entry.settings.source, preset);
  } else if (own && own->name != matrix_preset.name && own->pip_project.empty()) {
    r.fail(
        node, fmt::format("this include adds {} cells, which need their own source:", own->name),
        fmt::format("{} has no sdist on PyPI; e.g. source: {{git: URL, ref: v2.8.3}} (a recursive clone)", own->name));
  }
  if (const auto n = node["archs"]) entry.settings.archs = read_archs(r, n, preset, "include.archs");
  if (const auto n = node["provision"]) entry.settings.provision = read_provision(r, n);
  if (const auto n = node["toolkit"]) entry.settings.toolkit = read_toolkit_source(r, n);
  if (const auto n = node["env"]) entry.settings.env = read_env(r, n, preset, "include.env");
  if (const auto n = node["build"]) entry.settings.build = read_build(r, n, "include.build");
  if (const auto n = node["command"]) entry.settings.command = read_command(r, n, "include.command");
  return entry;
}

}  // namespace

std::vector<std::string> read_command(const Reader& r, const YAML::Node& node, const std::string& what) {
  if (node.IsScalar()) {
    r.fail(node, fmt::format("{} is a list of arguments, not one string", what),
           "write [program, arg, ...]; for a shell, say so: [sh, -c, \"...\"]");
  }
  if (!node.IsSequence() || node.size() == 0) {
    r.fail(node, fmt::format("{} must be a non-empty list of arguments", what), "e.g. [python, build.py, \"{out}\"]");
  }
  std::vector<std::string> argv;
  for (const auto& item : node) {
    std::string arg = r.scalar(item, what + " argument");
    if (arg.find('\0') != std::string::npos) r.fail(item, "an argument holds a NUL character");
    if (const auto bad = unknown_placeholder(arg)) {
      r.fail(item, fmt::format("unknown placeholder {{{}}} in {}", *bad, what),
             fmt::format("placeholders are {}", join(command_placeholders())));
    }
    argv.push_back(std::move(arg));
  }
  return argv;
}

SourceSpec read_source(const Reader& r, const YAML::Node& node) {
  SourceSpec s;
  s.where = r.at(node);
  if (node.IsScalar() && node.Scalar() == "pip") return s;
  r.expect_map(node, "source");
  r.check_keys(node, {"path", "sdist", "sha256", "git", "ref"}, "source");
  if ((node["path"] ? 1 : 0) + (node["sdist"] ? 1 : 0) + (node["git"] ? 1 : 0) > 1) {
    r.fail(node, "source names more than one of path, sdist and git", "keep one");
  }
  if (node["ref"] && !node["git"]) r.fail(node["ref"], "source.ref goes with source.git");
  if (const auto n = node["path"]) {
    s.kind = SourceSpec::Kind::kPath;
    s.location = r.scalar(n, "source.path");
  } else if (const auto n = node["sdist"]) {
    s.kind = SourceSpec::Kind::kSdist;
    s.location = r.scalar(n, "source.sdist");
  } else if (const auto n = node["git"]) {
    s.kind = SourceSpec::Kind::kGit;
    s.location = r.scalar(n, "source.git");
    s.ref = node["ref"] ? r.scalar(node["ref"], "source.ref") : "";  // "": the package's default (check_source)
  } else {
    r.fail(node, "source needs path:, sdist: or git:", "e.g. source: {path: examples/flash_example}");
  }
  if (const auto n = node["sha256"]) {
    s.sha256 = to_lower(r.scalar(n, "source.sha256"));
    static const std::regex hex64("^[0-9a-f]{64}$");
    if (!std::regex_match(s.sha256, hex64)) r.fail(n, "source.sha256 must be 64 hex digits");
  }
  return s;
}

void check_source(const Reader& r, const YAML::Node& node, SourceSpec& source, const PackagePreset& preset) {
  if (source.kind == SourceSpec::Kind::kPip && preset.pip_project.empty()) {
    r.fail(
        node, fmt::format("{} has no sdist on PyPI to fetch: name its source", preset.name),
        preset.source_subdir.empty()
            ? std::string("source: {path: DIR}, {sdist: FILE, sha256: HEX} or {git: URL, ref: TAG}")
            : fmt::format("a recursive clone of the repository that holds {}/: source: {{git: URL, ref: v2.8.3}}, or "
                          "{{path: DIR}} of one",
                          preset.source_subdir));
  }
  if (source.kind == SourceSpec::Kind::kGit && source.ref.empty()) {
    if (preset.git_ref.empty()) {
      r.fail(node, fmt::format("source.git for {} needs ref: its versions are no tags of the repository", preset.name),
             "name the tag or commit to build, e.g. ref: v2.8.3");
    }
    source.ref = preset.git_ref;
  }
}

std::vector<MatrixEntry> read_entries(const Reader& r, const YAML::Node& node, bool include,
                                      const PackagePreset& preset) {
  const std::string what = include ? "include" : "exclude";
  if (node.IsNull()) return {};
  if (!node.IsSequence()) r.fail(node, fmt::format("{} must be a list of mappings, not {}", what, Reader::kind(node)));
  std::vector<MatrixEntry> entries;
  for (const auto& item : node) entries.push_back(read_entry(r, item, include, preset));
  return entries;
}

}  // namespace fabuild::loader
