#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fabuild {

// A release version as packages spell it: "2.8.3", "2.8", "2.8.0.post2", "2.9.0rc1", "2.10".
// The subset of PEP 440 that FlashAttention, torch and CUDA versions use; no epochs or locals.
class Version {
 public:
  Version() = default;
  // Inline: a plan copies versions by the hundred thousand, nearly all of them short.
  Version(const Version& other)
      : size_(other.size_), pre_(other.pre_), pre_number_(other.pre_number_), post_(other.post_), dev_(other.dev_) {
    if (size_ > kInline) {
      copy_long(other.release());
    } else {
      head_ = other.head_;
    }
  }
  Version(Version&& other) noexcept;
  Version& operator=(const Version& other);
  Version& operator=(Version&& other) noexcept;
  ~Version() { free_long(); }

  // nullopt when `text` is not such a version.
  static std::optional<Version> parse(std::string_view text);

  [[nodiscard]] std::span<const int> release() const { return {size_ <= kInline ? head_.data() : long_, size_}; }
  [[nodiscard]] int major() const { return part(0); }
  [[nodiscard]] int minor() const { return part(1); }
  [[nodiscard]] int part(std::size_t i) const { return i < size_ ? release()[i] : 0; }
  // "2.8" of "2.8.3".
  [[nodiscard]] std::string series() const;
  // The same as a Version: what Version::parse(series()) gives, without the text.
  [[nodiscard]] Version series_version() const;
  // The canonical spelling ("2.8.0.post2", "2.9.0rc1").
  [[nodiscard]] std::string str() const;
  // The same appended to `out`, for ids and paths spelled by the hundred thousand.
  void append_to(std::string& out) const;
  // True when every release number of `prefix` equals ours: "2.8" is a prefix of "2.8.3".
  [[nodiscard]] bool has_prefix(const Version& prefix) const;

  // PEP 440 order: 2.8 == 2.8.0; dev < a < b < rc < final < post.
  friend std::strong_ordering operator<=>(const Version& a, const Version& b);
  friend bool operator==(const Version& a, const Version& b) { return (a <=> b) == 0; }

 private:
  enum class Pre : std::uint8_t { kNone, kA, kB, kRc };
  static constexpr int kAbsent = -1;  // post_, dev_: the version has none
  static constexpr std::size_t kInline = 4;

  void set_release(std::span<const int> numbers);
  // With size_ > kInline: long_ becomes a copy of `numbers`, which are as many as size_ says.
  void copy_long(std::span<const int> numbers);
  void free_long() noexcept {
    if (size_ > kInline) delete[] long_;
  }

  // A plan of 100 000 cells holds and copies several versions a cell: this is 32 bytes, and a
  // copy allocates nothing unless the release has more than kInline numbers. Those are all in
  // long_ then, which this version owns; size_ says which member of the union is in use.
  union {
    std::array<int, kInline> head_{};
    int* long_;
  };
  std::uint8_t size_ = 0;  // release numbers: at most 32 in the 64 characters parse takes
  Pre pre_ = Pre::kNone;
  int pre_number_ = 0;
  int post_ = kAbsent;
  int dev_ = kAbsent;
};

}  // namespace fabuild
