#include "util/resources.h"

#include <gtest/gtest.h>

#include <fstream>

#include "../support/scratch_dir.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;

class Machine : public ::testing::Test {
 protected:
  void SetUp() override {
    write("proc/self/cgroup", "0::/build.slice\n");
    write("proc/meminfo", "MemTotal:       65536000 kB\nMemAvailable:   33554432 kB\n");
  }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  }
  test::ScratchDir scratch{"fabuild-res"};
  fs::path root = scratch.path();
};

TEST_F(Machine, MemAvailableWithoutCgroupLimit) {
  const Resources r = detect_resources(root);
  EXPECT_DOUBLE_EQ(r.memory_gb, 32.0);
  EXPECT_EQ(r.memory_from, "MemAvailable");
}

TEST_F(Machine, CgroupMemoryLimitWins) {
  write("sys/fs/cgroup/build.slice/memory.max", "17179869184\n");     // 16 GiB
  write("sys/fs/cgroup/build.slice/memory.current", "4294967296\n");  // 4 GiB used
  const Resources r = detect_resources(root);
  EXPECT_DOUBLE_EQ(r.memory_gb, 12.0);
  EXPECT_EQ(r.memory_from, "cgroup memory.max");
}

TEST_F(Machine, CgroupCpuQuota) {
  write("sys/fs/cgroup/build.slice/cpu.max", "150000 100000\n");
  const Resources r = detect_resources(root);
  EXPECT_DOUBLE_EQ(r.cores, 1.5);
  EXPECT_EQ(r.cores_from, "cgroup cpu.max");
}

TEST_F(Machine, UnlimitedCgroupFallsBack) {
  write("sys/fs/cgroup/build.slice/cpu.max", "max 100000\n");
  write("sys/fs/cgroup/build.slice/memory.max", "max\n");
  const Resources r = detect_resources(root);
  EXPECT_EQ(r.cores_from, "cpu affinity");
  EXPECT_EQ(r.memory_from, "MemAvailable");
}

// A runner confined through cgroup v1 (tests/e2e/ci_jobs.sh's jobs on a host without the unified
// hierarchy): its memory controller's limit, less what it uses.
TEST_F(Machine, CgroupV1MemoryLimitWhereThereIsNoV2One) {
  write("proc/self/cgroup", "4:memory:/fabuild-job-1\n3:cpuset:/fabuild-job-1\n0::/\n");
  write("sys/fs/cgroup/memory/fabuild-job-1/memory.limit_in_bytes", "8589934592\n");  // 8 GiB
  write("sys/fs/cgroup/memory/fabuild-job-1/memory.usage_in_bytes", "1073741824\n");  // 1 GiB used
  Resources r = detect_resources(root);
  EXPECT_DOUBLE_EQ(r.memory_gb, 7.0);
  EXPECT_EQ(r.memory_from, "cgroup v1 memory.limit_in_bytes");
  write("sys/fs/cgroup/memory/fabuild-job-1/memory.limit_in_bytes", "9223372036854771712\n");  // none
  r = detect_resources(root);
  EXPECT_EQ(r.memory_from, "MemAvailable");
}

}  // namespace
}  // namespace fabuild
