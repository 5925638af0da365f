#include <windows.h>

#include <gtest/gtest.h>

#include "util/environment.h"
#include "util/host_info.h"
#include "util/processes.h"
#include "util/resources.h"

// Windows' answers to util's questions about this machine and its environment.
namespace fabuild {
namespace {

TEST(WindowsEnvironment, NamesKnowNoCaseAndPathListsUseSemicolons) {
  Environment env{{"Path", "C:\\a;C:\\b"}};
  EXPECT_EQ(env.value("PATH"), "C:\\a;C:\\b");
  env.set("PATH", "C:\\c");
  EXPECT_EQ(env.list().size(), 1U);
  EXPECT_EQ(env.list()[0].first, "Path");  // the first spelling stays
  EXPECT_EQ(Environment::kPathSeparator, ';');
}

TEST(WindowsEnvironment, ThisProcesssEnvironmentIsReadAsUtf8) {
  ASSERT_TRUE(SetEnvironmentVariableW(L"FABUILD_TEST_\u00dc", L"\u20ac \u00e9"));
  EXPECT_EQ(Environment::of_this_process().value("fabuild_test_\u00fc"), "\u20ac \u00e9");
}

TEST(WindowsHost, ResourcesComeFromTheSystem) {
  const Resources r = detect_resources();
  EXPECT_GE(r.cores, 1.0);
  EXPECT_GT(r.memory_gb, 0.0);
  EXPECT_EQ(r.cores_from, "GetActiveProcessorCount");
  EXPECT_EQ(r.memory_from, "GlobalMemoryStatusEx");
}

TEST(WindowsHost, ThisProcessIsAliveAndAMadeUpOneIsNot) {
  EXPECT_TRUE(process_alive(current_pid()));
  EXPECT_FALSE(process_alive(0x7FFFFFF0));
  EXPECT_EQ(host_platform_tag(), "win_amd64");
  EXPECT_NE(host_name(), "?");
}

}  // namespace
}  // namespace fabuild
