// --ci-matrix in a run that may not write the remote cache (a pull request's): a compile share
// exists to send its objects there and such a run refuses one (exit 2), so the plan builds each
// row whole in one job and says why; a trusted run splits the same row.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>
#include <string>

#include "app/ci_matrix.h"
#include "plan_fixture.h"

namespace fabuild {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Printed {
  nlohmann::json jobs;
  std::string said;  // what it logged
};

class CiReadOnly : public AppPlan {
 protected:
  Printed ci_matrix(const std::string& event) {
    system_.env.set("GITHUB_ACTIONS", "true");
    system_.env.set("GITHUB_EVENT_NAME", event);
    Options o;
    o.matrix = matrix_.string();
    o.output_dir = (root_ / "wheelhouse").string();
    o.ci_matrix = "github";
    std::ostringstream out;
    std::ostringstream said;
    const auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(said);
    spdlog::default_logger()->sinks().push_back(sink);
    const ExitCode code = print_ci_matrix(o, out, system_, [](const auto&, const auto&, const auto&) {
      return CiCosts{};  // nothing recorded: every row timed by the guess
    });
    spdlog::default_logger()->sinks().pop_back();
    EXPECT_EQ(code, kExitOk);
    return {nlohmann::json::parse(out.str()), said.str()};
  }
};

std::vector<std::string> stages(const nlohmann::json& jobs) {
  std::vector<std::string> out;
  for (const auto& j : jobs["include"]) out.push_back(j["stage"].get<std::string>());
  return out;
}

TEST_F(CiReadOnly, APullRequestsPlanBuildsEachRowWholeAndSaysWhy) {
  write_matrix("python: [cp311, cp312]\nci: {compile_shares: 4}\ncache: {remote: \"http://127.0.0.1:9/c\"}\n");
  const Printed trusted = ci_matrix("schedule");
  EXPECT_THAT(stages(trusted.jobs), ::testing::ElementsAre("compile", "compile", "compile", "compile", "build"))
      << "a run that writes splits the row: the check below can fail";

  const Printed pr = ci_matrix("pull_request");
  ASSERT_THAT(stages(pr.jobs), ::testing::ElementsAre("build"));
  const auto& job = pr.jobs["include"][0];
  EXPECT_EQ(job["shares"], 0);
  EXPECT_EQ(job["cells"], 2);
  EXPECT_THAT(job["args"].get<std::string>(), Not(HasSubstr("--compile-share")));
  EXPECT_THAT(pr.said, HasSubstr("no compile shares: the remote cache is read-only: untrusted, a pull_request run on "
                                 "GitHub Actions"));
  EXPECT_THAT(pr.said, HasSubstr("each row is planned whole in one job"));
  EXPECT_THAT(trusted.said, Not(HasSubstr("no compile shares")));
}

}  // namespace
}  // namespace fabuild
