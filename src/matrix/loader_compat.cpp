#include <fmt/format.h>

#include "matrix/loader_parts.h"
#include "util/text.h"

namespace fabuild::loader {

using yaml::Reader;

namespace {

Version version_key(const Reader& r, const YAML::Node& key, const std::string& what) {
  const std::string text = r.scalar(key, what);
  const auto v = Version::parse(trim(text));
  if (!v) r.fail(key, fmt::format("'{}' is not a version ({})", text, what));
  return *v;
}

Version torch_series_key(const Reader& r, const YAML::Node& key, const std::string& what) {
  const Version v = version_key(r, key, what);
  if (v.release().size() != 2)
    r.fail(key, fmt::format("{} keys are torch series like 2.8, not '{}'", what, key.Scalar()));
  return v;
}

Version cuda_value(const Reader& r, const YAML::Node& node, const std::string& what) {
  const std::string text = r.scalar(node, what);
  const auto v = parse_cuda_version(text);
  if (!v) r.fail(node, fmt::format("'{}' is not a CUDA version ({})", text, what), "write major.minor like 12.8");
  return *v;
}

PythonTag python_bound(const Reader& r, const YAML::Node& node, const std::string& text) {
  const auto tag = PythonTag::parse(text);
  if (!tag) r.fail(node, fmt::format("'{}' is not a Python version", text), "write a range like \"3.10-3.14\"");
  return tag->release();  // "3.13t-3.14t" is the versions 3.13 to 3.14
}

CompatTables::PythonRange python_range(const Reader& r, const YAML::Node& node) {
  std::vector<std::string> bounds;
  if (node.IsSequence()) {
    for (const auto& item : node) bounds.push_back(r.scalar(item, "compat.torch_python bound"));
  } else {
    bounds = split(r.scalar(node, "compat.torch_python"), '-');
  }
  if (bounds.size() != 2) r.fail(node, "a Python range has two ends", "write \"3.10-3.14\" or [\"3.10\", \"3.14\"]");
  CompatTables::PythonRange range{python_bound(r, node, trim(bounds[0])), python_bound(r, node, trim(bounds[1]))};
  if (range.max < range.min) r.fail(node, "the Python range ends before it starts");
  return range;
}

// "2.6": {"12.6": TRUE, linux_aarch64: TRUE}: by CUDA build or by platform.
CompatTables::AbiExceptions abi_exceptions(const Reader& r, const YAML::Node& node, const std::string& what) {
  r.expect_map(node, what);
  CompatTables::AbiExceptions out;
  for (const auto& item : node) {
    const std::string key = trim(r.scalar(item.first, what + " key"));
    const std::string value = trim(r.scalar(item.second, what + "." + key));
    const auto abi = parse_abi(value);
    if (!abi || *abi == Abi::kAuto) r.fail(item.second, fmt::format("'{}' is not TRUE or FALSE ({})", value, what));
    if (const auto platform = parse_platform(key)) {
      out.platform[*platform] = *abi;
    } else if (const auto cuda = parse_cuda_version(key)) {
      out.cuda[*cuda] = *abi;
    } else {
      r.fail(item.first, fmt::format("'{}' is neither a CUDA build nor a platform ({})", key, what),
             "write a torch CUDA build such as \"12.6\" or a platform such as linux_aarch64");
    }
  }
  return out;
}

}  // namespace

void read_compat(const Reader& r, const YAML::Node& node, CompatTables& tables, const PackagePreset& preset) {
  r.expect_map(node, "compat");
  r.check_keys(node,
               {"torch_cuda", "torch_pypi_cuda", "torch_rocm", "torch_python", "fa_min_torch", "arch_min_cuda",
                "cxx11_abi_from", "torch_abi", "torch_build_for_abi", "torch_free_threaded"},
               "compat");

  if (const auto n = node["torch_cuda"]) {
    r.expect_map(n, "compat.torch_cuda");
    for (const auto& item : n) {
      std::vector<Version> builds;
      for (const auto& b : r.scalar_list(item.second, "compat.torch_cuda." + item.first.Scalar())) {
        builds.push_back(cuda_value(r, b, "compat.torch_cuda"));
      }
      std::sort(builds.begin(), builds.end());
      tables.torch_cuda[torch_series_key(r, item.first, "compat.torch_cuda")] = builds;
    }
  }
  if (const auto n = node["torch_pypi_cuda"]) {
    r.expect_map(n, "compat.torch_pypi_cuda");
    for (const auto& item : n) {
      tables.torch_pypi_cuda[torch_series_key(r, item.first, "compat.torch_pypi_cuda")] =
          cuda_value(r, item.second, "compat.torch_pypi_cuda");
    }
  }
  if (const auto n = node["torch_rocm"]) {
    r.expect_map(n, "compat.torch_rocm");
    for (const auto& item : n) {
      std::vector<Version> builds;
      for (const auto& b : r.scalar_list(item.second, "compat.torch_rocm." + item.first.Scalar())) {
        const auto v = parse_rocm_version(r.scalar(b, "compat.torch_rocm"));
        if (!v) r.fail(b, fmt::format("'{}' is not a ROCm version (compat.torch_rocm)", b.Scalar()), "e.g. 6.2.4");
        builds.push_back(*v);
      }
      std::sort(builds.begin(), builds.end());
      tables.torch_rocm[torch_series_key(r, item.first, "compat.torch_rocm")] = builds;
    }
  }
  if (const auto n = node["torch_python"]) {
    r.expect_map(n, "compat.torch_python");
    for (const auto& item : n) {
      tables.torch_python[torch_series_key(r, item.first, "compat.torch_python")] = python_range(r, item.second);
    }
  }
  if (const auto n = node["torch_free_threaded"]) {
    r.expect_map(n, "compat.torch_free_threaded");
    for (const auto& item : n) {
      tables.torch_free_threaded[torch_series_key(r, item.first, "compat.torch_free_threaded")] =
          python_range(r, item.second);
    }
  }
  if (const auto n = node["fa_min_torch"]) {
    r.expect_map(n, "compat.fa_min_torch");
    for (const auto& item : n) {
      const Version fa = version_key(r, item.first, "compat.fa_min_torch");
      const Version torch = version_key(r, item.second, "compat.fa_min_torch value");
      auto& list = tables.fa_min_torch;
      list.erase(std::remove_if(list.begin(), list.end(),
                                [&](const auto& e) {
                                  return e.fa_prefix == fa && e.fa_prefix.release().size() == fa.release().size();
                                }),
                 list.end());
      list.push_back({fa, torch});
    }
  }
  if (const auto n = node["arch_min_cuda"]) {
    r.expect_map(n, "compat.arch_min_cuda");
    for (const auto& item : n) {
      const auto arch = parse_arch(r.scalar(item.first, "compat.arch_min_cuda key"));
      if (!arch || std::find(preset.known_archs.begin(), preset.known_archs.end(), *arch) == preset.known_archs.end()) {
        r.fail(item.first, fmt::format("'{}' is not an arch {} builds", item.first.Scalar(), preset.name),
               fmt::format("it knows {}", to_string(preset.known_archs)));
      }
      tables.arch_min_cuda[*arch] = cuda_value(r, item.second, "compat.arch_min_cuda");
    }
  }
  if (const auto n = node["cxx11_abi_from"]) tables.cxx11_abi_from = torch_series_key(r, n, "compat.cxx11_abi_from");
  if (const auto n = node["torch_abi"]) {
    r.expect_map(n, "compat.torch_abi");
    for (const auto& item : n) {
      const std::string what = "compat.torch_abi." + item.first.Scalar();
      tables.torch_abi[torch_series_key(r, item.first, "compat.torch_abi")] = abi_exceptions(r, item.second, what);
    }
  }
  if (const auto n = node["torch_build_for_abi"]) {
    const std::string text = trim(r.scalar(n, "compat.torch_build_for_abi"));
    if (text != "switch" && text != "drop") {
      r.fail(n, fmt::format("compat.torch_build_for_abi: '{}' is neither switch nor drop", text),
             "switch builds a cxx11abiFALSE cell against its torch series' old-ABI CUDA build; drop (the default) "
             "leaves it out");
    }
    tables.switch_torch_build_for_abi = text == "switch";
  }
}

}  // namespace fabuild::loader
