#pragma once

// What the in-process steps of a package or library cell find out and hand forward as values:
// made where the cell's steps are assembled, and shared by their closures. The string facts of
// engine/facts.h stay for what a process prints (torch's version from the torch check) and for
// what leaves the run in a cell's outcome. A cell's steps run one after another (the runner joins
// each in-process step's worker before it starts the next), so nothing here needs a lock.

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "util/clock.h"

namespace fabuild {

struct CellFindings {
  explicit CellFindings(SteadyNow clock) : clock_(std::move(clock)) {}

  // The verify step's: the one wheel the build left, under its final name (the retag step's
  // wheel after it); the steps after verify unpack, retag and file this file.
  std::filesystem::path wheel;
  // When its source was in place (the source steps): its manifest entry's build time counts
  // from here.
  std::optional<std::chrono::steady_clock::time_point> build_started;
  // The export check's: each C++ entry point the library exports, and how it is named there.
  std::map<std::string, std::string> exports;
  // The glibc step's: what the wheel's ELF modules need ("glibc" -> "2.28", "glibcxx" ->
  // "3.4.21"); empty when it has none.
  std::map<std::string, std::string> needs;
  // The GPU code step's: each compiled module's archs, "sm_90, PTX sm_90"; empty when there is
  // none or it could not be read.
  std::map<std::string, std::string> gpu_code;

  // The source is in place: build_started is now.
  void mark_build_started() { build_started = clock_(); }
  // Seconds from build_started to now (0 without it).
  [[nodiscard]] double build_seconds() const {
    return build_started ? std::chrono::duration<double>(clock_() - *build_started).count() : 0;
  }

 private:
  SteadyNow clock_;  // System's steady_now
};

}  // namespace fabuild
