// How busy the machine was while a compile ran (objcache/spawn.h's host_cpu, busy_between): what
// the row's record keeps so that a plan knows how loaded its costs' machine was
// (costs/contention.h).

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "../support/scratch_dir.h"
#include "objcache/spawn.h"

namespace fabuild::objcache {
namespace {

TEST(HostCpu, TwoReadingsSayTheShareOfTimeTheProcessorsWereBusy) {
  EXPECT_DOUBLE_EQ(*busy_between(HostCpu{100, 1000}, HostCpu{150, 1100}), 0.5);
  EXPECT_DOUBLE_EQ(*busy_between(HostCpu{100, 1000}, HostCpu{300, 1100}), 1.0) << "never past every processor";
  EXPECT_FALSE(busy_between(HostCpu{100, 1000}, HostCpu{150, 1000})) << "no time between them";
  EXPECT_FALSE(busy_between(HostCpu{100, 1000}, HostCpu{90, 1100})) << "a counter that went back";
  EXPECT_FALSE(busy_between(std::nullopt, HostCpu{150, 1100}));
}

TEST(HostCpu, TheSystemSaysItAndACompileThatKeepsEveryProcessorBusyIsMeasuredSo) {
  const auto now = host_cpu();
  ASSERT_TRUE(now.has_value());
  EXPECT_LE(now->busy, now->total);
  // One busy loop a processor, for half a second: the machine is busy nearly all of that time.
  const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  const std::string loop = "e=$(($(date +%s%N)+500000000)); while [ $(date +%s%N) -lt $e ]; do :; done";
  std::string script;
  for (unsigned i = 0; i < n; ++i) script += "(" + loop + ") & ";
  fabuild::test::ScratchDir scratch("objcache-host-cpu");
  const Captured c = run_captured("/bin/sh", {"sh", "-c", script + "wait"}, scratch.path() / "run");
  ASSERT_TRUE(c.ok()) << c.err;
  ASSERT_TRUE(c.host_busy.has_value());
  EXPECT_GT(*c.host_busy, 0.5) << "every processor was kept busy";
  EXPECT_LE(*c.host_busy, 1.0);
}

}  // namespace
}  // namespace fabuild::objcache
