// A compile's peak memory is what its processes hold at once (objcache/tree_memory.h): a
// stand-in "compiler" that runs two memory-holding children side by side, through the wrapper's
// own run_captured.

#include "objcache/tree_memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "../support/scratch_dir.h"
#include "objcache/spawn.h"
#include "util/processes.h"

namespace fabuild::objcache {
namespace {

// Each child holds this many MiB, written (so resident), for a second.
constexpr int kHoldMb = 120;

std::string holder() {
  return "python3 -c 'import time; b = bytes(range(256)) * (" + std::to_string(kHoldMb) + " * 4096); time.sleep(1.0)'";
}

TEST(TreeMemory, TwoChildrenAtOnceCountTogether) {
  fabuild::test::ScratchDir scratch("objcache-tree-memory");
  const Captured c =
      run_captured("/bin/sh", {"sh", "-c", holder() + " & " + holder() + " & wait"}, scratch.path() / "run");
  ASSERT_TRUE(c.ok()) << c.err;
  // ru_maxrss alone says one child (about kHoldMb); both at once are twice that.
  EXPECT_GE(c.peak_kb / 1024, 2 * kHoldMb - 10) << "peak " << c.peak_kb << " kB";
  EXPECT_LE(c.peak_kb / 1024, 2 * kHoldMb + 200) << "peak " << c.peak_kb << " kB";
}

TEST(TreeMemory, ChildrenOneAfterAnotherCountOnce) {
  fabuild::test::ScratchDir scratch("objcache-tree-memory");
  const Captured c = run_captured("/bin/sh", {"sh", "-c", holder() + "; " + holder()}, scratch.path() / "run");
  ASSERT_TRUE(c.ok()) << c.err;
  EXPECT_GE(c.peak_kb / 1024, kHoldMb - 10) << "peak " << c.peak_kb << " kB";
  EXPECT_LT(c.peak_kb / 1024, 2 * kHoldMb - 10) << "peak " << c.peak_kb << " kB";
}

TEST(TreeMemory, ADeadProcessHoldsNothing) {
  EXPECT_EQ(resident_kb_with_descendants(-1), 0U);
  EXPECT_GT(resident_kb_with_descendants(::getpid()), 0U);  // this test, at least
}

}  // namespace
}  // namespace fabuild::objcache
