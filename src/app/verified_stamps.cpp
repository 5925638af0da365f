#include "app/verified_stamps.h"

#include <mutex>

#include <fmt/format.h>

#include "util/error.h"
#include "util/json_read.h"
#include "util/text.h"

namespace fabuild {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Bump when verify_wheel checks more: stamps made by an older fabuild then no longer count.
constexpr int kStampVersion = 1;

std::string expectation_key(const WheelExpectation& e) {
  return join({e.dist_name, e.version, e.python_tag, e.abi_tag, e.platform_tag, join(e.required_members, ",")}, "|");
}

}  // namespace

// The file's identity now, or null when it is not a regular file.
json VerifiedStamps::identity(const fs::path& path) const {
  const std::optional<FileIdentity> id = files_.identity(path);
  if (!id) return nullptr;
  return json::array({id->device, id->inode, id->size, id->modified_ns, id->changed_ns});
}

VerifiedStamps::VerifiedStamps(Files& files, fs::path wheelhouse) : files_(files), wheelhouse_(std::move(wheelhouse)) {
  const Expected<std::string> text = files_.read(wheelhouse_ / kVerifiedStampsName);
  if (!text) return;
  // Damaged: every wheel is checked in full, and the file rewritten.
  const std::optional<json> doc = parse_json(*text);
  const std::optional<json> cells = doc ? json_field<json>(*doc, "cells") : std::nullopt;
  if (doc && json_field<int>(*doc, "version") == kStampVersion && cells && cells->is_object()) cells_ = *cells;
}

bool VerifiedStamps::fresh(const std::string& cell_id, const FiledWheel& entry,
                           const WheelExpectation& expected) const {
  const auto it = cells_.find(cell_id);
  if (it == cells_.end() || !it->is_object()) return false;
  const json now = identity(wheelhouse_ / entry.wheel);
  return !now.is_null() && it->value("wheel", "") == entry.wheel && it->value("sha256", "") == entry.sha256 &&
         it->value("expects", "") == expectation_key(expected) && it->value("file", json()) == now;
}

void VerifiedStamps::stamp(const std::string& cell_id, const FiledWheel& entry, const WheelExpectation& expected) {
  const json now = identity(wheelhouse_ / entry.wheel);
  if (now.is_null()) return;
  cells_[cell_id] =
      json{{"wheel", entry.wheel}, {"sha256", entry.sha256}, {"expects", expectation_key(expected)}, {"file", now}};
  changed_ = true;
}

Expected<void> VerifiedStamps::stamp_one(Files& files, const fs::path& wheelhouse, const std::string& cell_id,
                                         const FiledWheel& entry, const WheelExpectation& expected) {
  static std::mutex one_at_a_time;
  const std::lock_guard<std::mutex> lock(one_at_a_time);
  VerifiedStamps stamps(files, wheelhouse);
  stamps.stamp(cell_id, entry, expected);
  return stamps.save();
}

Expected<void> VerifiedStamps::save() const {
  if (!changed_ || !files_.is_directory(wheelhouse_)) return {};
  const Expected<void> written = files_.write(wheelhouse_ / kVerifiedStampsName,
                                              json{{"version", kStampVersion}, {"cells", cells_}}.dump(1) + "\n");
  if (!written) {
    return fail(
        fmt::format("cannot keep which wheels verified: {}", written.error().what),
        "the next run reads those wheels again; check that the wheelhouse is writable and its disk is not full");
  }
  return {};
}

}  // namespace fabuild
