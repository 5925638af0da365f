#pragma once

#include <gtest/gtest.h>

#include <string>

#include "matrix/expand.h"
#include "matrix/loader.h"

namespace fabuild::test {

// A valid matrix to start tests from; line numbers matter to the error tests.
inline const char* kBase =
    "package: flash-attn\n"         // 1
    "versions: [\"2.8.3\"]\n"       // 2
    "torch: [\"2.7\", \"2.8\"]\n"   // 3
    "cuda: [\"12.6\", \"12.8\"]\n"  // 4
    "python: [cp311, cp312]\n";     // 5

inline MatrixSpec spec_of(const std::string& yaml) { return parse_matrix(yaml, "m.yaml"); }
// Expanded as if torch came from an index with every build of the tables (torch_index): the
// tests of other rules need not say one; Rules.PipIndexHasPypiBuildsOnly tests that rule.
inline Expansion expand_yaml(const std::string& yaml, const ExpandOptions& options = {}) {
  MatrixSpec spec = spec_of(yaml);
  if (spec.torch_index.empty()) spec.torch_index = "https://torch-index.invalid/whl";
  return expand(spec, options);
}

inline std::vector<std::string> ids(const std::vector<Cell>& cells) {
  std::vector<std::string> out;
  for (const auto& c : cells) out.push_back(c.id());
  return out;
}

// The error a matrix gives, as main prints it (without the "fabuild: error: " prefix).
struct ErrorText {
  std::string message;  // "m.yaml:3:7: ..."
  std::string hint;
  int code = 0;
};
inline ErrorText error_of(const std::string& yaml, const ExpandOptions& options = {}) {
  try {
    expand(parse_matrix(yaml, "m.yaml"), options);
  } catch (const UserError& e) {
    return {e.what(), e.hint(), e.code()};
  }
  ADD_FAILURE() << "no error for:\n" << yaml;
  return {};
}

}  // namespace fabuild::test
