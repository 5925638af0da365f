#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabuild {

// A release version as packages spell it: "2.8.3", "2.8", "2.8.0.post2", "2.9.0rc1", "2.10".
// The subset of PEP 440 that FlashAttention, torch and CUDA versions use; no epochs or locals.
class Version {
 public:
  // nullopt when `text` is not such a version.
  static std::optional<Version> parse(std::string_view text);

  [[nodiscard]] const std::vector<int>& release() const { return release_; }
  [[nodiscard]] int major() const { return part(0); }
  [[nodiscard]] int minor() const { return part(1); }
  [[nodiscard]] int part(std::size_t i) const { return i < release_.size() ? release_[i] : 0; }
  // "2.8" of "2.8.3".
  [[nodiscard]] std::string series() const;
  // The canonical spelling ("2.8.0.post2", "2.9.0rc1").
  [[nodiscard]] std::string str() const;
  // True when every release number of `prefix` equals ours: "2.8" is a prefix of "2.8.3".
  [[nodiscard]] bool has_prefix(const Version& prefix) const;

  // PEP 440 order: 2.8 == 2.8.0; dev < a < b < rc < final < post.
  friend std::strong_ordering operator<=>(const Version& a, const Version& b);
  friend bool operator==(const Version& a, const Version& b) { return (a <=> b) == 0; }

 private:
  std::vector<int> release_;
  std::string pre_label_;  // "a", "b", "rc" or empty
  int pre_number_ = 0;
  std::optional<int> post_;
  std::optional<int> dev_;
};

}  // namespace fabuild
