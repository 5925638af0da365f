#pragma once

// A torch window written in `torch:` (docs/stable-abi.md): ">=2.10" (every torch series from 2.10
// on that the torch index has) or ">=2.10,<2.14" (those below 2.14 too), as pip writes a
// version specifier. The plan resolves it against the index (app/torch_window.h).

#include <optional>
#include <string>
#include <vector>

#include "util/version.h"

namespace fabuild {

struct TorchRange {
  Version floor;                 // a series or a release: the first one in
  std::optional<Version> below;  // a series or a release: the first one left out
  // Whether a torch release (or series) is in the window.
  [[nodiscard]] bool holds(const Version& release) const;
  [[nodiscard]] std::string str() const;  // ">=2.10", ">=2.10,<2.14"
};

// Whether `text` is written as a range (it starts with ">="), whatever follows.
bool is_torch_range(const std::string& text);
// nullopt: not a range, or a floor or bound that is not a series (major.minor) or release, or a
// bound not above the floor; `why` (when given) says which, in words.
std::optional<TorchRange> parse_torch_range(const std::string& text, std::string* why = nullptr);

// A list of torch values split at its commas (--set torch=..., --torch ...) with each range's
// bound joined back onto its floor: ">=2.10", "<2.14", "2.8" -> ">=2.10,<2.14", "2.8".
std::vector<std::string> join_torch_range_bounds(const std::vector<std::string>& values);

}  // namespace fabuild
