#pragma once

// How lower layers say that something did not work: they return Expected<T> — the value, or a
// Failure saying what went wrong and what to do — rather than filling a `why` out-parameter or
// returning "" for success. tl::expected (Debian's and Ubuntu's libexpected-dev) is
// std::expected for C++20. The layers above decide what a Failure means: a cell that fails at
// one of its steps, or a UserError (util/error.h) with its exit code and location.

#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace fabuild {

struct Failure {
  std::string what;  // "cannot copy /src to /dst: No space left on device"
  std::string hint;  // what to do about it; "" when the message says it
  // Where a caller needs it: the step a cell fails at because of this ("toolkit", "python",
  // "image": a cell's site that cannot be had, app/site.h). "" for most failures.
  std::string step{};

  // As one line (a cell's FAILED line): "what; hint", or what alone.
  [[nodiscard]] std::string message() const { return hint.empty() ? what : what + "; " + hint; }
};

template <class T>
using Expected = tl::expected<T, Failure>;

inline tl::unexpected<Failure> fail(std::string what, std::string hint = {}) {
  return tl::make_unexpected(Failure{std::move(what), std::move(hint)});
}

}  // namespace fabuild
