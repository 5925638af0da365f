#include "matrix/loader.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <unordered_map>

#include <fmt/format.h>

#include "matrix/axes.h"
#include "matrix/loader_parts.h"
#include "matrix/yaml_document.h"
#include "util/text.h"

namespace fabuild {

namespace {

using yaml::Reader;

// Large enough for any real matrix, small enough that a stray multi-gigabyte file fails fast.
constexpr std::size_t kMaxMatrixBytes = 4 * 1024 * 1024;

const std::vector<std::string> kTopKeys = {
    "package",   "versions",   "torch",   "cuda",       "python",       "platform",  "archs",
    "cxx11_abi", "exclude",    "include", "provision",  "build",        "budget",    "env",
    "compat",    "wheelhouse", "command", "source",     "torch_index",  "frontend",  "ci",
    "container", "cache",      "rocm",    "rocm_archs", "profile",      "profiles",  "patches",
    "toolkit",   "python_env", "naming",  "artifact",   "platform_tag", "stable_abi"};

template <class T, class ReadOne>
std::vector<Located<T>> read_axis(const Reader& r, const YAML::Node& root, const std::string& key, ReadOne read_one,
                                  const std::function<std::string(const T&)>& spell, bool maps_allowed = false) {
  const YAML::Node node = root[key];
  if (!node) {
    r.fail(root, fmt::format("missing '{}'", key),
           fmt::format("add '{}:' with the values to build, see docs/matrix.md", key));
  }
  if (node.IsNull())
    r.fail(Reader::key_node(root, key), fmt::format("{} is empty", key),
           fmt::format("list at least one value under {}", key));
  std::vector<Located<T>> values;
  std::unordered_map<std::string, int> first_line;  // spelling -> line: a search of `values` is quadratic
  for (const auto& item : maps_allowed ? r.item_list(node, key) : r.scalar_list(node, key)) {
    auto value = read_one(r, item);
    std::string spelled = spell(value.value);
    if (const auto seen = first_line.find(spelled); seen != first_line.end()) {
      r.fail(item, seen->second > 0 ? fmt::format("{} '{}' is listed twice in {} (first at line {})", key, spelled, key,
                                                  seen->second)
                                    : fmt::format("{} '{}' is listed twice in {}", key, spelled, key));
    }
    first_line.emplace(std::move(spelled), value.where.line);
    values.push_back(std::move(value));
  }
  return values;
}

template <class T, class ReadOne>
std::vector<Located<T>> read_optional_axis(const Reader& r, const YAML::Node& root, const std::string& key,
                                           ReadOne read_one, const std::function<std::string(const T&)>& spell,
                                           T fallback) {
  if (!root[key]) return {Located<T>{fallback, Location{r.file(), 0, 0}}};
  return read_axis<T>(r, root, key, read_one, spell);
}

// The matrix's keys: the fixed ones and the declared axes' (matrix/axes.h).
const std::vector<std::string>& top_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> all = kTopKeys;
    for (const AxisRow* row : declared_axes()) all.emplace_back(row->matrix_key);
    return all;
  }();
  return keys;
}

// The declared axes' values, each a name or a list of names; the axis's fallback where the
// matrix does not name it.
std::vector<std::vector<Located<std::string>>> read_declared(const Reader& r, const YAML::Node& root) {
  std::vector<std::vector<Located<std::string>>> out;
  for (const AxisRow* row : declared_axes()) {
    const std::string key(row->matrix_key);
    const auto read_one = [&](const Reader& reader, const YAML::Node& item) {
      const std::string text = trim(reader.scalar(item, key));
      const auto value = row->normalize(text);
      if (!value) {
        const std::string known = row->known ? fmt::format(" ({})", join(row->known(), ", ")) : std::string();
        reader.fail(item, fmt::format("'{}' is not a {} value{}", text, key, known), std::string(row->hint));
      }
      return Located<std::string>{*value, reader.at(item)};
    };
    out.push_back(read_optional_axis<std::string>(
        r, root, key, read_one, [](const std::string& v) { return v; }, std::string(row->fallback)));
  }
  return out;
}

void warn_ignored_env(const Reader& r, const YAML::Node& env, MatrixSpec& spec, const std::string& what) {
  if (!env || !env.IsMap()) return;
  for (const auto& item : env) {
    for (const auto& ignored : spec.package->ignored_env) {
      if (item.first.Scalar() == ignored.name) {
        spec.warnings.push_back(fmt::format("{}: {} sets {}, which {} never reads: {}", r.at(item.first).str(), what,
                                            ignored.name, spec.package->name, ignored.advice));
      }
    }
  }
}

