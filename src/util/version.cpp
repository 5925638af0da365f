#include "util/version.h"

#include <climits>
#include <regex>
#include <tuple>

#include <fmt/format.h>

namespace fabuild {

namespace {

int to_int(const std::string& digits) {
  // Bounded by the pattern to 6 digits, so stoi cannot overflow.
  return std::stoi(digits);
}

// Sort key of the pre-release part: a dev-only release sorts before its alphas, a final
// release after its release candidates.
std::pair<int, int> pre_key(const std::string& label, int number, bool has_dev, bool has_post) {
  if (label == "a") return {0, number};
  if (label == "b") return {1, number};
  if (label == "rc") return {2, number};
  if (has_dev && !has_post) return {-1, 0};
  return {3, 0};
}

constexpr std::size_t kMaxVersionLength = 64;

}  // namespace

std::optional<Version> Version::parse(std::string_view text) {
  // libstdc++'s std::regex recurses once per repetition: a megabyte "1.1.1..." from a matrix
  // would overflow the stack. No real version is this long.
  if (text.size() > kMaxVersionLength) return std::nullopt;
  // Nearly every version is plain numbers ("2.8.3", "13.0"): read those without the regex,
  // which costs microseconds a call where a matrix of 100 000 cells makes a million calls.
  if (!text.empty() && text.find_first_not_of("0123456789.") == std::string_view::npos && text.front() != '.' &&
      text.back() != '.' && text.find("..") == std::string_view::npos) {
    Version v;
    std::size_t start = 0;
    while (start < text.size()) {
      const std::size_t end = std::min(text.find('.', start), text.size());
      if (end - start > 6) return std::nullopt;
      int n = 0;
      for (std::size_t i = start; i < end; ++i) n = n * 10 + (text[i] - '0');
      v.release_.push_back(n);
      start = end + 1;
    }
    return v;
  }
  static const std::regex pattern(
      R"(^v?(\d{1,6}(?:\.\d{1,6})*)(?:(a|b|rc)(\d{1,6}))?(?:\.?post(\d{1,6}))?(?:\.?dev(\d{1,6}))?$)",
      std::regex::optimize);
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(text.begin(), text.end(), m, pattern)) return std::nullopt;

  Version v;
  const std::string release = m[1].str();
  std::size_t start = 0;
  while (start <= release.size()) {
    const std::size_t dot = release.find('.', start);
    const std::size_t end = dot == std::string::npos ? release.size() : dot;
    v.release_.push_back(to_int(release.substr(start, end - start)));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (m[2].matched) {
    v.pre_label_ = m[2].str();
    v.pre_number_ = to_int(m[3].str());
  }
  if (m[4].matched) v.post_ = to_int(m[4].str());
  if (m[5].matched) v.dev_ = to_int(m[5].str());
  return v;
}

std::string Version::series() const { return fmt::format("{}.{}", major(), minor()); }

std::string Version::str() const {
  std::string out = fmt::format("{}", fmt::join(release_, "."));
  if (!pre_label_.empty()) out += fmt::format("{}{}", pre_label_, pre_number_);
  if (post_) out += fmt::format(".post{}", *post_);
  if (dev_) out += fmt::format(".dev{}", *dev_);
  return out;
}

bool Version::has_prefix(const Version& prefix) const {
  if (prefix.release_.size() > release_.size()) return false;
  for (std::size_t i = 0; i < prefix.release_.size(); ++i) {
    if (prefix.release_[i] != release_[i]) return false;
  }
  return true;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
  const std::size_t n = std::max(a.release_.size(), b.release_.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (auto c = a.part(i) <=> b.part(i); c != 0) return c;
  }
  const auto key = [](const Version& v) {
    return std::make_tuple(pre_key(v.pre_label_, v.pre_number_, v.dev_.has_value(), v.post_.has_value()),
                           v.post_.value_or(-1), v.dev_.value_or(INT_MAX));
  };
  return key(a) <=> key(b);
}

}  // namespace fabuild
