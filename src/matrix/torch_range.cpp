#include "matrix/torch_range.h"

#include "util/text.h"

namespace fabuild {

namespace {

std::optional<Version> series_or_release(const std::string& text) {
  const auto v = Version::parse(trim(text));
  if (!v || v->release().size() < 2) return std::nullopt;
  return v;
}

}  // namespace

bool TorchRange::holds(const Version& release) const { return !(release < floor) && (!below || release < *below); }

std::string TorchRange::str() const { return ">=" + floor.str() + (below ? ",<" + below->str() : ""); }

bool is_torch_range(const std::string& text) { return trim(text).starts_with(">="); }

std::optional<TorchRange> parse_torch_range(const std::string& text, std::string* why) {
  const auto fail = [&](std::string reason) -> std::optional<TorchRange> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  const std::string t = trim(text);
  if (!t.starts_with(">=")) return fail("a range starts with >=");
  const std::size_t comma = t.find(',');
  const std::string floor_text = trim(t.substr(2, comma == std::string::npos ? std::string::npos : comma - 2));
  const auto floor = series_or_release(floor_text);
  if (!floor) return fail("its floor '" + floor_text + "' is not a torch series or release");
  TorchRange range{*floor, std::nullopt};
  if (comma == std::string::npos) return range;
  const std::string bound = trim(t.substr(comma + 1));
  if (bound.starts_with("<=")) return fail("its bound is the first series left out, written with <");
  if (!bound.starts_with("<")) return fail("after the comma comes the first series left out, written with <");
  range.below = series_or_release(bound.substr(1));
  if (!range.below) return fail("its bound '" + trim(bound.substr(1)) + "' is not a torch series or release");
  if (!(range.floor < *range.below))
    return fail("its bound " + range.below->str() + " is not above its floor " + range.floor.str());
  return range;
}

std::vector<std::string> join_torch_range_bounds(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const auto& value : values) {
    const std::string v = trim(value);
    if (v.starts_with("<") && !out.empty() && out.back().starts_with(">=") &&
        out.back().find(',') == std::string::npos) {
      out.back() += "," + v;
      continue;
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace fabuild
