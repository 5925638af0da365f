// A CI job's setup, measured from FABUILD_JOB_STARTED to its first compile
// (costs/job_setup.h).

#include "costs/job_setup.h"

#include <gtest/gtest.h>

namespace fabuild {
namespace {

TEST(JobSetup, TheVariableIsSecondsSince1970BeforeNowAndWithinAWeek) {
  constexpr std::int64_t kNow = 1'795'000'000;
  EXPECT_DOUBLE_EQ(*job_elapsed_since("1794999400", kNow), 600);
  EXPECT_DOUBLE_EQ(*job_elapsed_since("1795000000", kNow), 0);
  const auto words = job_elapsed_since("2026-11-27T10:00:00Z", kNow);
  ASSERT_FALSE(words);
  EXPECT_EQ(words.error().what, "FABUILD_JOB_STARTED=2026-11-27T10:00:00Z is not seconds since 1970");
  EXPECT_EQ(words.error().hint, "set it to the job's start in seconds since 1970 (date +%s), or unset it");
  EXPECT_FALSE(job_elapsed_since("", kNow));
  EXPECT_FALSE(job_elapsed_since("17950 ", kNow));
  const auto later = job_elapsed_since("1795000060", kNow);
  ASSERT_FALSE(later);
  EXPECT_EQ(later.error().what, "FABUILD_JOB_STARTED=1795000060 is 60 seconds after now, not a CI job's start");
  EXPECT_FALSE(job_elapsed_since("1794000000", kNow));  // 11.6 days before
}

// The job's first compile ends its setup, which goes once into the record of each row that
// compiled; outside a CI job nothing is measured.
TEST(JobSetup, TheJobsFirstCompileIsTheSetupOfEachRowItBuilds) {
  double now = 100;
  JobSetups setups([&now]() -> std::optional<double> { return now; });
  EXPECT_FALSE(setups.take("row-a"));  // no compile yet
  setups.compile_starts("row-a");
  now = 400;
  setups.compile_starts("row-a");  // a later tag of the row
  setups.compile_starts("row-b");  // a shard's next row: its wait was row-a's build
  EXPECT_DOUBLE_EQ(*setups.take("row-a"), 100);
  EXPECT_FALSE(setups.take("row-a"));
  EXPECT_DOUBLE_EQ(*setups.take("row-b"), 100);
  EXPECT_FALSE(setups.take("row-c"));  // it never compiled
  JobSetups local({});
  local.compile_starts("row-a");
  EXPECT_FALSE(local.take("row-a"));
}

}  // namespace
}  // namespace fabuild
