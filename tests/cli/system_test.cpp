// The real System's remote (cli/system.h): one per address for the whole run, behind one guard,
// so that a remote that failed while the plan read its records costs the build nothing more.

#include "cli/system.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "remote/guard.h"

namespace fabuild {
namespace {

using ::testing::HasSubstr;

TEST(RealSystem, ARemoteIsOpenedOncePerAddressAndItsFailuresCountForTheWholeRun) {
  const System system = real_system();
  const std::string url = "http://127.0.0.1:9/cache";  // the discard port: nothing listens, every request fails
  auto plan_side = system.open_remote(url, "");
  auto build_side = system.open_remote(url, "");
  ASSERT_TRUE(plan_side && build_side);
  EXPECT_EQ(plan_side->get(), build_side->get());
  auto other = system.open_remote(url, "another token");
  ASSERT_TRUE(other);
  EXPECT_NE(other->get(), plan_side->get());
  for (int i = 0; i < 3; ++i) EXPECT_FALSE((*plan_side)->get("ac/row"));
  const auto after = (*build_side)->get("ac/row");
  ASSERT_FALSE(after);
  EXPECT_TRUE(remote::is_dropped_note(after.error().what)) << after.error().what;
  EXPECT_THAT(after.error().what, HasSubstr("3 requests failed"));
}

}  // namespace
}  // namespace fabuild
