#pragma once

// Re-running a finished matrix must not read every filed wheel again: a FlashAttention wheel is
// hundreds of megabytes, and checking one is hashing it whole and every member inside it.
// When a filed wheel has been verified (when it was filed, or by a re-run), fabuild notes the
// file's identity — device, inode, size, modification and change times to the nanosecond — in
// WHEELHOUSE/.verified.json, with the manifest's sha256 and what the cell expects of it. A
// later run whose wheel still has that identity takes it as verified; anything else (the file
// rewritten, replaced, touched, its manifest entry or the cell's expectation changed) is
// checked in full again. The change time cannot be set back by a user, so a wheel modified in
// place, even with its modification time restored, is always read again.

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "util/files.h"
#include "wheel/manifest.h"
#include "wheel/verify.h"

namespace fabuild {

inline constexpr const char* kVerifiedStampsName = ".verified.json";

class VerifiedStamps {
 public:
  // Reads WHEELHOUSE/.verified.json through `files` (System's), which also tell each wheel's
  // identity and write the stamps back; a missing or damaged file is empty (everything is checked).
  VerifiedStamps(Files& files, std::filesystem::path wheelhouse);

  // Whether `entry`'s wheel was verified against `expected` and is the same file since.
  [[nodiscard]] bool fresh(const std::string& cell_id, const FiledWheel& entry, const WheelExpectation& expected) const;
  // Notes that `entry`'s wheel, as it is now, verified against `expected`.
  void stamp(const std::string& cell_id, const FiledWheel& entry, const WheelExpectation& expected);
  // Writes the file (atomically) if a stamp was added. A file that cannot be written loses
  // only time: the next run reads those wheels again (the caller says so).
  [[nodiscard]] Expected<void> save() const;

  // Reads WHEELHOUSE/.verified.json, stamps one wheel and writes it back, one such at a time in
  // this process: cells file on worker threads (a Step's run_inline, engine/runner.h), and two
  // read-modify-writes at once would keep one stamp of the two.
  static Expected<void> stamp_one(Files& files, const std::filesystem::path& wheelhouse, const std::string& cell_id,
                                  const FiledWheel& entry, const WheelExpectation& expected);

 private:
  [[nodiscard]] nlohmann::json identity(const std::filesystem::path& path) const;

  Files& files_;
  std::filesystem::path wheelhouse_;
  nlohmann::json cells_ = nlohmann::json::object();
  bool changed_ = false;
};

}  // namespace fabuild
