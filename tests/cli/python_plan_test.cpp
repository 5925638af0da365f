// The plan looks for each host cell's interpreter as a build will, and says what it found or
// why there is none: a free-threaded cell (cp313t) takes only a free-threaded 3.13 (the
// interpreter's own Py_GIL_DISABLED, as it prints it), whatever its file is called.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>

#include "run_binary.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A "python3.13t" on PATH that answers fabuild's probe as `says` does (its version line).
fs::path fake_python(const fs::path& dir, const std::string& says) {
  fs::create_directories(dir);
  const fs::path exe = dir / "python3.13t";
  std::ofstream(exe) << "#!/bin/sh\necho " << says << "\necho " << exe.string() << "\n";
  ::chmod(exe.c_str(), 0755);
  return exe;
}

test::Result plan_with(const fs::path& bin) {
  const fs::path root = fs::temp_directory_path() / ("fabuild-pyplan-" + std::to_string(::getpid()));
  const fs::path matrix = root / "m.yaml";
  fs::create_directories(root);
  std::ofstream(matrix) << "package: flash-example\nversions: [\"0.1.0\"]\ntorch: [\"2.11\"]\ncuda: [\"13.0\"]\n"
                           "python: [cp313t]\nprovision: host\nsource: {path: .}\n";
  const test::Background bg = test::spawn_fabuild({matrix.string(), "--dry-run"}, root.string(),
                                                  {"PATH=" + bin.string() + ":/usr/bin:/bin", "HOME=" + root.string()});
  test::Result r = test::wait_fabuild(bg, std::chrono::minutes(1));
  fs::remove_all(root);
  return r;
}

TEST(PythonPlan, AFreeThreadedCellTakesOnlyAFreeThreadedInterpreter) {
  const fs::path bin = fs::temp_directory_path() / ("fabuild-pyplan-bin-" + std::to_string(::getpid()));
  const fs::path exe = fake_python(bin, "3.13");  // a python3.13t that is not free-threaded
  const test::Result wrong = plan_with(bin);
  EXPECT_EQ(wrong.code, 0) << wrong.err;
  EXPECT_THAT(wrong.out, HasSubstr("python:     3.13t: none: no Python 3.13t on this host (tried " + exe.string() +
                                   " (PATH): python 3.13"));
  EXPECT_THAT(wrong.out, HasSubstr("`uv python install 3.13t`"));
  fake_python(bin, "3.13t");
  const test::Result right = plan_with(bin);
  EXPECT_THAT(right.out, HasSubstr("python:     3.13t: " + exe.string() + "\n"));
  fs::remove_all(bin);
}

}  // namespace
}  // namespace fabuild
