#include "objcache/share.h"

#include <charconv>
#include <string_view>

namespace fabuild::objcache {

namespace {

constexpr std::string_view kHeader = "fabuild compile share 1";

std::optional<int> whole_number(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

int ShareSplit::share_of(const std::string& source) const {
  const auto it = unit_share.find(source);
  return it != unit_share.end() ? it->second : 0;
}

std::string write_share_file(const ShareSplit& split) {
  std::string text(kHeader);
  text += "\nshare " + std::to_string(split.index) + "/" + std::to_string(split.count) + "\n";
  for (const auto& [path, k] : split.unit_share) text += std::to_string(k) + "\t" + path + "\n";
  return text;
}

std::optional<ShareSplit> parse_share_file(const std::string& text) {
  ShareSplit split;
  std::string_view rest(text);
  const auto next_line = [&]() -> std::optional<std::string_view> {
    if (rest.empty()) return std::nullopt;
    const auto nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    return line;
  };
  if (next_line() != kHeader) return std::nullopt;
  const auto share = next_line();
  if (!share || !share->starts_with("share ")) return std::nullopt;
  const std::string_view kn = share->substr(6);
  const auto slash = kn.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto k = whole_number(kn.substr(0, slash));
  const auto n = whole_number(kn.substr(slash + 1));
  if (!k || !n || *n < 1 || *k < 1 || *k > *n) return std::nullopt;
  split.index = *k;
  split.count = *n;
  while (const auto line = next_line()) {
    if (line->empty()) continue;
    const auto tab = line->find('\t');
    if (tab == std::string_view::npos) return std::nullopt;
    const auto unit = whole_number(line->substr(0, tab));
    if (!unit || *unit < 1 || *unit > *n) return std::nullopt;
    split.unit_share[std::string(line->substr(tab + 1))] = *unit;
  }
  return split;
}

}  // namespace fabuild::objcache
