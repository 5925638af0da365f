#include "costs/job_setup.h"

#include <charconv>

#include <fmt/format.h>

namespace fabuild {

Expected<double> job_elapsed_since(const std::string& started, std::int64_t now) {
  constexpr std::int64_t kWeek = 7 * 24 * 3600;
  std::int64_t at = 0;
  const auto [end, ec] = std::from_chars(started.data(), started.data() + started.size(), at);
  const std::string hint = "set it to the job's start in seconds since 1970 (date +%s), or unset it";
  if (ec != std::errc() || end != started.data() + started.size() || started.empty()) {
    return fail(fmt::format("FABUILD_JOB_STARTED={} is not seconds since 1970", started), hint);
  }
  if (at > now || now - at > kWeek) {
    return fail(fmt::format("FABUILD_JOB_STARTED={} is {} seconds {} now, not a CI job's start", started,
                            at > now ? at - now : now - at, at > now ? "after" : "before"),
                hint);
  }
  return static_cast<double>(now - at);
}

void JobSetups::compile_starts(const std::string& row_key) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!measured_) {
    setup_s_ = elapsed_s_ ? elapsed_s_() : std::nullopt;
    measured_ = true;
  }
  started_.insert(row_key);
}

std::optional<double> JobSetups::take(const std::string& row_key) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!setup_s_ || started_.count(row_key) == 0 || !taken_.insert(row_key).second) return std::nullopt;
  return setup_s_;
}

}  // namespace fabuild
