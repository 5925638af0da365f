// What a build undoes or finishes when the run before it was killed (app/recovery.h), on real
// processes and files: orphaned cell processes of this wheelhouse are killed (those of another
// wheelhouse are not), staging directories and interrupted temporary files are removed, and a
// journalled filing is finished; and through fake files, what is left when a removal fails.

#include "app/recovery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "../support/fake_files.h"
#include "../support/scratch_dir.h"
#include "../support/wheel_writer.h"
#include "util/hash.h"
#include "util/processes.h"
#include "wheel/filing.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

// `sleep 30` with FABUILD_OUT_DIR=out_dir, as a cell's process (or its descendant) has it.
pid_t spawn_sleeper(const std::string& out_dir) {
  std::string env_entry = "FABUILD_OUT_DIR=" + out_dir;
  char* envp[] = {env_entry.data(), nullptr};
  std::string a0 = "/bin/sleep", a1 = "30";
  char* argv[] = {a0.data(), a1.data(), nullptr};
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own group, as cells have
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, &attr, argv, envp), 0);
  posix_spawnattr_destroy(&attr);
  return pid;
}

// Reaps `pid` if it ended within `limit`; false if it is still running.
bool ended(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(Recovery, KillsOrphanedCellsOfThisWheelhouseOnly) {
  test::ScratchDir dir("fabuild-recovery");
  RealFiles files;
  const fs::path house = dir.path() / "wh";
  const fs::path staging = fs::absolute(house / ".staging" / "cell-a");
  fs::create_directories(staging);
  const pid_t orphan = spawn_sleeper(staging.string());
  const pid_t stranger = spawn_sleeper((dir.path() / "other-wh/.staging/cell-a").string());
  const pid_t lookalike = spawn_sleeper((dir.path() / "wh2/.staging/cell-a").string());  // a prefix, not inside
  std::this_thread::sleep_for(100ms);  // let exec replace the environment

  const Recovery r = recover_wheelhouse(files, kill_processes_with_environment, house);
  EXPECT_EQ(r.killed, std::vector<long>{orphan});
  EXPECT_TRUE(ended(orphan, 2000ms)) << "the orphan is still running";
  EXPECT_FALSE(ended(stranger, 200ms)) << "a process of another wheelhouse was killed";
  EXPECT_FALSE(ended(lookalike, 200ms)) << "a process of a wheelhouse whose name merely starts the same was killed";
  EXPECT_THAT(r.describe(), HasSubstr("killed 1 leftover cell process"));
  for (pid_t pid : {stranger, lookalike}) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
}

TEST(Recovery, RemovesStagingAndInterruptedTemporaryFilesOnly) {
  test::ScratchDir dir("fabuild-recovery");
  RealFiles files;
  const fs::path house = dir.path() / "wh";
  const fs::path wheels = house / "fa2.8.3/torch2.8/cu128";
  fs::create_directories(house / ".staging/cell-a/src");
  fs::create_directories(house / ".staging/env-cp312");
  fs::create_directories(wheels);
  std::ofstream(house / ".staging/cell-a/partial.whl") << "half a zip";
  std::ofstream(wheels / ".SHA256SUMS.tmp.Ab3dE9") << "half a list";
  std::ofstream(house / ".manifest.json.tmp.zZ09aB") << "{";
  std::ofstream(wheels / "SHA256SUMS") << "kept\n";
  std::ofstream(wheels / ".notes.tmp") << "kept: not an interrupted write";
  fs::create_directories(house / "logs");
  std::ofstream(house / "logs/.x.tmp.abcdef") << "logs are not touched";

  const Recovery r = recover_wheelhouse(files, kill_processes_with_environment, house);
  EXPECT_EQ(r.staging_removed, 2);
  EXPECT_EQ(r.temp_files_removed, 2);
  EXPECT_FALSE(fs::exists(house / ".staging"));
  EXPECT_FALSE(fs::exists(wheels / ".SHA256SUMS.tmp.Ab3dE9"));
  EXPECT_FALSE(fs::exists(house / ".manifest.json.tmp.zZ09aB"));
  EXPECT_TRUE(fs::exists(wheels / "SHA256SUMS"));
  EXPECT_TRUE(fs::exists(wheels / ".notes.tmp"));
  EXPECT_TRUE(fs::exists(house / "logs/.x.tmp.abcdef"));
  EXPECT_THAT(r.describe(), HasSubstr("removed 2 staging directories; removed 2 unfinished temporary files"));
}

TEST(Recovery, FinishesAJournalledFiling) {
  test::ScratchDir dir("fabuild-recovery");
  RealFiles files;
  const fs::path house = dir.path() / "wh";
  const fs::path wheels = house / "fa2.8.3/torch2.8/cu128";
  const std::string cell = "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64";
  const fs::path wheel = test::TestWheel{}.write(dir.path());
  FiledWheel e;
  e.wheel = "fa2.8.3/torch2.8/cu128/" + wheel.filename().string();
  e.sha256 = hex(sha256_of_file(wheel).value());
  e.size = fs::file_size(wheel);
  EXPECT_TRUE(record_filed(house / kFilingJournalDir / cell, cell, e));
  fs::create_directories(wheels);
  fs::rename(wheel, wheels / wheel.filename());  // killed right after the move

  const Recovery r = recover_wheelhouse(files, kill_processes_with_environment, house);
  EXPECT_EQ(r.filings_finished, std::vector<std::string>{cell});
  EXPECT_EQ(find_filed(house, cell), e);
  std::ifstream sums(wheels / kSha256SumsName);
  std::string line;
  std::getline(sums, line);
  EXPECT_EQ(line, e.sha256 + "  " + wheel.filename().string());
  EXPECT_TRUE(Recovery{}.empty());
  EXPECT_FALSE(r.empty());
}

TEST(Recovery, AStagingDirectoryThatCannotBeRemovedIsLeftAndNotCounted) {
  test::FakeFiles files;
  files.add_file("/wh/.staging/cell-a/partial.whl", "half a zip");
  files.add_directory("/wh/.staging/env-cp312");
  files.add_file("/wh/fa2.8.3/.SHA256SUMS.tmp.Ab3dE9", "half a list");
  files.add_file("/wh/fa2.8.3/SHA256SUMS", "kept\n");
  files.fail_on(test::FileOp::kRemoveAll, "/wh/.staging/cell-a");
  std::vector<std::string> asked;  // the processes it ended: none here, and none of this machine's
  const KillTagged kill = [&asked](const std::string& name, const std::string& prefix) {
    asked.push_back(name + "=" + prefix);
    return std::vector<long>{4242};
  };
  const Recovery r = recover_wheelhouse(files, kill, "/wh");
  EXPECT_EQ(asked, std::vector<std::string>{"FABUILD_OUT_DIR=/wh/.staging/"});
  EXPECT_EQ(r.killed, std::vector<long>{4242});
  EXPECT_EQ(r.staging_removed, 1);
  EXPECT_FALSE(files.exists("/wh/.staging/env-cp312"));
  EXPECT_EQ(files.file("/wh/.staging/cell-a/partial.whl"), "half a zip") << "left for the next run";
  EXPECT_EQ(r.temp_files_removed, 1);
  EXPECT_FALSE(files.exists("/wh/fa2.8.3/.SHA256SUMS.tmp.Ab3dE9"));
  EXPECT_TRUE(files.exists("/wh/fa2.8.3/SHA256SUMS"));
}

}  // namespace
}  // namespace fabuild
