#include <fmt/format.h>

#include "matrix/loader_parts.h"
#include "util/text.h"

namespace fabuild::loader {

using yaml::Reader;

Located<Version> read_fa_version(const Reader& r, const YAML::Node& node) {
  const std::string text = r.scalar(node, "versions");
  const auto v = Version::parse(trim(text));
  if (!v) r.fail(node, fmt::format("'{}' is not a version", text), "write it as on PyPI, e.g. 2.8.3 or 2.8.0.post2");
  return {*v, r.at(node)};
}

Located<TorchEntry> read_torch(const Reader& r, const YAML::Node& node) {
  const std::string text = trim(r.scalar(node, "torch"));
  const char* hint =
      "write a series like 2.8 (quoted or not), a pin like 2.8.0, \">=2.10\" for every series from 2.10 on "
      "that the torch index has, or \">=2.10,<2.14\" for those below 2.14";
  if (is_torch_range(text)) {
    std::string why;
    const auto range = parse_torch_range(text, &why);
    if (!range) r.fail(node, fmt::format("'{}' is not a torch range: {}", text, why), hint);
    return {TorchEntry{range->floor, range}, r.at(node)};
  }
  const auto v = Version::parse(text);
  if (!v || v->release().size() < 2)
    r.fail(node, fmt::format("'{}' is not a torch series, version or range", text), hint);
  return {TorchEntry{*v, std::nullopt}, r.at(node)};
}

namespace {

Version cuda_version(const Reader& r, const YAML::Node& node, const std::string& what) {
  const std::string text = r.scalar(node, what);
  const auto v = parse_cuda_version(text);
  if (!v) r.fail(node, fmt::format("'{}' is not a CUDA version", text), "write major.minor like 12.8, or cu128");
  return *v;
}

}  // namespace

Located<GpuSet> read_cuda_set(const Reader& r, const YAML::Node& node) {
  if (node.IsMap()) {
    r.check_keys(node, {"toolkit", "torch_cuda"}, "a CUDA set");
    if (!node["toolkit"])
      r.fail(node, "a CUDA set needs 'toolkit' (the nvcc that compiles)",
             "e.g. {toolkit: \"12.9\", torch_cuda: \"12.8\"}");
    GpuSet set{cuda_version(r, node["toolkit"], "toolkit"), std::nullopt};
    if (node["torch_cuda"]) {
      set.torch_cuda = cuda_version(r, node["torch_cuda"], "torch_cuda");
      if (set.torch_cuda->major() != set.toolkit.major()) {
        r.fail(node["torch_cuda"],
               fmt::format("torch_cuda {} and toolkit {} differ in major version", set.torch_cuda->str(),
                           set.toolkit.str()),
               "torch's extension builder refuses a toolkit of another CUDA major");
      }
    }
    return {set, r.at(node)};
  }
  return {GpuSet{cuda_version(r, node, "cuda"), std::nullopt}, r.at(node)};
}

Located<PythonTag> read_python(const Reader& r, const YAML::Node& node) {
  const std::string text = r.scalar(node, "python");
  const auto tag = PythonTag::parse(text);
  if (!tag || !tag->known()) {
    const auto known = known_python_tags();
    r.fail(node, fmt::format("unknown Python tag '{}'{}", text, did_you_mean(text, known)),
           fmt::format("use one of {} (3.12 is accepted for cp312)", join(known)));
  }
  return {*tag, r.at(node)};
}

Located<Platform> read_platform(const Reader& r, const YAML::Node& node) {
  const std::string text = r.scalar(node, "platform");
  const auto p = parse_platform(text);
  if (!p) {
    const auto known = known_platforms();
    r.fail(node, fmt::format("unknown platform '{}'{}", text, did_you_mean(text, known)),
           fmt::format("use one of {}", join(known)));
  }
  return {*p, r.at(node)};
}

Located<Artifact> read_artifact(const Reader& r, const YAML::Node& node) {
  const std::string text = r.scalar(node, "artifact");
  const auto a = parse_artifact(text);
  if (!a) {
    r.fail(node,
           fmt::format("artifact must be wheel or library, not '{}'{}", text, did_you_mean(text, {"wheel", "library"})),
           "wheel: a Python wheel per torch x Python; library: the torch-free C++ library (docs/library.md)");
  }
  return {*a, r.at(node)};
}

Located<Abi> read_abi(const Reader& r, const YAML::Node& node) {
  const std::string text = r.scalar(node, "cxx11_abi");
  const auto a = parse_abi(text);
  if (!a) r.fail(node, fmt::format("cxx11_abi must be auto, TRUE or FALSE, not '{}'", text));
  return {*a, r.at(node)};
}

Provision read_provision(const Reader& r, const YAML::Node& node) {
  const std::string text = r.scalar(node, "provision");
  const auto p = parse_provision(text);
  if (!p) r.fail(node, fmt::format("provision must be container or host, not '{}'", text));
  return *p;
}

ToolkitSource read_toolkit_source(const Reader& r, const YAML::Node& node) {
  const std::string text = r.scalar(node, "toolkit");
  const auto t = parse_toolkit_source(text);
  if (!t) {
    r.fail(node, fmt::format("toolkit must be auto, host or pip, not '{}'", text),
           parse_cuda_version(text) ? "toolkit: says where toolkits come from; CUDA versions go under cuda:, e.g. "
                                      "{toolkit: \"12.9\", torch_cuda: \"12.8\"}"
                                    : "auto: a host toolkit when there is one, else NVIDIA's packages from PyPI "
                                      "(CUDA 13 and later)");
  }
  return *t;
}

namespace {

std::string arch_advice(int arch, const PackagePreset& preset) {
  // A GPU runs kernels built for an earlier minor of its own major (sm_80 code on sm_86).
  int best = 0;
  for (int known : preset.known_archs) {
    if (known / 10 == arch / 10 && known <= arch) best = known;
  }
  if (best != 0) {
    return fmt::format("sm_{} kernels also run on sm_{} GPUs: use {}", best, arch, best);
  }
  return fmt::format("{} builds {}", preset.name, to_string(preset.known_archs));
}

}  // namespace

Located<ArchList> read_archs(const Reader& r, const YAML::Node& node, const PackagePreset& preset,
                             const std::string& what) {
  std::vector<std::pair<std::string, YAML::Node>> items;
  for (const auto& item : r.scalar_list(node, what)) {
    const std::string text = item.Scalar();
    for (const auto& piece : split(text, ';')) {
      for (const auto& part : split(piece, ',')) {
        if (!trim(part).empty()) items.emplace_back(trim(part), item);
      }
    }
  }
  if (items.empty())
    r.fail(node, fmt::format("{} is empty", what), fmt::format("e.g. \"{}\"", to_string(preset.default_archs)));
  ArchList archs;
  for (const auto& [text, item] : items) {
    const auto arch = parse_arch(text);
    if (!arch) r.fail(item, fmt::format("'{}' is not a GPU arch", text), "write compute capabilities like 80;90");
    if (std::find(preset.known_archs.begin(), preset.known_archs.end(), *arch) == preset.known_archs.end()) {
      r.fail(item,
             fmt::format("arch {} is not one {} builds (it knows {}); its setup.py would silently skip it", *arch,
                         preset.name, to_string(preset.known_archs)),
             arch_advice(*arch, preset));
    }
    if (std::find(archs.begin(), archs.end(), *arch) == archs.end()) archs.push_back(*arch);
  }
  std::sort(archs.begin(), archs.end());
  return {archs, r.at(node)};
}

ArchSetting read_arch_setting(const Reader& r, const YAML::Node& node, const PackagePreset& preset) {
  ArchSetting setting;
  if (!node.IsMap()) {
    setting.all = read_archs(r, node, preset, "archs");
    return setting;
  }
  for (const auto& item : node) {
    const std::string key = r.scalar(item.first, "an archs key");
    if (key == "default") {
      setting.all = read_archs(r, item.second, preset, "archs.default");
      continue;
    }
    const auto cuda = parse_cuda_version(key);
    if (!cuda) {
      r.fail(item.first, fmt::format("archs key '{}' is neither 'default' nor a CUDA set", key),
             "e.g. archs: {default: \"80;90\", \"12.8\": \"80;90;100;120\"}");
    }
    if (setting.per_cuda.count(*cuda) != 0)
      r.fail(item.first, fmt::format("archs for CUDA {} are given twice", cuda->str()));
    setting.per_cuda.emplace(*cuda, read_archs(r, item.second, preset, "archs." + key));
  }
  return setting;
}

}  // namespace fabuild::loader
