// `package:` (a preset, or a package the matrix describes), `profile:` and `profiles:`,
// `rocm:` and `rocm_archs:`, and `patches:` (docs/packages.md).

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "matrix/loader_parts.h"
#include "util/text.h"

namespace fabuild::loader {

using yaml::Reader;

namespace {

const std::vector<std::string> kLabelPlaceholders = {"{gpu}",        "{gpu_major}", "{cuda}",
                                                     "{cuda_major}", "{torch}",     "{abi}"};

const std::vector<std::string> kPackageKeys = {
    "name",          "preset", "extension", "id_prefix", "env_prefix",    "archs_env", "local_version_env", "label",
    "source_subdir", "archs",  "abi3",      "exports",   "switch_prefix", "switches",  "profiles"};

// A Python identifier path: "my_kernels._C".
bool module_name(const std::string& text) {
  static const std::regex re(R"(^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$)");
  return text.size() <= 128 && std::regex_match(text, re);
}

std::string upper_snake(const std::string& name) {
  std::string out;
  for (char c : name)
    out += (c == '-' || c == '.') ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> name_list(const Reader& r, const YAML::Node& node, const std::string& what) {
  std::vector<std::string> out;
  for (const auto& item : r.scalar_list(node, what)) {
    const std::string text = trim(r.scalar(item, what));
    if (text.empty() || text.size() > 128) r.fail(item, fmt::format("an empty or overlong name in {}", what));
    out.push_back(text);
  }
  return out;
}

// The label after its placeholders are filled must be a PEP 440 local version: letters,
// digits and dots, which setuptools keeps as written (lower-cased).
void check_label(const Reader& r, const YAML::Node& node, const std::string& label) {
  // A {word} that is not a placeholder is a misspelt one more often than not.
  static const std::regex braced(R"(\{[A-Za-z_]*\})");
  for (auto it = std::sregex_iterator(label.begin(), label.end(), braced); it != std::sregex_iterator(); ++it) {
    const std::string found = it->str();
    if (std::find(kLabelPlaceholders.begin(), kLabelPlaceholders.end(), found) == kLabelPlaceholders.end()) {
      r.fail(node,
             fmt::format("unknown placeholder {} in the label '{}'{}", found, label,
                         did_you_mean(found, kLabelPlaceholders)),
             fmt::format("a label knows {}", join(kLabelPlaceholders, " ")));
    }
  }
  std::string probe = label;
  for (const std::string& p : kLabelPlaceholders) {
    for (auto at = probe.find(p); at != std::string::npos; at = probe.find(p)) probe.replace(at, p.size(), "x");
  }
  static const std::regex local(R"(^([A-Za-z0-9]+(\.[A-Za-z0-9]+)*)?$)");
  if (probe.size() > 128 || !std::regex_match(probe, local)) {
    r.fail(node, fmt::format("'{}' is not a local version label", label),
           fmt::format("letters, digits and dots only, with {}; e.g. \"{{gpu}}torch{{torch}}\"",
                       join(kLabelPlaceholders, " ")));
  }
}

PresetPtr read_package_map(const Reader& r, const YAML::Node& node) {
  r.check_keys(node, kPackageKeys, "package");
  const std::string base_name = node["preset"] ? r.scalar(node["preset"], "package.preset") : "torch-extension";
  const PresetPtr base = find_preset(base_name);
  if (!base) {
    r.fail(node["preset"], fmt::format("unknown preset '{}'{}", base_name, did_you_mean(base_name, preset_names())),
           fmt::format("fabuild knows {}", join(preset_names())));
  }
  PackagePreset p = *base;
  if (!node["name"]) r.fail(node, "package needs a name (the distribution's, as on PyPI)", "e.g. name: my-kernels");
  p.name = trim(r.scalar(node["name"], "package.name"));
  static const std::regex dist(R"(^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$)");
  if (p.name.size() > 64 || !std::regex_match(p.name, dist)) {
    r.fail(node["name"], fmt::format("'{}' is not a distribution name", p.name), "letters, digits, '-', '_' and '.'");
  }
  if (find_preset(p.name) && p.name != base_name) {
    r.fail(node["name"], fmt::format("'{}' is a built-in preset", p.name), fmt::format("write package: {}", p.name));
  }
  std::string dist_name = p.name;
  std::replace_if(
      dist_name.begin(), dist_name.end(), [](char c) { return c == '-' || c == '.'; }, '_');
  p.dist_name = to_lower(dist_name);
  p.pip_project = p.name;
  if (const auto n = node["extension"]) {
    p.extension = trim(r.scalar(n, "package.extension"));
    if (!module_name(p.extension))
      r.fail(n, fmt::format("'{}' is not a module name", p.extension), "e.g. my_kernels_cuda or my_kernels._C");
  }
  if (p.extension.empty())
    r.fail(node, "package needs extension: the compiled module to import", "e.g. extension: my_kernels_cuda");
  // A package on a built-in preset keeps its prefix (fa3.0.0-...); one of its own is named by
  // its distribution, joined to the version by '-' when it ends in a digit (flash_attn_3-3.0.0).
  if (const auto n = node["id_prefix"]) {
    p.id_prefix = trim(r.scalar(n, "package.id_prefix"));
  } else if (base_name == "torch-extension") {
    p.id_prefix = p.dist_name;
  }
  static const std::regex prefix(R"(^[a-z][a-z0-9_]{0,31}$)");
  if (!std::regex_match(p.id_prefix, prefix)) {
    r.fail(node["id_prefix"] ? node["id_prefix"] : node, fmt::format("'{}' cannot start a cell id", p.id_prefix),
           "lower-case letters, digits and '_', a letter first");
  }
  if (const auto n = node["env_prefix"]) {
    const std::string env = trim(r.scalar(n, "package.env_prefix"));
    static const std::regex var(R"(^[A-Z][A-Z0-9_]{0,40}$)");
    if (!std::regex_match(env, var))
      r.fail(n, fmt::format("'{}' is not an environment variable prefix", env), "e.g. MY_KERNELS");
    p.archs_env = env + "_CUDA_ARCHS";
    p.force_build_env = env + "_FORCE_BUILD";
    p.local_version_env = env + "_LOCAL_VERSION";
    p.cxx11_abi_env = env + "_FORCE_CXX11_ABI";
  } else if (base_name == "torch-extension") {
    const std::string env = upper_snake(p.name);
    p.archs_env = env + "_CUDA_ARCHS";
    p.force_build_env = env + "_FORCE_BUILD";
    p.local_version_env = env + "_LOCAL_VERSION";
    p.cxx11_abi_env = env + "_FORCE_CXX11_ABI";
  }
  if (const auto n = node["archs_env"]) p.archs_env = trim(r.scalar(n, "package.archs_env"));
  if (const auto n = node["local_version_env"]) p.local_version_env = trim(r.scalar(n, "package.local_version_env"));
  if (const auto n = node["label"]) {
    p.label = r.scalar(n, "package.label");
    p.windows_label = p.label;
    check_label(r, n, p.label);
  }
  if (const auto n = node["source_subdir"]) {
    p.source_subdir = trim(r.scalar(n, "package.source_subdir"));
    if (p.source_subdir.starts_with('/') || p.source_subdir.find("..") != std::string::npos) {
      r.fail(n, "source_subdir is a directory inside the source tree", "e.g. hopper");
    }
  }
  if (const auto n = node["archs"]) p.default_archs = read_archs(r, n, p, "package.archs").value;
  if (const auto n = node["abi3"]) {
    const std::string tag = trim(r.scalar(n, "package.abi3"));
    const auto t = PythonTag::parse(tag);
    if (tag != "false" && (!t || !t->known()))
      r.fail(n, fmt::format("abi3 is the lowest Python tag, like cp39, not '{}'", tag));
    p.abi3 = tag == "false" ? std::string() : t->str();
  }
  if (const auto n = node["exports"])
    p.exports = n.IsSequence() && n.size() == 0 ? std::vector<std::string>{} : name_list(r, n, "package.exports");
  if (const auto n = node["switch_prefix"]) p.switches.prefix = trim(r.scalar(n, "package.switch_prefix"));
  if (const auto n = node["switches"]) p.switches.known = name_list(r, n, "package.switches");
  if (const auto n = node["profiles"]) {
    r.expect_map(n, "package.profiles");
    for (const auto& item : n) {
      const std::string name = item.first.Scalar();
      if (!is_profile_name(name))
        r.fail(item.first, fmt::format("'{}' is not a profile name", name), "lower-case letters and digits");
      p.profiles[name] = name_list(r, item.second, "package.profiles." + name);
    }
  }
  return std::make_shared<const PackagePreset>(std::move(p));
}

}  // namespace

PresetPtr apply_naming(const Reader& r, const YAML::Node& node, PresetPtr package) {
  const std::string text = trim(r.scalar(node, "naming"));
  if (text == "fabuild") return package;
  PackagePreset p = *package;
  if (text == "upstream") {
    if (p.upstream_label.empty()) {
      r.fail(node, fmt::format("{} publishes no wheels of its own, so there is no upstream naming to follow", p.name),
             "leave naming out (fabuild's labels), or give a label such as \"{gpu}torch{torch}\"");
    }
    p.label = p.upstream_label;
    p.label_in_metadata = false;
  } else {
    // A label with no placeholder gives every wheel one label, whatever its CUDA and torch: a
    // misspelt `upstream` more often than an intent.
    if (text.find('{') == std::string::npos) {
      r.fail(node,
             fmt::format("naming: '{}' is neither upstream, fabuild nor a label with placeholders{}", text,
                         did_you_mean(text, {"upstream", "fabuild"})),
             fmt::format("write naming: upstream (the package's own names), fabuild (the default), or a label "
                         "such as \"{{gpu}}torch{{torch}}.{}\" ({})",
                         text, join(kLabelPlaceholders, " ")));
    }
    check_label(r, node, text);
    p.label = text;
  }
  p.windows_label = p.label;
  return std::make_shared<const PackagePreset>(std::move(p));
}

PresetPtr apply_platform_tag(const Reader& r, const YAML::Node& node, PresetPtr package) {
  const std::string text = trim(r.scalar(node, "platform_tag"));
  if (text == "linux") return package;
  static const std::regex policy(R"(^manylinux_2_(\d+)$)");
  std::smatch m;
  if (!std::regex_match(text, m, policy) || std::stoi(m[1].str()) < 17) {
    r.fail(node, fmt::format("platform_tag: '{}' is neither linux nor a manylinux policy", text),
           "write linux (the default: linux_x86_64) or manylinux_2_X with X >= 17, the oldest glibc the wheels must "
           "load on (manylinux_2_28 for PyTorch's manylinux_2_28 builder images)");
  }
  PackagePreset p = *package;
  p.manylinux = text;
  return std::make_shared<const PackagePreset>(std::move(p));
}

PresetPtr read_package(const Reader& r, const YAML::Node& node) {
  if (node.IsMap()) return read_package_map(r, node);
  const std::string name = r.scalar(node, "package");
  PresetPtr preset = find_preset(name);
  if (!preset || name == "torch-extension") {
    std::vector<std::string> packages = preset_names();
    std::erase(packages, "torch-extension");  // a base to describe a package with, not one
    r.fail(node, fmt::format("unknown package '{}'{}", name, did_you_mean(name, packages)),
           name == "torch-extension"
               ? std::string("torch-extension is the base for a package the matrix describes: package: {name: ..., "
                             "extension: ...}")
               : fmt::format("fabuild knows {}; describe another with package: {{name: ..., extension: ...}}",
                             join(packages)));
  }
  return preset;
}

Located<GpuSet> read_rocm_set(const Reader& r, const YAML::Node& node) {
  const std::string text = r.scalar(node, "rocm");
  const auto v = parse_rocm_version(text);
  if (!v) r.fail(node, fmt::format("'{}' is not a ROCm version", text), "write major.minor like 6.2, or 6.2.4");
  return {GpuSet{*v, std::nullopt, Backend::kRocm}, r.at(node)};
}

std::vector<std::string> read_rocm_archs(const Reader& r, const YAML::Node& node, const PackagePreset& preset) {
  std::vector<std::string> archs;
  std::vector<YAML::Node> items;
  if (node.IsScalar()) {
    for (const auto& part : split(node.Scalar(), ';')) {
      for (const auto& a : split(part, ',')) {
        if (!trim(a).empty()) archs.push_back(trim(a));
      }
    }
  } else {
    for (const auto& item : r.scalar_list(node, "rocm_archs")) archs.push_back(trim(r.scalar(item, "rocm_archs")));
  }
  if (archs.empty()) r.fail(node, "rocm_archs is empty", "e.g. \"gfx90a;gfx942\"");
  for (auto& a : archs) {
    const auto gfx = parse_gfx_arch(a);
    if (!gfx) r.fail(node, fmt::format("'{}' is not an AMD GPU arch", a), "e.g. gfx90a, gfx942, gfx950");
    a = *gfx;
    const auto& known = preset.rocm_archs;
    if (!known.empty() && std::find(known.begin(), known.end(), a) == known.end()) {
      r.fail(node, fmt::format("{} does not build for {}{}", preset.name, a, did_you_mean(a, known)),
             fmt::format("it knows {}", join(known)));
    }
  }
  std::sort(archs.begin(), archs.end());
  archs.erase(std::unique(archs.begin(), archs.end()), archs.end());
  return archs;
}

Located<std::string> read_profile(const Reader& r, const YAML::Node& node) {
  const std::string name = trim(r.scalar(node, "profile"));
  if (!is_profile_name(name)) {
    r.fail(node, fmt::format("'{}' is not a profile name", name), "lower-case letters and digits, e.g. minimal");
  }
  return {name, r.at(node)};
}

std::map<std::string, ProfileDef> read_profile_defs(const Reader& r, const YAML::Node& node) {
  r.expect_map(node, "profiles");
  std::map<std::string, ProfileDef> defs;
  for (const auto& item : node) {
    const std::string name = item.first.Scalar();
    if (!is_profile_name(name)) {
      r.fail(item.first, fmt::format("'{}' is not a profile name", name),
             "lower-case letters and digits, e.g. fwdonly");
    }
    if (name == kDefaultProfile) r.fail(item.first, "the full profile turns nothing off and cannot be redefined");
    const std::string what = "profiles." + name;
    r.expect_map(item.second, what);
    r.check_keys(item.second, {"disable"}, what);
    if (!item.second["disable"])
      r.fail(item.second, fmt::format("{} needs disable: [switches]", what), "e.g. disable: [BACKWARD, FP8]");
    ProfileDef def;
    def.where = r.at(item.first);
    for (auto s : name_list(r, item.second["disable"], what + ".disable")) {
      std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
      def.disable.push_back(s);
    }
    defs[name] = std::move(def);
  }
  return defs;
}

std::vector<PatchRule> read_patches(const Reader& r, const YAML::Node& node) {
  r.expect_map(node, "patches");
  std::vector<PatchRule> rules;
  for (const auto& item : node) {
    PatchRule rule;
    rule.version = trim(item.first.Scalar());
    rule.where = r.at(item.first);
    if (!has_glob(rule.version) && !Version::parse(rule.version)) {
      r.fail(item.first, fmt::format("'{}' is neither a version nor a pattern", rule.version),
             "e.g. \"2.8.3\", \"2.8.*\" or \"*\"");
    }
    rule.files = name_list(r, item.second, "patches." + rule.version);
    for (const auto& f : rule.files) {
      if (f.find('\0') != std::string::npos) r.fail(item.second, "a patch file name holds a NUL character");
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace fabuild::loader