// What library cells (artifact: library) cannot have, said where the matrix asks for it.
void check_library(const Reader& r, const YAML::Node& root, const MatrixSpec& spec) {
  const bool library = std::any_of(spec.artifacts.begin(), spec.artifacts.end(),
                                   [](const auto& a) { return a.value == Artifact::kLibrary; });
  if (!library) return;
  const YAML::Node at = root["artifact"];
  if (!spec.package->library) {
    r.fail(at, fmt::format("{} has no library recipe", spec.package->name),
           "artifact: library builds flash-attn, flash-attn-3 and flash-example (and packages on their presets); "
           "see docs/library.md");
  }
  if (const auto n = root["command"]) {
    r.fail(n, "command: replaces the wheel build, and library cells build the library recipe",
           "give the command to the wheel cells only: include: [{artifact: wheel, command: [...]}]");
  }
  if (spec.source.kind == SourceSpec::Kind::kPip) {
    r.fail(root["source"] ? root["source"] : at,
           "library cells need the package's source tree, and `source: pip` fetches it through pip, which runs its "
           "setup.py (with torch) first",
           fmt::format("name the source: source: {{sdist: FILE or URL, sha256: HEX}} (e.g. {}'s sdist from PyPI), "
                       "{{path: DIR}} or {{git: URL, ref: TAG}}",
                       spec.package->name));
  }
}

MatrixSpec read_spec(const Reader& r, const YAML::Node& root) {
  if (!root.IsMap()) {
    r.fail(root, fmt::format("a matrix file is a mapping of keys to values, not {}", Reader::kind(root)),
           "start from matrix/example.yaml");
  }
  r.check_keys(root, top_keys(), "the matrix");

  MatrixSpec spec;
  spec.file = r.file();
  spec.package = root["package"] ? loader::read_package(r, root["package"]) : find_preset("flash-attn");
  if (const auto n = root["naming"]) spec.package = loader::apply_naming(r, n, spec.package);
  if (const auto n = root["platform_tag"]) spec.package = loader::apply_platform_tag(r, n, spec.package);
  const PackagePreset& preset = *spec.package;

  spec.versions =
      read_axis<Version>(r, root, "versions", loader::read_fa_version, [](const Version& v) { return v.str(); });
  spec.artifacts = read_optional_axis<Artifact>(
      r, root, "artifact", loader::read_artifact, [](const Artifact& a) { return to_string(a); }, Artifact::kWheel);
  const bool wheels = std::any_of(spec.artifacts.begin(), spec.artifacts.end(),
                                  [](const auto& a) { return a.value == Artifact::kWheel; });
  // Library cells have no torch or Python: a matrix of libraries alone needs neither.
  if (wheels || root["torch"]) {
    // Ranges (">=2.10") are written among the series; the plan resolves them against the index.
    for (auto& v : read_axis<loader::TorchEntry>(r, root, "torch", loader::read_torch,
                                                 [](const loader::TorchEntry& e) { return e.str(); })) {
      if (v.value.range) {
        spec.torch_ranges.push_back({*v.value.range, v.where});
      } else {
        spec.torch.push_back({v.value.series, v.where});
      }
    }
  }
  // The GPU sets: `cuda:`, `rocm:` or both.
  if (root["cuda"] || !root["rocm"])
    spec.cuda = read_axis<GpuSet>(r, root, "cuda", loader::read_cuda_set, spell_gpu_set, true);
  if (root["rocm"]) {
    for (auto& set : read_axis<GpuSet>(r, root, "rocm", loader::read_rocm_set, spell_gpu_set))
      spec.cuda.push_back(std::move(set));
  }
  if (wheels || root["python"]) {
    spec.python =
        read_axis<PythonTag>(r, root, "python", loader::read_python, [](const PythonTag& p) { return p.str(); });
  }
  if (!wheels) {
    for (const AxisRow& row : axis_rows()) {
      const std::string key(row.matrix_key);
      if (row.wheel_only && root[key]) {
        spec.warnings.push_back(
            fmt::format("{}: {} is for wheel cells; this matrix builds libraries only (artifact: "
                        "library), which have none",
                        r.at(Reader::key_node(root, key)).str(), key));
      }
    }
  }
  spec.platform_named = static_cast<bool>(root["platform"]);
  spec.platforms = read_optional_axis<Platform>(
      r, root, "platform", loader::read_platform, [](const Platform& p) { return to_string(p); },
      Platform::kLinuxX86_64);
  spec.abis = read_optional_axis<Abi>(
      r, root, "cxx11_abi", loader::read_abi, [](const Abi& a) { return to_string(a); }, Abi::kAuto);
  spec.profiles = read_optional_axis<std::string>(
      r, root, "profile", loader::read_profile, [](const std::string& p) { return p; }, std::string(kDefaultProfile));
  spec.declared = read_declared(r, root);
  if (const auto n = root["profiles"]) spec.profile_defs = loader::read_profile_defs(r, n);
  if (const auto n = root["rocm_archs"]) spec.rocm_archs = loader::read_rocm_archs(r, n, preset);
  if (const auto n = root["patches"]) spec.patches = loader::read_patches(r, n);

  if (const auto n = root["archs"]) spec.archs = loader::read_arch_setting(r, n, preset);
  if (const auto n = root["provision"]) {
    spec.provision = loader::read_provision(r, n);
    spec.provision_where = r.at(n);
  }
  if (const auto n = root["toolkit"]) spec.toolkit = loader::read_toolkit_source(r, n);
  if (const auto n = root["stable_abi"]) {
    const std::string text = r.scalar(n, "stable_abi");
    const auto mode = parse_stable_mode(text);
    if (!mode) {
      r.fail(n, fmt::format("stable_abi must be auto, true or false, not '{}'", text),
             "auto: one wheel for a torch window where the source builds against torch's stable ABI by itself "
             "(docs/stable-abi.md)");
    }
    spec.stable_abi = *mode;
    spec.stable_abi_where = r.at(n);
  }
  if (const auto n = root["python_env"]) {
    const std::string text = r.scalar(n, "python_env");
    const auto tool = parse_python_env_tool(text);
    if (!tool)
      r.fail(n, fmt::format("python_env must be auto, uv or pip, not '{}'", text),
             "auto: uv when it is on PATH, else pip");
    spec.python_env = *tool;
  }
  if (const auto n = root["build"]) spec.build = loader::read_build(r, n, "build");
  if (const auto n = root["budget"]) spec.budget = loader::read_budget(r, n);
  if (const auto n = root["env"]) spec.env = loader::read_env(r, n, preset, "env");
  if (const auto n = root["command"]) spec.command = loader::read_command(r, n, "command");
  if (const auto n = root["compat"]) loader::read_compat(r, n, spec.compat, preset);
  if (const auto n = root["wheelhouse"]) spec.wheelhouse = r.scalar(n, "wheelhouse");
  if (const auto n = root["ci"]) spec.ci = loader::read_ci(r, n);
  spec.ci.runner_reserve_gb = spec.budget.reserve_gb;
  if (const auto n = root["cache"]) spec.cache = loader::read_cache(r, n);
  if (const auto n = root["source"]) spec.source = loader::read_source(r, n);
  loader::check_source(r, root["source"] ? root["source"] : root, spec.source, preset);
  if (const auto n = root["container"]) spec.container = loader::read_container(r, n);
  if (const auto n = root["torch_index"]) spec.torch_index = r.scalar(n, "torch_index");
  if (const auto n = root["frontend"]) {
    const std::string f = r.scalar(n, "frontend");
    if (f != "setup.py" && f != "pip") r.fail(n, fmt::format("frontend must be setup.py or pip, not '{}'", f));
    spec.frontend = f == "pip" ? Frontend::kPipWheel : Frontend::kSetupPy;
  }
  if (const auto n = root["exclude"]) spec.exclude = loader::read_entries(r, n, false, preset);
  if (const auto n = root["include"]) spec.include = loader::read_entries(r, n, true, preset);

  if (root["artifact"]) check_library(r, root, spec);
  warn_ignored_env(r, root["env"], spec, "env");
  if (const auto n = root["include"]; n && n.IsSequence()) {
    for (const auto& entry : n) warn_ignored_env(r, entry["env"], spec, "include.env");
  }
  return spec;
}

}  // namespace

