#include "util/version.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <regex>
#include <tuple>

namespace fabuild {

namespace {

int to_int(const std::string& digits) {
  // Bounded by the pattern to 6 digits, so stoi cannot overflow.
  return std::stoi(digits);
}

// Sort key of the pre-release part (0: none, 1: a, 2: b, 3: rc): a dev-only release sorts
// before its alphas, a final release after its release candidates.
std::pair<int, int> pre_key(int label, int number, bool has_dev, bool has_post) {
  if (label > 0) return {label - 1, number};
  if (has_dev && !has_post) return {-1, 0};
  return {3, 0};
}

constexpr std::size_t kMaxVersionLength = 64;

// What fmt's "{}" writes for an int, without its format-string machinery: ids and paths of a
// 100 000-cell matrix spell versions millions of times.
void append_int(std::string& out, int n) {
  char digits[16];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out.append(digits, end);
}

}  // namespace

std::optional<Version> Version::parse(std::string_view text) {
  // libstdc++'s std::regex recurses once per repetition: a megabyte "1.1.1..." from a matrix
  // would overflow the stack. No real version is this long.
  if (text.size() > kMaxVersionLength) return std::nullopt;
  // Nearly every version is plain numbers ("2.8.3", "13.0"): read those without the regex,
  // which costs microseconds a call where a matrix of 100 000 cells makes a million calls.
  if (!text.empty() && text.find_first_not_of("0123456789.") == std::string_view::npos && text.front() != '.' &&
      text.back() != '.' && text.find("..") == std::string_view::npos) {
    std::array<int, kMaxVersionLength> numbers{};
    std::size_t count = 0;
    std::size_t start = 0;
    while (start < text.size()) {
      const std::size_t end = std::min(text.find('.', start), text.size());
      if (end - start > 6) return std::nullopt;
      int n = 0;
      for (std::size_t i = start; i < end; ++i) n = n * 10 + (text[i] - '0');
      numbers[count++] = n;
      start = end + 1;
    }
    Version v;
    v.set_release({numbers.data(), count});
    return v;
  }
  static const std::regex pattern(
      R"(^v?(\d{1,6}(?:\.\d{1,6})*)(?:(a|b|rc)(\d{1,6}))?(?:\.?post(\d{1,6}))?(?:\.?dev(\d{1,9}))?$)",
      std::regex::optimize);
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(text.begin(), text.end(), m, pattern)) return std::nullopt;

  Version v;
  const std::string release = m[1].str();
  std::array<int, kMaxVersionLength> numbers{};
  std::size_t count = 0;
  std::size_t start = 0;
  while (start <= release.size()) {
    const std::size_t dot = release.find('.', start);
    const std::size_t end = dot == std::string::npos ? release.size() : dot;
    numbers[count++] = to_int(release.substr(start, end - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  v.set_release({numbers.data(), count});
  if (m[2].matched) {
    v.pre_ = m[2].str() == "a" ? Pre::kA : m[2].str() == "b" ? Pre::kB : Pre::kRc;
    v.pre_number_ = to_int(m[3].str());
  }
  if (m[4].matched) v.post_ = to_int(m[4].str());
  if (m[5].matched) v.dev_ = to_int(m[5].str());
  return v;
}

Version::Version(Version&& other) noexcept
    : size_(other.size_), pre_(other.pre_), pre_number_(other.pre_number_), post_(other.post_), dev_(other.dev_) {
  if (size_ > kInline) {
    long_ = other.long_;  // its numbers come with it
    other.size_ = 0;
  } else {
    head_ = other.head_;
  }
}

Version& Version::operator=(const Version& other) {
  if (this == &other) return *this;
  pre_ = other.pre_;
  pre_number_ = other.pre_number_;
  post_ = other.post_;
  dev_ = other.dev_;
  set_release(other.release());
  return *this;
}

Version& Version::operator=(Version&& other) noexcept {
  if (this == &other) return *this;
  free_long();
  size_ = other.size_;
  pre_ = other.pre_;
  pre_number_ = other.pre_number_;
  post_ = other.post_;
  dev_ = other.dev_;
  if (size_ > kInline) {
    long_ = other.long_;
    other.size_ = 0;
  } else {
    head_ = other.head_;
  }
  return *this;
}

void Version::set_release(std::span<const int> numbers) {
  free_long();
  size_ = static_cast<std::uint8_t>(numbers.size());
  if (numbers.size() <= kInline) {
    head_ = {};
    std::copy(numbers.begin(), numbers.end(), head_.begin());
    return;
  }
  copy_long(numbers);
}

void Version::copy_long(std::span<const int> numbers) {
  long_ = new int[numbers.size()];
  std::copy(numbers.begin(), numbers.end(), long_);
}

std::string Version::series() const {
  std::string out;
  append_int(out, major());
  out += '.';
  append_int(out, minor());
  return out;
}

Version Version::series_version() const {
  Version v;
  v.head_[0] = major();
  v.head_[1] = minor();
  v.size_ = 2;
  return v;
}

std::string Version::str() const {
  std::string out;
  append_to(out);
  return out;
}

void Version::append_to(std::string& out) const {
  // Written on the stack and appended once: at most 32 numbers and three suffixes, each
  // number at most an int's 11 characters.
  char text[512];
  char* end = text;
  const auto number = [&](int n) { end = std::to_chars(end, text + sizeof text, n).ptr; };
  const auto literal = [&](std::string_view s) {
    end = std::copy_n(s.begin(), std::min<std::size_t>(s.size(), text + sizeof text - end), end);
  };
  for (std::size_t i = 0; i < size_; ++i) {
    if (i > 0) literal(".");
    number(part(i));
  }
  if (pre_ != Pre::kNone) {
    literal(pre_ == Pre::kA ? "a" : pre_ == Pre::kB ? "b" : "rc");
    number(pre_number_);
  }
  if (post_ != kAbsent) {
    literal(".post");
    number(post_);
  }
  if (dev_ != kAbsent) {
    literal(".dev");
    number(dev_);
  }
  out.append(text, end);
}

bool Version::has_prefix(const Version& prefix) const {
  if (prefix.size_ > size_) return false;
  for (std::size_t i = 0; i < prefix.size_; ++i) {
    if (prefix.part(i) != part(i)) return false;
  }
  return true;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
  const std::span<const int> ra = a.release();
  const std::span<const int> rb = b.release();
  const std::size_t n = std::max(ra.size(), rb.size());
  for (std::size_t i = 0; i < n; ++i) {
    const int pa = i < ra.size() ? ra[i] : 0;
    const int pb = i < rb.size() ? rb[i] : 0;
    if (pa != pb) return pa <=> pb;
  }
  // Plain releases, nearly every version compared, need nothing more.
  const auto plain = [](const Version& v) {
    return v.pre_ == Version::Pre::kNone && v.post_ == Version::kAbsent && v.dev_ == Version::kAbsent;
  };
  if (plain(a) && plain(b)) return std::strong_ordering::equal;
  const auto key = [](const Version& v) {
    const bool has_dev = v.dev_ != Version::kAbsent;
    return std::make_tuple(pre_key(static_cast<int>(v.pre_), v.pre_number_, has_dev, v.post_ != Version::kAbsent),
                           v.post_, has_dev ? v.dev_ : INT_MAX);
  };
  return key(a) <=> key(b);
}

}  // namespace fabuild
