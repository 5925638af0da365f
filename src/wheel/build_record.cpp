#include "wheel/build_record.h"

#include <nlohmann/json.hpp>

namespace fabuild {

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
