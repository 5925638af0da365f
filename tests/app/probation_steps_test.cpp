// A wheel cell's handling of objects on probation (app/probation_steps.h), on a real cache in a
// scratch directory: a failure from its build on evicts them, removes the build's outputs and
// sends the cell back to `build` once; any other failure, or none on probation, does not; the
// `cache-proven` step takes what the build used off probation.

#include "app/probation_steps.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../support/scratch_dir.h"
#include "objcache/probation.h"
#include "objcache/store.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;

class ProbationSteps : public ::testing::Test {
 protected:
  void SetUp() override {
    EXPECT_TRUE(store_.prepare());
    for (char c : {'a', 'b'}) EXPECT_TRUE(store_.put_result(std::string(64, c), objcache::Result{"object", "", ""}));
    fs::create_directories(build_ / "temp");
    std::ofstream(build_ / "temp" / "k.o") << "stale";
  }
  ProbationScope scope() {
    return ProbationScope{store_.dir().string(), row_, compiles_, std::make_shared<RealFiles>(),
                          (dir_.path() / "cell.log").string()};
  }
  std::string path_of(char c) {
    return objcache::Probation(store_, row_).path_of(store_.result_path(std::string(64, c)));
  }

  test::ScratchDir dir_{"fabuild-probation"};
  objcache::Store store_{dir_.path() / "cache"};
  std::string row_ = std::string(64, 'r');
  fs::path build_ = dir_.path() / "src" / "build";
  std::shared_ptr<CellCompiles> compiles_ = std::make_shared<CellCompiles>(CacheTally{});
};

TEST_F(ProbationSteps, AFailureFromTheBuildOnEvictsAndGoesBackToBuildOnce) {
  EXPECT_TRUE(objcache::Probation(store_, row_).add({path_of('a')}));
  const auto retry = probation_retry(scope(), {"build", "archs"}, {build_});
  Facts facts;
  EXPECT_EQ(retry("check", "exit 1", facts), "");  // before the build: not the objects' doing
  EXPECT_TRUE(store_.result(std::string(64, 'a')).result.has_value());
  EXPECT_EQ(retry("archs", "sm_80 where sm_90 was asked", facts), "build");
  EXPECT_FALSE(store_.result(std::string(64, 'a')).result.has_value());
  EXPECT_TRUE(store_.result(std::string(64, 'b')).result.has_value());
  EXPECT_FALSE(fs::exists(build_));  // the next build compiles, not ninja's "no work to do"
  const auto record = nlohmann::json::parse(facts.at(kFactRemoteRetry));
  EXPECT_EQ(record["evicted"], 1);
  EXPECT_EQ(record["step"], "archs");
  std::ifstream log(dir_.path() / "cell.log");
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_NE(text.str().find("archs failed (sm_80 where sm_90 was asked) with 1 file of its row taken from the remote"),
            std::string::npos)
      << text.str();
  Facts none;
  EXPECT_EQ(retry("archs", "again", none), "");  // nothing on probation now
  EXPECT_FALSE(none.contains(kFactRemoteRetry));

  std::vector<CellOutcome> outcomes(1);
  outcomes[0].id = "cell-cp312";
  outcomes[0].result = CellResult::kOk;
  outcomes[0].facts = facts;
  std::ostringstream said;
  print_probation_retries(outcomes, said);
  EXPECT_EQ(said.str(),
            "object cache: 1 cell failed with objects taken from the remote that no build had proven; 1 file evicted "
            "from the local cache and built here: cell-cp312 (archs: ok the second time)\n");

  // Failed the second time: the step that failed then is named, not the one that sent it back.
  outcomes[0].result = CellResult::kFailed;
  for (const std::string step : {"archs", "import"}) {
    outcomes[0].step = step;
    said.str("");
    print_probation_retries(outcomes, said);
    EXPECT_NE(said.str().find(step == "archs" ? "cell-cp312 (archs: failed again)"
                                              : "cell-cp312 (archs: built again, then import failed)"),
              std::string::npos)
        << said.str();
  }
}

TEST_F(ProbationSteps, TheProvenStepTakesWhatTheBuildUsedOffProbation) {
  EXPECT_TRUE(objcache::Probation(store_, row_).add({path_of('a'), path_of('b')}));
  CacheTally tally;
  tally.objects = {{std::string(64, 'm'), std::string(64, 'a')}};
  ProbationScope s = scope();
  s.compiles = std::make_shared<CellCompiles>(tally);
  CellRun cell;
  cell.log_path = s.log_path;
  Facts facts;
  StepContext ctx{cell, facts, {}};
  ASSERT_TRUE(proven_step(s).run_inline(ctx).has_value());
  EXPECT_EQ(objcache::Probation(store_, row_).paths(), std::vector<std::string>{path_of('b')});
}

}  // namespace
}  // namespace fabuild
