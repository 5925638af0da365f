// `container:` in the matrix (docs/containers.md).

#include <algorithm>

#include <fmt/format.h>

#include "matrix/container_engines.h"
#include "matrix/loader.h"
#include "matrix/loader_parts.h"
#include "util/text.h"

namespace fabuild::loader {

namespace {

using yaml::Reader;

const std::vector<std::string> kContainerKeys = {"engine",    "images",  "pull",   "python",
                                                 "cuda_home", "toolkit", "network"};

// Rejects a {placeholder} outside `allowed` ("{{"/"}}" are not placeholders here either).
void check_placeholders(const Reader& r, const YAML::Node& node, const std::string& text,
                        const std::vector<std::string>& allowed) {
  for (std::size_t open = text.find('{'); open != std::string::npos; open = text.find('{', open + 1)) {
    const std::size_t close = text.find('}', open);
    if (close == std::string::npos) break;
    const std::string name = text.substr(open + 1, close - open - 1);
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      r.fail(node, fmt::format("unknown placeholder {{{}}} in '{}'{}", name, text, did_you_mean(name, allowed)),
             fmt::format("this value may use {}", "{" + join(allowed, "}, {") + "}"));
    }
  }
}

std::vector<std::string> image_list(const Reader& r, const YAML::Node& node, const std::string& what) {
  std::vector<std::string> images;
  for (const auto& item : r.scalar_list(node, what)) {
    std::string name = r.scalar(item, what);
    if (name.empty() || name.find_first_of(" \t\n") != std::string::npos || name.front() == '-') {
      r.fail(item, fmt::format("'{}' is not an image name", name), "e.g. pytorch/manylinux2_28-builder:cuda{cuda}");
    }
    check_placeholders(r, item, name, {"cuda", "cuda_series", "rocm", "rocm_series"});
    images.push_back(std::move(name));
  }
  return images;
}

std::string absolute_in_image(const Reader& r, const YAML::Node& node, const std::string& what) {
  std::string path = r.scalar(node, what);
  if (path.empty() || path.front() != '/') {
    r.fail(node, fmt::format("{} must be an absolute path in the image, not '{}'", what, path),
           what == "python" ? "e.g. /opt/python/{python}-{python}/bin/python" : "e.g. /usr/local/cuda");
  }
  return path;
}

// container.images: a list for every cell, or keyed by CUDA toolkit, ROCm set, default and
// rocm_default; a platform key (linux_aarch64) holds the same for that platform's cells, stored
// as "linux_aarch64/12.8".
void read_images(const Reader& r, const YAML::Node& n, const std::string& name, const std::string& platform,
                 std::map<std::string, std::vector<std::string>>& images) {
  const std::string prefix = platform.empty() ? "" : platform + "/";
  const std::string what = name + (platform.empty() ? "" : "." + platform);
  if (!n.IsMap()) {
    images[prefix + "default"] = image_list(r, n, what);
    return;
  }
  for (const auto& item : n) {
    const std::string key = r.scalar(item.first, what);
    if (platform.empty()) {
      if (const auto p = parse_platform(key); p && *p != Platform::kWinAmd64) {
        read_images(r, item.second, name, to_string(*p), images);
        continue;
      }
    }
    const auto canonical = image_key(key);
    if (!canonical) {
      r.fail(item.first,
             fmt::format(
                 "{} is keyed by {}CUDA toolkit version, ROCm set (rocm6.2), 'default' or 'rocm_default', not '{}'",
                 what, platform.empty() ? "platform (linux_aarch64), " : "", key),
             "e.g. images: {\"12.8\": [pytorch/manylinux2_28-builder:cuda12.8], linux_aarch64: {default: [...]}}");
    }
    images[prefix + *canonical] = image_list(r, item.second, what + "." + key);
  }
}

}  // namespace

ContainerSpec read_container(const Reader& r, const YAML::Node& node) {
  r.expect_map(node, "container");
  r.check_keys(node, kContainerKeys, "container");
  ContainerSpec c;
  c.where = r.at(node);
  if (const auto n = node["engine"]) {
    c.engine = r.scalar(n, "container.engine");
    if (c.engine == "auto") c.engine.clear();
    if (!c.engine.empty() && engine_kind(c.engine) == nullptr) {
      r.fail(n, fmt::format("container.engine must be {} or auto, not '{}'", engine_names(), c.engine));
    }
  }
  if (const auto n = node["images"]) c.images = read_image_table(r, n, "container.images");
  if (const auto n = node["pull"]) {
    const std::string p = r.scalar(n, "container.pull");
    if (p == "missing") {
      c.pull = PullPolicy::kMissing;
    } else if (p == "always") {
      c.pull = PullPolicy::kAlways;
    } else if (p == "never") {
      c.pull = PullPolicy::kNever;
    } else {
      r.fail(n, fmt::format("container.pull must be missing, always or never, not '{}'", p));
    }
  }
  if (const auto n = node["python"]) {
    c.python = absolute_in_image(r, n, "python");
    check_placeholders(r, n, c.python, {"python", "python_version"});
  }
  if (const auto n = node["cuda_home"]) c.cuda_home = absolute_in_image(r, n, "cuda_home");
  if (const auto n = node["toolkit"]) {
    const std::string t = r.scalar(n, "container.toolkit");
    if (t != "image" && t != "host") {
      r.fail(n, fmt::format("container.toolkit must be image or host, not '{}'", t),
             "host mounts this machine's CUDA toolkit (found as for provision: host) read-only into the container");
    }
    c.host_toolkit = t == "host";
  }
  if (const auto n = node["network"]) {
    c.network = r.scalar(n, "container.network");
    if (c.network == "default") c.network.clear();
    if (c.network.find_first_of(" \t\n") != std::string::npos || (!c.network.empty() && c.network.front() == '-')) {
      r.fail(n, fmt::format("'{}' is not a network name", c.network), "none, host, default or a network's name");
    }
  }
  return c;
}

}  // namespace fabuild::loader

namespace fabuild {

std::map<std::string, std::vector<std::string>> read_image_table(const yaml::Reader& r, const YAML::Node& node,
                                                                 const std::string& what) {
  std::map<std::string, std::vector<std::string>> images;
  loader::read_images(r, node, what, "", images);
  return images;
}

}  // namespace fabuild
