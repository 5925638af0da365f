// `fabuild model`: the cost model on JSON through the real binary, as bench/release_sim.py asks it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "../support/scratch_dir.h"
#include "run_binary.h"

namespace fabuild {
namespace {

using test::run_fabuild;
using ::testing::HasSubstr;

std::string write(const test::ScratchDir& dir, const std::string& name, const std::string& text) {
  const auto path = dir.path() / name;
  std::ofstream(path) << text;
  return path.string();
}

TEST(ModelCommand, AnswersARequestFileAsOneLineOfJson) {
  const test::ScratchDir dir("model");
  const auto r = run_fabuild({"model", write(dir, "r.json", R"([{"op": "schedule", "seconds": [5, 4, 3], "slots": 2},
      {"op": "split", "costs": {"a.cu": 2, "b.cu": 1}, "shares": 2}])")});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto answer = nlohmann::json::parse(r.out);
  EXPECT_EQ(answer[0]["seconds"], 7.0);
  EXPECT_EQ(answer[1]["shares"], nlohmann::json::parse(R"([["a.cu"], ["b.cu"]])"));
  EXPECT_THAT(run_fabuild({"--help"}).out, HasSubstr("fabuild model [FILE]"));
}

TEST(ModelCommand, ARequestThatIsNotOneIsExit2AndSaysWhy) {
  const test::ScratchDir dir("model");
  auto r = run_fabuild({"model", write(dir, "bad.json", "{not json")});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("not JSON"));
  r = run_fabuild({"model", write(dir, "op.json", R"({"op": "gate", "units": [], "slots": 1})")});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("fabuild: error: model: \"budget_mb\" is missing"));
  EXPECT_EQ(run_fabuild({"model", (dir.path() / "missing.json").string()}).code, 2);
}

}  // namespace
}  // namespace fabuild