MatrixSpec parse_matrix(const std::string& text, const std::string& file, const std::vector<AxisSet>& sets) {
  YAML::Node root = load_single_document(text, file);
  if (!root || root.IsNull())
    throw config_error(Location{file, 0, 0}, "the matrix file is empty", "start from matrix/example.yaml");
  const Reader reader(file, apply_axis_sets(root, sets));
  try {
    return read_spec(reader, root);
  } catch (const YAML::Exception& e) {
    // yaml-cpp conversions throw on shapes the readers did not foresee; never crash on them.
    throw config_error(Location{file, e.mark.line + 1, e.mark.column + 1}, std::string("unexpected YAML: ") + e.msg);
  }
}

MatrixSpec load_matrix(const std::string& path, const std::vector<AxisSet>& sets) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status)) {
    throw config_error(Location{}, fmt::format("'{}' is a directory, not a matrix file", path),
                       "pass the path of a YAML matrix, e.g. matrix/example.yaml");
  }
  // A FIFO or a device would be read from until its writer ends, or forever: refused at once.
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    throw config_error(Location{}, fmt::format("'{}' is not a regular file (a FIFO, socket or device)", path),
                       "pass the path of a YAML matrix file, e.g. matrix/example.yaml");
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    throw config_error(Location{},
                       fmt::format("cannot read matrix file '{}': {}", path,
                                   error != 0 ? std::generic_category().message(error) : std::string("cannot open it")),
                       "pass the path of a YAML matrix, e.g. matrix/example.yaml");
  }
  std::string text;
  text.resize(kMaxMatrixBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxMatrixBytes) {
    throw config_error(Location{path, 0, 0},
                       fmt::format("the matrix file is larger than {} MiB", kMaxMatrixBytes >> 20),
                       "a matrix describes cells; it should be a few kilobytes");
  }
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
    throw config_error(Location{path, static_cast<int>(line), 0},
                       fmt::format("'{}' is not a text file: it holds a NUL byte (at byte {})", path, nul),
                       "a matrix is a YAML text file, e.g. matrix/example.yaml; check the path");
  }
  return parse_matrix(text, path, sets);
}

}  // namespace fabuild
