// The corpus of malformed matrices (tests/data/bad-matrices/*.yaml): the real fabuild refuses
// each with exit code 2 and exactly the error its first line promises:
//
//   # expect: NAME.yaml:5:8: '2.x' is not a torch series, version or range   <- after "fabuild: error: "
//   # hint: write a series like 2.8 (quoted or not) or a pin like 2.8.0  <- after "  hint: "
//
// (a hint ending in "..." is matched as a prefix, for lists that grow with fabuild). Syntax
// errors, wrong shapes, values out of range, and hostile documents: alias bombs, deep nesting,
// control characters (shown escaped, never raw), invalid UTF-8, a second YAML document.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/scratch_dir.h"
#include "run_binary.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::StartsWith;

const fs::path kCorpus = fs::path(FABUILD_SOURCE_DIR) / "tests/data/bad-matrices";
constexpr std::string_view kExpect = "# expect: ";
constexpr std::string_view kHint = "# hint: ";

std::vector<std::string> corpus() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kCorpus)) {
    if (e.path().extension() == ".yaml") names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

class BadMatrix : public ::testing::TestWithParam<std::string> {};

TEST_P(BadMatrix, IsRefusedWithItsExpectedErrorAndExit2) {
  const std::string name = GetParam();
  const std::string text = test::ScratchDir::read(kCorpus / name);
  const std::string head = first_line(text);
  const std::string hint_line = first_line(text.substr(head.size() + 1));
  ASSERT_THAT(head, StartsWith(std::string(kExpect))) << name << " must start with an \"# expect: \" line";
  ASSERT_THAT(hint_line, StartsWith(std::string(kHint))) << name << ": the second line is \"# hint: \"";
  const std::string expected = "fabuild: error: " + head.substr(kExpect.size());
  std::string expected_hint = "  hint: " + hint_line.substr(kHint.size());
  const bool hint_prefix = expected_hint.ends_with("...");
  if (hint_prefix) expected_hint.resize(expected_hint.size() - 3);

  const auto started = std::chrono::steady_clock::now();
  // --dry-run: should one ever load, it plans and builds nothing.
  const auto r = test::run_fabuild({name, "--dry-run"}, kCorpus.string());
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_EQ(first_line(r.err), expected);
  const std::string hint = first_line(r.err.substr(std::min(r.err.size(), r.err.find('\n') + 1)));
  if (hint_prefix) {
    EXPECT_THAT(hint, StartsWith(expected_hint)) << "every refusal says what to do";
  } else {
    EXPECT_EQ(hint, expected_hint) << "every refusal says what to do";
  }
  EXPECT_EQ(r.out, "") << "nothing is planned from a refused matrix";
  EXPECT_LT(took, std::chrono::seconds(20)) << "refusing a matrix never takes long, however hostile";
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadMatrix, ::testing::ValuesIn(corpus()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string id = info.param.substr(0, info.param.size() - 5);
                           std::replace(id.begin(), id.end(), '-', '_');
                           return id;
                         });

TEST(BadMatrixCorpus, HasAtLeastFiftyCases) { EXPECT_GE(corpus().size(), 50u); }

// Too big to keep in the repository: a 5 MiB matrix is refused before YAML sees it.
TEST(BadMatrixCorpus, HugeFileIsRefusedUnread) {
  test::ScratchDir dir("fabuild-bad-matrix");
  const fs::path file = dir.path() / "huge.yaml";
  {
    std::ofstream out(file);
    out << "versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\nenv:\n";
    for (int i = 0; out.tellp() < (5 << 20); ++i) out << "  V" << i << ": \"" << std::string(100, 'x') << "\"\n";
  }
  const auto r = test::run_fabuild({"huge.yaml", "--dry-run"}, dir.path().string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(first_line(r.err), "fabuild: error: huge.yaml: the matrix file is larger than 4 MiB");
}

}  // namespace
}  // namespace fabuild
