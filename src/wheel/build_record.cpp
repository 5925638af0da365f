#include "wheel/build_record.h"

#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace fabuild {

namespace {

// A build record as "path = value" leaves ("toolchain.nvcc_build" -> "\"13.0.88\"").
void leaves(const nlohmann::json& j, const std::string& at, std::map<std::string, std::string>& out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) leaves(value, at.empty() ? key : at + "." + key, out);
  } else {
    out[at] = j.dump();
  }
}

}  // namespace

std::vector<std::string> build_record_differences(const std::string& filed, const std::string& rebuilt) {
  const auto a = nlohmann::json::parse(filed, nullptr, false);
  const auto b = nlohmann::json::parse(rebuilt, nullptr, false);
  if (!a.is_object() || !b.is_object()) return {};
  std::map<std::string, std::string> was;
  std::map<std::string, std::string> now;
  leaves(a, "", was);
  leaves(b, "", now);
  const auto input = [](const std::string& path) {
    return !path.starts_with("file.") && !path.starts_with("object_cache.") && !path.starts_with("ci.");
  };
  std::vector<std::string> out;
  for (const auto& [path, value] : was) {
    if (!input(path)) continue;
    const auto other = now.find(path);
    if (other == now.end()) {
      out.push_back(fmt::format("{} ({} filed, none now)", path, value));
    } else if (other->second != value) {
      out.push_back(fmt::format("{} ({} filed, {} now)", path, value, other->second));
    }
  }
  for (const auto& [path, value] : now) {
    if (input(path) && !was.count(path)) out.push_back(fmt::format("{} (none filed, {} now)", path, value));
  }
  return out;
}

bool is_build_record_name(std::string_view name) {
  if (!name.ends_with(kBuildRecordSuffix)) return false;
  name.remove_suffix(std::string_view(kBuildRecordSuffix).size());
  return (name.size() > 4 && name.ends_with(".whl")) || (name.size() > 7 && name.ends_with(".tar.gz"));
}

std::string build_record_text(const std::string& cell_id, const FiledWheel& entry) {
  if (entry.build.empty()) return "";
  nlohmann::json record = nlohmann::json::parse(entry.build, nullptr, false);
  if (!record.is_object()) return "";
  const auto slash = entry.wheel.rfind('/');
  record["format"] = kBuildRecordFormat;
  record["cell"] = cell_id;
  record["file"] = {{"name", slash == std::string::npos ? entry.wheel : entry.wheel.substr(slash + 1)},
                    {"sha256", entry.sha256},
                    {"size", entry.size}};
  record["toolchain"] = entry.versions;
  if (!entry.image.empty()) {
    record["toolchain"]["image"] = entry.image;
    record["toolchain"]["image_id"] = entry.image_id;
    if (!entry.image_digest.empty()) record["toolchain"]["image_digest"] = entry.image_digest;
  }
  if (!entry.patches.empty()) record["patches"] = entry.patches;
  if (!entry.object_cache.empty()) record["object_cache"]["compiles"] = entry.object_cache;
  return record.dump(2) + "\n";
}

}  // namespace fabuild
