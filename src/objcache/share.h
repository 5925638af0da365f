#pragma once

// A compile share (docs/ci.md, "Compile shares"): in a CI job that compiles the K-th of N shares
// of a row's kernel units, fabuild-cc compiles only the units of its share. For every other unit
// it writes a placeholder object, so that the build goes on to its link: a tiny object marked
// as such (kPlaceholderMark), never stored in any cache. The job files no wheel; the row's
// finishing job takes every share's real objects from the remote cache.
//
// fabuild writes the split, the same on every runner, into a file that wrapper_env::kShare (protocol.h) names:
//
//   fabuild compile share 1
//   share 3/8
//   <k>\t<absolute source path>      one line per unit fabuild knows, k in 1..8
//
// A unit the file does not list (not a kernel unit: FlashAttention's API file, which includes
// Python's headers and is compiled per Python tag anyway) is left to the row's finishing job:
// every share stands in for it.

#include <map>
#include <optional>
#include <string>

namespace fabuild::objcache {

inline constexpr const char* kPlaceholderMark = "fabuild-cc placeholder object: compiled by another share";

struct ShareSplit {
  int index = 1;  // 1-based
  int count = 1;
  std::map<std::string, int> unit_share;  // absolute source path -> its share

  // The share that compiles `source` (an absolute path); 0: none, the finishing job does.
  [[nodiscard]] int share_of(const std::string& source) const;
  [[nodiscard]] bool mine(const std::string& source) const { return share_of(source) == index; }
};

// The text of a share file, and back. parse: nullopt when it is not one.
std::string write_share_file(const ShareSplit& split);
std::optional<ShareSplit> parse_share_file(const std::string& text);

}  // namespace fabuild::objcache
